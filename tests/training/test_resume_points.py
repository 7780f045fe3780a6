"""How often a run writes a resume point (suite.core.runtime.resume_every_s), and a bad setting
refused by every command that trains before anything starts. The resume itself: tests/e2e/test_distributed.py
(bit for bit) and tests/e2e/test_reliability.py (a real SIGKILL)."""

from __future__ import annotations

import pytest

from suite.cli.main import main
from suite.core.runtime import RESUME_EVERY_ENV, RESUME_EVERY_S, resume_every_s


@pytest.mark.parametrize(("value", "expected"), [(None, RESUME_EVERY_S), ("", RESUME_EVERY_S), (" 90 ", 90.0),
                                                 ("0.5", 0.5), ("off", None), ("OFF", None)])
def test_the_interval_is_the_variables_seconds_the_default_or_none(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv(RESUME_EVERY_ENV, raising=False)
    else:
        monkeypatch.setenv(RESUME_EVERY_ENV, value)
    assert resume_every_s() == expected


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf", "soon", "10m"])
def test_run_refuses_a_bad_interval_before_anything_starts(tiny_grid, project_root, monkeypatch, capsys, value):
    grid = tiny_grid(name="bad-interval")
    monkeypatch.setenv(RESUME_EVERY_ENV, value)
    assert main(["--root", str(project_root), "run", str(grid), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"{RESUME_EVERY_ENV}={value!r}" in err and "'off'" in err and len(err.strip().splitlines()) == 1
    assert not (project_root / "results").exists()


@pytest.mark.parametrize("argv", [["run-one", "manifest.tsv", "0"], ["verify", "0123456789abcdef"],
                                  ["validate", "encodings/rope.yaml"],
                                  ["replicate", "--sample", "1"], ["submit", "encodings/rope.yaml"]])
def test_every_command_that_trains_refuses_a_bad_interval_first(project_root, monkeypatch, capsys, argv):
    """A SLURM array task (run-one) would otherwise record each of its runs as failed."""
    monkeypatch.setenv(RESUME_EVERY_ENV, "10m")
    assert main(["--root", str(project_root), *argv]) == 1
    err = capsys.readouterr().err
    assert f"{RESUME_EVERY_ENV}='10m'" in err and len(err.strip().splitlines()) == 1
    assert not (project_root / "results").exists()


def test_a_smoke_runs_resume_points_stay_in_its_temporary_folder(tmp_path, monkeypatch):
    """`posbench validate`'s smoke run trains in a temporary folder: its resume points (here one at
    every step) go inside it and leave with it, never where a later smoke run of the same spec
    would resume from them."""
    import tempfile

    from suite.specs.encoding import load_encoding
    from suite.submission.contract import smoke_run
    from tests.conftest import REPO

    monkeypatch.setenv(RESUME_EVERY_ENV, "1e-9")
    # torch's compile cache goes under the temporary folder too unless told otherwise; it is torch's, not the run's
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path.parent / f"{tmp_path.name}-inductor"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    smoke = smoke_run(load_encoding(REPO / "encodings" / "rope.yaml"))
    assert smoke.final_loss > 0
    assert not list(tmp_path.iterdir())
