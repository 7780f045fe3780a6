"""``posbench replicate`` of a committed record of this machine's class, bit for bit: the claim
the published snapshot makes on the class a record names (suite.core.machine). A file of its
own beside tests/e2e/test_replicate_committed.py (its other sample), so that pytest-xdist runs the
two on two workers at once."""

from __future__ import annotations

import gzip
import json

import pytest

from suite.cli.main import main
from suite.core import machine, numerics
from tests.snapshot_cut import cut_snapshot, planned_by, published_runs, same_class


# The longest published run (training and evaluations by its records' time) this sample re-runs:
# make test stays within ten minutes on two cores only with a short one. A class whose records are
# all longer (on 2026-11-30 the AMD EPYC of family 26, model 2 had only six 3.2M-weight ladder runs
# of about 16 minutes each) skips, naming the command that re-runs one of them by hand.
LONGEST_S = 300


def recorded_seconds() -> dict[str, float]:
    """Run id -> the time its published evaluations took by their records (CPU time where
    recorded, wall time before that)."""
    from tests.snapshot_cut import PUBLISHED

    seconds: dict[str, float] = {}
    with gzip.open(PUBLISHED / "evals.jsonl.gz", "rt") as f:
        for line in f:
            e = json.loads(line)
            seconds[e["run_id"]] = seconds.get(e["run_id"], 0.0) + (e["provenance"].get("cpu_s") or
                                                                   e["provenance"].get("wall_s") or 0.0)
    return seconds


def test_ci_sample_of_this_machine_class_records_is_bit_identical(tmp_path, capfd):
    """On a machine class that some published records name in full, the published CPU run of that
    class cheapest to re-run (its training and its evaluations by their records' time; a run
    fine-tuned from another is left out, its parent would train too; a GPU's run is another device
    class, whose host's CPU its record also names), re-run bit for bit with its evaluations, as a
    sample of the first grid that plans it. Its evaluations may be none: a tuned grid's sweep run of
    a rate the grid did not choose is not evaluated, and then its final training loss and the digest
    of its weights are what comes back bit for bit. Skipped where no published record names this
    class (every record made before records named their class names none).
    (Until 2026-11-28 the cheapest of the first grid holding such records: on the AMD EPYC of
    family 25, model 1, a 1,000-step canonical-lm run of 67 s by its records, where a 600-step
    ladder run of 14 s was there. On the AMD EPYC of family 25, model 17 the cheapest was a
    3.2M-weight ladder run of 167 s until gemma3's records were computed again there on
    2026-11-29: now a six-layer tiny run of about a minute.)"""
    from tests.conftest import REPO

    here = numerics.measured()
    runs = published_runs()
    mine = lambda run: (machine.compare(run["provenance"].get("numerics"), here).same  # noqa: E731
                        and (run["provenance"].get("device") or "cpu") == "cpu"
                        and not (run.get("lineage") or {}).get("parent_run_id"))
    info = json.loads((REPO / "leaderboard" / "SNAPSHOT.json").read_text())
    plans = [(grid, planned_by(grid)) for grid in info["grids"]]
    candidates = {run["run_id"]: (run, grid) for grid, planned in reversed(plans) for run in runs
                  if planned(run) and mine(run)}  # each run with the first grid that plans it
    if not candidates:
        pytest.skip(f"no published record names this machine class ({machine.label(here)})")
    evaluations = recorded_seconds()
    cost = lambda run: (run["provenance"].get("cpu_s") or run["provenance"].get("wall_s") or 0.0)  # noqa: E731
    cheapest, grid = min(candidates.values(),
                         key=lambda pair: (cost(pair[0]) + evaluations.get(pair[0]["run_id"], 0.0), pair[0]["run_id"]))
    seconds = cost(cheapest) + evaluations.get(cheapest["run_id"], 0.0)
    if seconds > LONGEST_S:
        pytest.skip(f"this machine class's cheapest published run, {cheapest['run_id']} ({grid}), took "
                    f"{seconds:.0f} s by its records, over the {LONGEST_S} s make test spends on this "
                    f"sample: re-run a run of this class bit for bit with `posbench replicate --cheapest "
                    f"--sample 1 --grids {grid} --cpu this` (its first stratum's cheapest)")
    cut_snapshot(tmp_path / grid, [grid], lambda run: run["run_id"] == cheapest["run_id"])
    assert same_class(tmp_path / grid)
    assert main(["--root", str(REPO), "replicate", "--snapshot", str(tmp_path / grid),
                 "--sample", "1", "--grids", grid, "--cpu", "this"]) == 0
    out = capfd.readouterr().out
    assert f"({cheapest['run_id']})" in out and "1 of 1 piece(s) bit-identical" in out and "CHANGED" not in out
