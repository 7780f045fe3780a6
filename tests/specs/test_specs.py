"""Spec loading: every shipped file loads; every broken one names file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from suite.cli.main import main
from suite.specs import Project, SpecErrors, load_encoding, load_grid, load_size, load_task

from tests.conftest import REPO


@pytest.mark.parametrize("path", sorted((REPO / "grids").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_grid_loads(path):
    grid = load_grid(path, Project(REPO))
    assert grid.encodings and grid.sizes and grid.tasks


@pytest.mark.parametrize("path", sorted((REPO / "sizes").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_size_loads(path):
    assert load_size(path).d_model % load_size(path).n_heads == 0


@pytest.mark.parametrize("path", sorted((REPO / "tasks").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_task_loads(path):
    assert load_task(path).name == path.stem


def errors_of(fn, *args) -> list[str]:
    with pytest.raises(SpecErrors) as info:
        fn(*args)
    return [str(e) for e in info.value.errors]


def test_unknown_key_and_param_name_file_line_and_suggestion(tmp_path):
    path = tmp_path / "encodings" / "rope2.yaml"
    path.parent.mkdir()
    path.write_text("name: rope2\ndisplay_name: R\nfamily: rotary\npaper: p\nimpl: rotary\n"
                    "params:\n  base: 10000\n  scalng: pi\ndisplay: x\n")
    scalng = (f"{path}:8: params.scalng: unknown parameter (did you mean 'scaling'?); "
              "valid: base, fraction, partial_exponent, scaling, beta_fast, beta_slow, low_freq_factor, high_freq_factor, factor")
    errs = errors_of(load_encoding, path)
    # the params are checked although another key is wrong: both in one run, in line order
    assert errs == [scalng, f"{path}:9: display: unknown key (did you mean 'display_name'?)"]
    path.write_text(path.read_text().replace("display: x\n", ""))
    assert errors_of(load_encoding, path) == [scalng]


def test_bad_param_type_and_value_are_reported_on_their_lines(tmp_path):
    path = tmp_path / "rope3.yaml"
    path.write_text("name: rope3\ndisplay_name: R\nfamily: rotary\npaper: p\nimpl: rotary\n"
                    "params:\n  base: lots\n  scaling: sideways\n")
    errs = errors_of(load_encoding, path)
    assert any(e.startswith(f"{path}:7: params.base:") for e in errs), errs
    assert any(e.startswith(f"{path}:8: params.scaling:") for e in errs), errs


def test_unknown_impl_suggests_a_registered_name(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("name: x\ndisplay_name: X\nfamily: bias\npaper: p\nimpl: alibbi\n")
    (err,) = errors_of(load_encoding, path)
    assert err.startswith(f"{path}:5: impl: unknown encoding implementation 'alibbi' (did you mean 'alibi'?)")


def test_grid_reports_every_error_at_once(project_root):
    path = project_root / "grids" / "broken.yaml"
    path.write_text("name: broken\nencodings: [rope, ropee]\nsizes: [tiny]\ntasks: [lm]\n"
                    "scales: [1, 0]\ntrain:\n  steps: -3\n  sed: 1\n")
    errs = errors_of(load_grid, path, Project(project_root))
    assert f"{path}:7: train.steps: Input should be greater than 0" in errs
    assert f"{path}:8: train.sed: unknown key (did you mean 'seed'?)" not in errs  # 'seed' is not a train key
    assert any(e.startswith(f"{path}:8: train.sed: unknown key") for e in errs)
    # every error in one run: the reference is checked although the document does not validate
    assert any(e.startswith(f"{path}:2: encodings.1: no encoding 'ropee'") for e in errs)
    # and the checks of a loaded grid run on the rest of it: the scale of 0 too (three of four before)
    assert f"{path}:5: scales.1: scales are multiples of the training length and must be >= 1" in errs and len(errs) == 4
    path.write_text("name: broken\nencodings: [rope, ropee]\nsizes: [tiny]\ntasks: [lm]\nscales: [1, 0]\n")
    errs = errors_of(load_grid, path, Project(project_root))
    assert any(e.startswith(f"{path}:2: encodings.1: no encoding 'ropee'") and "did you mean 'rope'" in e for e in errs), errs
    assert any(e.startswith(f"{path}:5: scales.1:") for e in errs), errs


def test_task_recipes_name_a_generated_task_of_the_grid_and_valid_fields(project_root):
    path = project_root / "grids" / "recipes.yaml"
    path.write_text("name: recipes\nencodings: [rope]\nsizes: [tiny]\ntasks: [lm, copy, flip_flop]\n"
                    "task_train: {steps: 100, seq_len: 32}\n"
                    "task_recipes:\n"
                    "  copy: {steps: 400, lr: 0.001}\n"
                    "  flip_flop:\n"
                    "    stpes: 3\n"
                    "    batch_size: 0\n"
                    "  lm: {steps: 5}\n"
                    "  reverse: {steps: 5}\n")
    errs = errors_of(load_grid, path, Project(project_root))
    assert any(e.startswith(f"{path}:9: task_recipes.flip_flop.stpes: unknown recipe field") and "'steps'" in e
               for e in errs), errs
    assert f"{path}:10: task_recipes.flip_flop.batch_size: Input should be greater than 0" in errs
    assert f"{path}:11: task_recipes.lm: 'lm' is a lm task: it trains with `train`" in errs
    assert f"{path}:12: task_recipes.reverse: 'reverse' is not a task of this grid" in errs
    assert len(errs) == 4
    path.write_text(path.read_text().split("  flip_flop:")[0])
    grid = load_grid(path, Project(project_root))
    copy, flip_flop = (grid.spec.recipe_for(t) for t in ("copy", "flip_flop"))
    assert (copy.steps, copy.lr, copy.seq_len) == (400, 0.001, 32)  # the task's fields over task_train's
    assert flip_flop is grid.spec.task_train  # no entry: the base recipe itself, run ids unchanged


def test_a_task_recipe_may_name_the_size_its_task_trains_at(project_root):
    """``task_recipes.<task>.size``: that task trains at that size alone, in place of the
    ``sizes`` axis; the other tasks keep the axis and their run ids. An unknown size or one
    that is not a name is reported at its line."""
    from suite.plan.grid import expand

    path = project_root / "grids" / "sized.yaml"
    head = "name: sized\nencodings: [nope, rope]\nsizes: [tiny, small]\ntasks: [lm, copy, flip_flop]\nseeds: [0, 1]\n" \
           "train: {steps: 10, seq_len: 32}\ntask_train: {steps: 10, seq_len: 16}\n"
    path.write_text(head + "task_recipes:\n  copy: {size: tiny-4l, steps: 20}\n")
    runs = expand(load_grid(path, Project(project_root))).runs
    assert {r.size.name for r in runs if r.task.name == "copy"} == {"tiny-4l"}
    assert sum(r.task.name == "copy" for r in runs) == 4  # 2 encodings x 2 seeds, once each
    assert {r.size.name for r in runs if r.task.name != "copy"} == {"tiny", "small"}
    assert {r.train.steps for r in runs if r.task.name == "copy"} == {20}
    path.write_text(head)
    unsized = {r.run_id for r in expand(load_grid(path, Project(project_root))).runs if r.task.name != "copy"}
    assert unsized == {r.run_id for r in runs if r.task.name != "copy"}
    path.write_text(head + "task_recipes:\n  copy: {size: tiny4l}\n  flip_flop:\n    size: [tiny]\n")
    errs = errors_of(load_grid, path, Project(project_root))
    assert any(e.startswith(f"{path}:9: task_recipes.copy.size: no size 'tiny4l'") and "'tiny-4l'" in e for e in errs), errs
    assert any(e.startswith(f"{path}:11: task_recipes.flip_flop.size: a size is named by its spec") for e in errs), errs
    assert len(errs) == 2


def test_yaml_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "grids" / "g.yaml"
    path.parent.mkdir()
    path.write_text("name: g\nencodings: [rope\nsizes: [tiny]\n")
    (err,) = errors_of(load_grid, path, Project(tmp_path))
    assert err.startswith(f"{path}:3: (syntax):")


def test_duplicate_yaml_key_is_an_error(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text("name: d\ndisplay_name: D\nfamily: none\npaper: p\nimpl: none\nname: e\n")
    assert f"{path}:6: name: duplicate key" in errors_of(load_encoding, path)


def test_cli_validate_exit_code_and_message(project_root, capsys):
    bad = project_root / "encodings" / "bad.yaml"
    bad.write_text("name: bad\ndisplay_name: B\nfamily: rotary\npaper: p\nimpl: rotary\nparams: {fraction: 2}\n")
    code = main(["--root", str(project_root), "validate", str(bad), str(project_root / "encodings" / "rope.yaml")])
    err = capsys.readouterr().err
    assert code == 1
    assert f"{bad}:6: params: " in err and "fraction must be in (0, 1]" in err
    assert not (project_root / "results").exists()


def test_cli_run_with_broken_grid_trains_and_writes_nothing(project_root, capsys):
    grid = project_root / "grids" / "quick.yaml"
    grid.write_text(grid.read_text() + "steps: 5\n")  # a training key at the top level
    code = main(["--root", str(project_root), "run", str(grid)])
    assert code == 1
    assert "steps: unknown key" in capsys.readouterr().err
    assert not (project_root / "results").exists()


def test_every_shipped_spec_passes_validate_with_every_limit(capsys):
    """No false refusals: the shipped grids (paper.yaml included) pass the limits checks."""
    paths = [str(p) for kind in ("encodings", "sizes", "tasks", "grids") for p in sorted((REPO / kind).glob("*.yaml"))]
    assert main(["--root", str(REPO), "validate", *paths]) == 0, capsys.readouterr().err


def test_split_sizes_from_file_sizes_equal_the_loaded_corpus(text_folder):
    from suite.data.corpus import load_corpus
    from suite.data.file_corpus import files_split_bytes as split_bytes
    from suite.specs import CorpusSpec

    total = sum(p.stat().st_size for p in text_folder.glob("*.py"))
    for max_bytes in (None, total - 1):  # the cap skips a file
        corpus = CorpusSpec(kind="folder", path=str(text_folder), glob="*.py", max_bytes=max_bytes)
        loaded = load_corpus(corpus)
        assert split_bytes(corpus) == {split: len(loaded[split]) for split in ("train", "validation", "test")}


def test_limits_are_read_on_the_meta_device_without_allocating():
    """A 2^40-row table is measured, not allocated (it would need 256 TiB)."""
    from suite.plan.limits import build_on_meta
    from suite.specs import EncodingSpec, SizeSpec

    spec = EncodingSpec(name="big", display_name="Big", family="absolute", paper="p", impl="learned",
                        params={"max_positions": 2**40})
    built = build_on_meta(spec, SizeSpec(name="s", d_model=64, n_layers=2, n_heads=4, d_ff=256), 64)
    assert built.max_length == 2**40 and built.n_params > 2**46 and built.hooks == {"embed"}


def test_without_imports_external_references_are_checked_for_form_only(capsys):
    from suite.encodings import ENCODINGS
    from suite.core.registry import LookupFailed, NotImported, no_imports

    with no_imports():
        with pytest.raises(NotImported):
            ENCODINGS.get("this:Zen")
        with pytest.raises(LookupFailed, match="no module named 'no_such_module_xyz'"):
            ENCODINGS.get("no_such_module_xyz:X")
        assert ENCODINGS.get("rotary").__name__ == "Rotary"  # registered families are ours
    assert "Beautiful is better than ugly" not in capsys.readouterr().out
    with pytest.raises(LookupFailed, match="no attribute 'Zen'"):
        ENCODINGS.get("this:Zen")  # imports are on again outside the block


def test_line_index_does_not_expand_aliases(tmp_path):
    from suite.core.yamldoc import read_yaml

    path = tmp_path / "a.yaml"
    path.write_text("shared: &s\n  lr: 1\nfirst: *s\nsecond:\n  - *s\n")
    doc = read_yaml(path)
    assert doc.data["second"][0] == {"lr": 1}
    assert doc.lines == {("shared",): 1, ("shared", "lr"): 2, ("first",): 3, ("second",): 4, ("second", 0): 5}
    assert doc.line(("second", 0, "lr")) == 5  # a use of the alias reports the line that uses it


def test_an_absolute_plugin_path_is_explicit_and_loads_with_import(tmp_path, capsys):
    spec = tmp_path / "encodings" / "bounded.yaml"
    spec.parent.mkdir()
    spec.write_text("name: bounded\ndisplay_name: B\nfamily: absolute\npaper: \"Doe et al. 2024, Bounded\"\n"
                    f"impl: {REPO / 'tests' / 'plugins' / 'bounded.py'}:BoundedSinusoidal\n"
                    "params: {base: .inf}\n")
    assert main(["--root", str(tmp_path), "validate", str(spec)]) == 1
    assert f"{spec}:6: params.base: inf is not a finite number" in capsys.readouterr().err
    spec.write_text(spec.read_text().replace("{base: .inf}", "{bse: 100}"))
    assert main(["--root", str(tmp_path), "validate", str(spec)]) == 0  # params of external code need --import
    assert "params of bounded not checked: run with --import" in capsys.readouterr().out
    from suite.specs import load_encoding

    errs = errors_of(load_encoding, spec)  # imports on: the plugin's own Params are checked
    assert errs == [f"{spec}:6: params.bse: unknown parameter (did you mean 'base'?); valid: base, convention, token_scale"]
