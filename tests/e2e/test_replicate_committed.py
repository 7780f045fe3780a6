"""``posbench replicate`` on the committed snapshot itself: CI re-runs a sample of it with each
record's numerics (a file of its own, so that pytest-xdist runs it beside the other replicate
test rather than after it). Bit-identity is claimed on the CPU model a record names, so the
sample is of records that name the CPU the test runs on."""

from __future__ import annotations

import gzip
import json

import pytest

from suite.cli.main import main
from suite.core.numerics import cpu_model
from tests.snapshot_cut import cut_snapshot, planned_by, published_runs, recorded_cpu


def recorded_cpus(folder) -> set[str]:
    with gzip.open(folder / "runs.jsonl.gz", "rt") as f:
        return {recorded_cpu(json.loads(line)) for line in f}


def test_ci_sample_of_the_committed_snapshot_is_bit_identical(tmp_path, capfd):
    """One language-modelling run and one task run of the default job, each the quickest of its
    stratum, with all their evaluations, re-run from the committed records with their numerics.
    The records are the default job's part of leaderboard/ (its runs, every evaluation of them):
    unpacking, ingesting and ranking all of it would take longer than the two re-runs and grow
    with every grid published."""
    from tests.conftest import REPO

    runs, evals = cut_snapshot(tmp_path / "quick", ["quick"], planned_by("quick"))
    assert runs == 60 and evals > 600  # 3 trained encodings x 2 tasks x 10 seeds
    cpus = recorded_cpus(tmp_path / "quick")
    if cpus != {cpu_model()}:
        # Measured 2026-11-26: under the same pinned numerics an Intel Xeon re-ran the default job's
        # AMD EPYC records with other figures (docs/concepts/reproducibility.md), so bit-identity
        # is claimed, and checked, on the CPU model the records name.
        pytest.skip(f"the default job's records were computed on {', '.join(sorted(map(str, cpus)))}; "
                    f"this machine is {cpu_model()}")
    assert main(["--root", str(REPO), "replicate", "--snapshot", str(tmp_path / "quick"),
                 "--sample", "2", "--cheapest", "--grids", "quick"]) == 0
    out = capfd.readouterr().out
    assert "/lm/" in out and "/flip_flop/" in out
    assert "2 of 2 piece(s) bit-identical" in out and "CHANGED" not in out
    assert "headlines: 0 hold" not in out  # the default job's boards have headlines, and they hold


def test_ci_sample_of_this_cpus_records_is_bit_identical(tmp_path, capfd):
    """On a CPU model the default job's records do not name, the same check on records that name
    this one: the cheapest language-modelling run of the first published grid holding such
    records, with all its evaluations, re-run with its numerics. Skipped where the default job's
    records are this CPU's (the test above re-runs them) or where no record names it.

    The cut holds the first seed of that grid computed here: re-running one run needs its own
    records, and unpacking and ingesting every seed of the grid (on the Intel Xeon, hundreds of
    runs of the four-layer board) took longer than the re-run."""
    from tests.conftest import REPO

    here = cpu_model()
    runs = published_runs()
    quick = planned_by("quick")
    if {recorded_cpu(run) for run in runs if quick(run)} == {here}:
        pytest.skip("the default job's records name this CPU model: the test above re-runs them")
    info = json.loads((REPO / "leaderboard" / "SNAPSHOT.json").read_text())
    for grid in info["grids"]:
        planned = planned_by(grid)
        seeds = {run["seed"] for run in runs if planned(run) and recorded_cpu(run) == here}
        if seeds:
            break
    else:
        pytest.skip(f"no published record names this CPU model ({here})")
    first = min(seeds)
    keep = lambda run: planned(run) and recorded_cpu(run) == here and run["seed"] == first  # noqa: E731
    cut_snapshot(tmp_path / grid, [grid], keep)
    assert recorded_cpus(tmp_path / grid) == {here}
    assert main(["--root", str(REPO), "replicate", "--snapshot", str(tmp_path / grid),
                 "--sample", "1", "--cheapest", "--grids", grid]) == 0
    out = capfd.readouterr().out
    assert "1 of 1 piece(s) bit-identical" in out and "CHANGED" not in out
