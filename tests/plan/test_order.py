"""A grid's runs are planned seed by seed: every row of a seed before the next seed, so a grid
stopped part way (a session's end, a cluster's time limit) leaves every row with the same
seeds, which is what a board's paired tests compare rows over."""

from __future__ import annotations

from suite.plan.grid import load_plan
from suite.specs import Project

from tests.plan.test_run_ids import GRID, checkout


def test_runs_are_planned_seed_by_seed_in_the_spec_order(tmp_path):
    root = checkout(tmp_path, "some text")
    grid = GRID.replace("encodings: [nope, rope]", "encodings: [rope, nope, yarn, alibi]").replace("seeds: [0]", "seeds: [2, 0, 1]")
    (root / "grids" / "mine.yaml").write_text(grid)
    _, plan = load_plan(root / "grids" / "mine.yaml", Project(root))
    # yarn is training-free on rope's checkpoint: no run of its own
    assert [(r.seed, r.encoding.name) for r in plan.runs] == [
        (seed, name) for seed in (2, 0, 1) for name in ("rope", "nope", "alibi")]
    # the evaluations go run by run in the same order (yarn's with rope's checkpoint)
    assert list(dict.fromkeys(e.run.run_id for e in plan.evaluations)) == [r.run_id for r in plan.runs]
