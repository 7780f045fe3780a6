"""``posbench replicate`` on the committed snapshot itself: CI re-runs a sample of it with each
record's numerics (a file of its own, so that pytest-xdist runs it beside the other replicate
test rather than after it)."""

from __future__ import annotations

import gzip
import json

import pytest

from suite.cli.main import main
from suite.core.numerics import cpu_model
from tests.snapshot_cut import cut_snapshot, planned_by


def recorded_cpus(folder) -> set[str]:
    with gzip.open(folder / "runs.jsonl.gz", "rt") as f:
        return {(json.loads(line)["provenance"].get("numerics") or {}).get("cpu") for line in f}


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
