"""``posbench validate`` reports every error of a file in one run, not in rounds: a grid whose
document does not validate as a whole still has its name and its referenced specs checked."""

from __future__ import annotations

import pytest

from suite.cli.main import main


def test_four_mistakes_in_a_copy_of_the_default_job_are_all_reported_at_once(project_root, capsys):
    text = (project_root / "grids" / "quick.yaml").read_text()
    assert "encodings: [nope, rope," in text and "  lr: 0.003\n  warmup_steps: 50" in text
    text = (text.replace("encodings: [nope, rope,", "encodings: [nope, rpoe,")  # a typo
                .replace("  lr: 0.003\n  warmup_steps: 50", "  lr: -0.003\n  warmup_steps: 50")  # out of range
                .replace("sizes: [tiny]", "sizes: [tiny]\ncolour: blue"))  # a stray key
    path = project_root / "grids" / "my-quick.yaml"  # the name inside is still 'quick'
    path.write_text(text)
    assert main(["--root", str(project_root), "validate", str(path)]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith(str(path))]
    fields = [line.split(": ")[1] for line in err]
    assert fields == ["name", "encodings.1", "colour", "train.lr"]
    assert "did you mean 'rope'" in err[1] and "must match the file name 'my-quick'" in err[0]


def reported(capsys, path) -> list[str]:
    """The error lines of ``posbench validate`` about ``path``."""
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith(str(path))]


def test_a_grid_with_a_mistake_in_each_stage_has_all_of_them_reported_in_one_run(project_root, capsys):
    """A spec error (a typo in `train`), a reference (an unknown encoding) and a registry check (an
    unknown evaluator, checked on a loaded grid) in one file: three lines, not two, in one run."""
    path = project_root / "grids" / "three.yaml"
    path.write_text("name: three\nencodings: [nope, rpoe]\nsizes: [tiny]\ntasks: [lm]\n"
                    "train:\n  steps: 100\n  warmup_step: 5\n"
                    "evaluations:\n  - evaluator: extrapolatoin\n")
    before = sorted(p.relative_to(project_root) for p in project_root.rglob("*"))
    assert main(["--root", str(project_root), "validate", str(path)]) == 1
    err = reported(capsys, path)
    assert [line.split(": ")[1] for line in err] == ["encodings.1", "train.warmup_step", "evaluations.0.evaluator"], err
    assert err[0].startswith(f"{path}:2: ") and "did you mean 'rope'" in err[0]
    assert err[1] == f"{path}:7: train.warmup_step: unknown key (did you mean 'warmup_steps'?)"
    assert err[2].startswith(f"{path}:9: evaluations.0.evaluator: unknown evaluator 'extrapolatoin' "
                             "(did you mean 'extrapolation'?)")
    assert sorted(p.relative_to(project_root) for p in project_root.rglob("*")) == before  # nothing written


def test_an_encoding_spec_with_four_mistakes_has_all_of_them_reported_in_one_run(project_root, capsys):
    """A wrong name, a bad family, a placeholder paper and an unknown parameter: each of them was
    reported only once the ones before it were fixed (four runs)."""
    path = project_root / "encodings" / "mine.yaml"
    path.write_text('name: mine2\ndisplay_name: Mine\nfamily: rotry\npaper: "TODO: authors year, title"\n'
                    "impl: rotary\nparams: {bsae: 10}\n")
    assert main(["--root", str(project_root), "validate", str(path)]) == 1
    err = reported(capsys, path)
    assert [line.split(": ")[1] for line in err] == ["name", "family", "paper", "params.bsae"], err
    assert [int(line.split(":")[1]) for line in err] == [1, 3, 4, 6]
    assert "must match the file name 'mine'" in err[0] and "did you mean 'base'" in err[3]


@pytest.mark.parametrize("section, typo, suggestion", [
    ("train", "warmup_step", "warmup_steps"),
    ("eval", "curve_bucket", "curve_buckets"),
    ("glue", "batch_sise", "batch_size"),
])
def test_a_nested_typo_gets_its_did_you_mean(project_root, capsys, section, typo, suggestion):
    path = project_root / "grids" / "nested.yaml"
    path.write_text(f"name: nested\nencodings: [rope]\nsizes: [tiny]\ntasks: [lm]\n{section}:\n  {typo}: 5\n")
    assert main(["--root", str(project_root), "validate", str(path)]) == 1
    assert reported(capsys, path) == [f"{path}:6: {section}.{typo}: unknown key (did you mean '{suggestion}'?)"]


def test_a_typo_in_a_list_of_sections_gets_its_did_you_mean(project_root, capsys):
    path = project_root / "grids" / "listed.yaml"
    path.write_text("name: listed\nencodings: [rope, nope]\nsizes: [tiny]\ntasks: [lm]\n"
                    "extensions:\n  - parent: rope\n    encodings: [rope-pi]\n    steps: 10\n    facter: 2\n")
    assert main(["--root", str(project_root), "validate", str(path)]) == 1
    assert f"{path}:9: extensions.0.facter: unknown key (did you mean 'factor'?)" in reported(capsys, path)
