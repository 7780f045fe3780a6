"""``posbench replicate`` on the committed snapshot itself: CI re-runs a sample of it with each
record's numerics (a file of its own, so that pytest-xdist runs it beside the other replicate
test rather than after it)."""

from __future__ import annotations

from suite.cli.main import main


def test_ci_sample_of_the_committed_snapshot_is_bit_identical(capfd):
    """One language-modelling run and one task run of the default job, each the quickest of its
    stratum, with all their evaluations, re-run from the committed leaderboard/ with their numerics."""
    from tests.conftest import REPO

    assert main(["--root", str(REPO), "replicate", "--sample", "2", "--cheapest", "--grids", "quick"]) == 0
    out = capfd.readouterr().out
    assert "/lm/" in out and "/flip_flop/" in out
    assert "2 of 2 piece(s) bit-identical" in out and "CHANGED" not in out
