"""The submission flow: `posbench new-encoding`, `posbench validate --import` and `posbench verify`."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from suite.cli.main import main
from suite.submission.contract import CHECKS

pytestmark = pytest.mark.integration  # trains or evaluates real models: not in make test-fast

FAMILIES = ("rotary", "bias", "absolute", "contextual")


@pytest.fixture(scope="module")
def submitted(tmp_path_factory):
    """A project with one scaffolded encoding of every family."""
    import shutil

    from tests.conftest import REPO

    root = tmp_path_factory.mktemp("submission")
    for folder in ("encodings", "sizes", "tasks", "grids"):
        shutil.copytree(REPO / folder, root / folder)
    for family in FAMILIES:
        assert main(["--root", str(root), "new-encoding", f"my-{family}", "--family", family]) == 0
    return root


@pytest.mark.parametrize("family", FAMILIES)
def test_new_encoding_writes_a_spec_an_implementation_and_a_test(submitted, family):
    spec = (submitted / "encodings" / f"my-{family}.yaml").read_text()
    assert f"impl: ../plugins/my-{family}.py:My{family.capitalize()}" in spec
    assert f"family: {family}" in spec
    assert (submitted / "plugins" / f"my-{family}.py").is_file()
    assert (submitted / "tests" / "plugins" / f"test_my_{family}.py").is_file()


@pytest.mark.parametrize("family", FAMILIES)
def test_validate_checks_form_only_then_imports_runs_the_contract_and_a_smoke_run(submitted, family, capsys):
    spec = str(submitted / "encodings" / f"my-{family}.yaml")
    assert main(["--root", str(submitted), "validate", spec]) == 1  # the scaffold's paper is a placeholder
    assert f"{spec}:4: paper: 'TODO' is a placeholder, not a citation" in capsys.readouterr().err
    cite(submitted / "encodings" / f"my-{family}.yaml")
    assert main(["--root", str(submitted), "validate", spec]) == 0
    assert f"params of my-{family} not checked: run with --import" in capsys.readouterr().out
    assert main(["--root", str(submitted), "validate", "--import", spec]) == 0
    out = capsys.readouterr().out
    assert f"contract: {len(CHECKS)} checks passed" in out
    assert "smoke run: trained 20 steps with suite.training.fit.fit" in out and "held-out bits per byte 1x" in out
    assert not (submitted / "results").exists()


def cite(spec) -> None:
    """The scaffolded spec with its placeholder paper replaced by a citation, as its author would."""
    text = spec.read_text()
    spec.write_text(re.sub(r'paper: "TODO[^"]*"', 'paper: "Doe et al. 2026, A Scaffolded Encoding"', text))


def test_the_scaffolded_tests_pass_at_once(submitted):
    tests = sorted(str(p) for p in (submitted / "tests" / "plugins").glob("test_*.py"))
    assert len(tests) == len(FAMILIES)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], cwd=submitted,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"{len(FAMILIES) * (len(CHECKS) + 1)} passed" in done.stdout


def test_new_encoding_refuses_bad_names_and_never_overwrites(submitted, capsys):
    assert main(["--root", str(submitted), "new-encoding", "Bad Name", "--family", "bias"]) == 1
    assert "not a valid encoding name" in capsys.readouterr().err
    before = (submitted / "plugins" / "my-bias.py").read_text()
    assert main(["--root", str(submitted), "new-encoding", "my-bias", "--family", "rotary"]) == 1
    assert "already exist" in capsys.readouterr().err
    assert (submitted / "plugins" / "my-bias.py").read_text() == before


def forget(plugin) -> None:
    """Drop the imported plugin module, so the next import reads the file again."""
    for name in [m for m, mod in sys.modules.items() if m.startswith("posbench_plugin_")
                 and getattr(mod, "__file__", None) == str(plugin)]:
        del sys.modules[name]


def test_a_broken_submission_is_refused_with_the_contract_check_that_failed(submitted, capsys):
    plugin = submitted / "plugins" / "my-absolute.py"
    original = plugin.read_text()
    try:  # leak the next token into every position
        plugin.write_text(original.replace("return x + sinusoidal_table", "return x + x.roll(-1, dims=1) + sinusoidal_table"))
        forget(plugin)
        spec = submitted / "encodings" / "my-absolute.yaml"
        assert main(["--root", str(submitted), "validate", "--import", str(spec)]) == 1
        err = capsys.readouterr().err
        assert f"{spec}:5: impl: contract: causal: train: position 0 sees the future" in err
    finally:
        plugin.write_text(original)
        forget(plugin)


# -- verify -------------------------------------------------------------------------------


@pytest.fixture
def trained(tiny_grid, project_root):
    grid = tiny_grid("verify", encodings=["rope"], scales=[1, 2],
                     eval={"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False})
    assert main(["--root", str(project_root), "run", "--quiet", "--no-site", str(grid)]) == 0
    (record,) = (project_root / "results" / "runs").glob("*.json")
    return project_root, record


def test_verify_matches_a_run_and_catches_a_tampered_record(trained, capsys):
    root, record = trained
    capsys.readouterr()
    assert main(["--root", str(root), "verify", str(record)]) == 0
    out = capsys.readouterr().out
    assert "tolerance |diff| <= 1e-06" in out
    assert "identical: final_train_loss" in out and "identical: weights sha256" in out
    assert "identical: extrapolation as rope at 1x" in out and "identical: extrapolation as rope at 2x" in out
    assert "match: 3 of 3 figure(s) match, 3 bit for bit" in out
    assert "numerics differ" not in out  # re-run with the numerics the grid recorded
    evals = sorted((root / "results" / "evals").glob("*.json"))
    assert len(evals) == 2  # verify wrote nothing into the project

    original = record.read_text(), evals[0].read_text()
    data = json.loads(record.read_text())
    data["provenance"]["final_train_loss"] += 1e-4
    data["provenance"]["weights_sha256"] = "0" * 64
    record.write_text(json.dumps(data))
    first = json.loads(evals[0].read_text())
    first["metrics"][0]["value"] += 1e-3
    evals[0].write_text(json.dumps(first))
    assert main(["--root", str(root), "verify", str(record)]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH: final_train_loss" in out and out.count("MISMATCH: extrapolation") == 1
    assert "MISMATCH: weights sha256: recorded 0000000000000000" in out
    assert "MISMATCH: 1 of 3 figure(s) match, 1 bit for bit; 3 problem(s)" in out

    # a run trained by two processes (DDP) is re-trained in one: its figures are compared, its bits are not
    record.write_text(original[0])
    evals[0].write_text(original[1])
    ddp = json.loads(original[0])
    ddp["provenance"]["world_size"], ddp["provenance"]["weights_sha256"] = 2, "0" * 64
    record.write_text(json.dumps(ddp))
    assert main(["--root", str(root), "verify", str(record), "--no-evals"]) == 0
    assert "weights sha256 not compared: trained by 2 processes, re-trained by one" in capsys.readouterr().out

    data["run"]["seed"] = 1  # a record whose run was edited no longer hashes to its id
    record.write_text(json.dumps(data))
    assert main(["--root", str(root), "verify", data["run_id"]]) == 1
    assert "the record was edited" in capsys.readouterr().out


def test_verify_refuses_what_it_cannot_verify(project_root, capsys):
    assert main(["--root", str(project_root), "verify", "0123456789abcdef"]) == 1
    assert "0123456789abcdef.json" in capsys.readouterr().err
