"""What the command line prints when its reader goes away or when libraries talk."""

from __future__ import annotations

import os
import sys

from suite.cli.main import main
from tests.report.test_site import project  # noqa: F401 (the fixture: a small rendered project)


def test_a_reader_that_leaves_is_not_an_error(project, monkeypatch):  # noqa: F811
    """`posbench leaderboard --format csv | head -1`: writing to a closed pipe ends quietly, exit 0."""
    read, write = os.pipe()
    os.close(read)  # the reader has gone: every write now fails with EPIPE
    stream = os.fdopen(write, "w", buffering=1)
    monkeypatch.setattr(sys, "stdout", stream)
    try:
        assert main(["--root", str(project), "leaderboard", "--format", "csv"]) == 0
    finally:
        stream.close()


def test_names_are_whole_in_a_wide_terminal_and_cut_in_80_columns(project):  # noqa: F811
    from suite.report.terminal import render_text

    database = project / "results" / "posbench.duckdb"
    longest = "Llama 3 RoPE (rope)"  # the fixture's longest row name, with its checkpoint (19 > 14 characters)
    wide, narrow = (render_text(database, "lm-tiny-lm", width=w) for w in (140, 80))
    assert longest in wide and max(len(line) for line in wide.splitlines()) <= 140
    assert longest not in narrow and max(len(line) for line in narrow.splitlines()) <= 80


def test_dry_run_without_slurm_is_refused_and_runs_nothing(tiny_grid, project_root, capsys):
    """`--dry-run` belongs to the SLURM executor; a local run used to ignore it and train the grid."""
    grid = tiny_grid(name="dry")
    assert main(["--root", str(project_root), "run", str(grid), "--dry-run"]) == 1
    assert "`posbench plan GRID` shows what a local run would do" in capsys.readouterr().err
    assert not (project_root / "results").exists()
