"""A tuned grid, end to end (suite.plan.tuning): `posbench run` trains each encoding's sweep at
the tuning seed, chooses the rate of the lowest validation loss from the records it wrote, and
trains every seed at that rate; the sweep's other rates are recorded and never evaluated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from suite.cli.main import main
from suite.execution.tuned import sweep_chooser
from suite.plan.grid import load_plan
from suite.specs import Project

pytestmark = pytest.mark.integration

RATES = [0.0003, 0.003, 0.03]


def records(root: Path, folder: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((root / "results" / folder).glob("*.json"))]


@pytest.fixture(scope="module")
def tuned(tmp_path_factory, text_folder):
    from tests.conftest import copy_specs, write_yaml

    root = copy_specs(tmp_path_factory.mktemp("tuned"), text_folder)
    grid = write_yaml(root / "grids" / "tuned.yaml", {
        "name": "tuned", "encodings": ["nope", "rope"], "sizes": ["tiny"], "tasks": ["local"], "seeds": [0, 1],
        "scales": [1, 2], "train": {"steps": 20, "batch_size": 4, "seq_len": 32, "warmup_steps": 2},
        "eval": {"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False},
        "tuning": {"lr": RATES, "seed": 0}})
    before = load_plan(grid, Project(root), tuned=sweep_chooser(Project(root)))[1]
    # two workers: the sweep is one round, the seeds at the chosen rates the next (suite.execution.executors.local)
    assert main(["--root", str(root), "run", str(grid), "--quiet", "--no-site", "--jobs", "2"]) == 0
    return root, grid, before


def test_before_the_sweep_only_the_sweep_is_planned(tuned):
    _, _, before = tuned
    assert sorted(before.pending) == ["nope/tiny/local", "rope/tiny/local"]
    assert len(before.runs) == 2 * len(RATES) and not before.evaluations
    assert {r.seed for r in before.runs} == {0} and sorted({r.train.lr for r in before.runs}) == RATES


def test_each_encoding_gets_the_rate_of_its_lowest_validation_loss_at_every_seed(tuned):
    root, _, _ = tuned
    runs = records(root, "runs")
    assert all(r["status"] == "done" and r["run"]["train"]["lr_sweep"] == RATES for r in runs)
    for encoding in ("nope", "rope"):
        mine = [r for r in runs if r["encoding"] == encoding]
        sweep = {r["run"]["train"]["lr"]: r["learning_curve"]["val_loss"][-1] for r in mine if r["seed"] == 0}
        assert sorted(sweep) == RATES
        best = min(sweep, key=sweep.get)  # from the records themselves
        others = [r for r in mine if r["seed"] == 1]
        assert len(others) == 1 and others[0]["run"]["train"]["lr"] == best


def test_only_the_chosen_rates_runs_are_evaluated(tuned):
    root, grid, _ = tuned
    runs = {r["run_id"]: r for r in records(root, "runs")}
    _, plan = load_plan(grid, Project(root), tuned=sweep_chooser(Project(root)))
    assert not plan.pending and len(plan.runs) == 2 * len(RATES) + 2  # the sweeps, and seed 1 at each chosen rate
    evaluated = {e["run_id"] for e in records(root, "evals")}
    chosen = {r.run_id for r in plan.runs if plan.evaluations_of(r)}
    assert evaluated == chosen and len(chosen) == 4  # seeds 0 and 1 of each encoding
    # seed 0's run of the grid is the sweep's run at the chosen rate: one training, not two
    assert all(runs[i]["seed"] in (0, 1) for i in chosen)
    assert len({(runs[i]["encoding"], runs[i]["seed"]) for i in chosen}) == 4


def test_the_board_states_the_budget_and_each_page_lists_every_rate_tried(tuned):
    from suite.report.leaderboard import build
    from suite.report.pages import encoding_pages
    from suite.results.store import connect_readonly

    root, _, _ = tuned
    with connect_readonly(root / "results" / "posbench.duckdb") as con:
        lb = build(con)
        pages = {p["name"]: p for p in encoding_pages(con, lb)}
    (board,) = lb.of_kind("lm")
    assert {e.encoding for e in board.entries} == {"nope", "rope"}  # one board for both, whatever rate each chose
    assert any("best of 3 rates" in note for note in board.notes)
    runs = {r["run_id"]: r for r in records(root, "runs")}
    for name in ("nope", "rope"):
        sweep = pages[name]["sweeps"]
        assert sorted(r["lr"] for r in sweep) == RATES and sum(r["chosen"] for r in sweep) == 1
        for r in sweep:
            assert r["validation_loss"] == runs[r["run_id"]]["learning_curve"]["val_loss"][-1]
        chosen = next(r for r in sweep if r["chosen"])
        assert chosen["validation_loss"] == min(r["validation_loss"] for r in sweep)


def test_replicate_samples_a_tuned_grids_every_seed_not_its_sweeps_alone(tuned, tmp_path, text_folder):
    """`posbench replicate` maps each published run to the grid that plans it; a tuned grid plans
    its runs after the sweep at the rates its sweep records chose, so replicate plans it with the
    snapshot's own records (suite.submission.replicate.grids_of_runs). A project without records
    plans the sweeps alone: there seed 1's runs belonged to no grid, and were never sampled."""
    import shutil

    from suite.submission.replicate import grids_of_runs
    from tests.conftest import copy_specs

    root, grid, _ = tuned
    bare = copy_specs(tmp_path, text_folder)  # the project's files, no records
    shutil.copy(grid, bare / "grids" / "tuned.yaml")
    runs = {r["run_id"]: r for r in records(root, "runs")}
    mapped = grids_of_runs(["tuned"], Project(bare), records=Project(root))
    assert set(mapped) == set(runs) and all(grids == ["tuned"] for grids in mapped.values())
    assert {runs[i]["seed"] for i in mapped} == {0, 1}
    sweeps_alone = grids_of_runs(["tuned"], Project(bare))
    assert {runs[i]["seed"] for i in sweeps_alone} == {0} and len(sweeps_alone) == len(RATES) * 2
