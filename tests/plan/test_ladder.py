"""The size ladders, planned: grids/ladder-lm*.yaml (language modelling: three sizes spanning at
least 25x in weights by the square-root step rule, the question's rows at both budgets and a
fourth rung) and grids/ladder-tasks.yaml (the synthetic tasks at fixed steps), each with a
three-rate sweep for every (encoding, size, task), and a plan run one rung at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from suite.plan.estimate import matmul_params
from suite.plan.grid import expand
from suite.specs import Project, load_grid

from tests.conftest import REPO

CORE = {"nope", "sinusoidal", "learned", "rope", "rope-pi", "rope-ntk", "yarn", "rope-dynamic-ntk", "alibi", "t5",
        "kerple-log", "fire", "xpos", "cope", "randomized", "fox", "stick-breaking"}


def ladder():
    return load_grid(REPO / "grids" / "ladder-tasks.yaml", Project(REPO))


def test_the_sizes_span_at_least_25x_in_weights_and_the_core_encodings_are_on_it():
    grid = ladder()
    weights = [matmul_params(s) for s in grid.sizes]
    assert weights == sorted(weights) and weights[-1] / weights[0] >= 25
    assert CORE <= {e.name for e in grid.encodings}


def test_every_size_trains_the_tasks_own_steps_and_every_group_has_its_sweep():
    """Fixed steps (steps_weight_exponent 0): a bigger model sees the same examples."""
    grid = ladder()
    rates = grid.spec.tuning.lr
    plan = expand(grid, tuned=lambda sweep: rates[1])  # a rate for every group: the whole grid
    assert grid.spec.steps_weight_exponent == 0 and {t.name for t in grid.tasks} == {"flip_flop", "passkey"}
    text = " ".join(grid.spec.description.split())
    for run in plan.runs:
        assert run.train.steps == grid.spec.recipe_for(run.task.name).steps
        assert f"{run.train.steps:,} steps" in text
    groups = {(r.encoding.name, r.size.name, r.task.name) for r in plan.runs}
    assert len(groups) == 13 * 3 * 2  # the trained encodings (training-free ones evaluate RoPE's) x sizes x tasks
    for group in groups:
        mine = [r for r in plan.runs if (r.encoding.name, r.size.name, r.task.name) == group]
        assert sorted(r.train.lr for r in mine if r.seed == grid.spec.tuning.seed) == rates
        assert {r.seed for r in mine} == set(grid.spec.seeds)
        assert all(r.train.lr == rates[1] for r in mine if r.seed != grid.spec.tuning.seed)


LM_ROWS = {"nope", "sinusoidal", "learned", "t5", "rope", "rope-ntk", "yarn", "alibi", "xpos", "fire", "kerple-log",
           "cope"}
QUESTION = {"nope", "rope", "rope-ntk", "yarn", "alibi"}


def lm_ladder(name: str):
    return load_grid(REPO / "grids" / f"{name}.yaml", Project(REPO))


def whole(grid):
    return expand(grid, tuned=lambda sweep: grid.spec.tuning.lr[1])


def test_the_lm_ladder_has_its_twelve_rows_at_three_sizes_by_the_square_root_rule():
    grid = lm_ladder("ladder-lm")
    assert {e.name for e in grid.encodings} == LM_ROWS and len(grid.spec.seeds) >= 3
    weights = [matmul_params(s) for s in grid.sizes]
    assert weights == sorted(weights) and weights[-1] / weights[0] >= 25
    steps = {r.size.name: r.train.steps for r in whole(grid).runs}
    assert steps == {"tiny": 600, "small": 1604, "medium": 3175}
    text = " ".join(grid.spec.description.split())
    assert all(f"{s:,}" in text for s in steps.values())
    assert grid.spec.eval.passages and grid.spec.tuning.lr == [0.001, 0.003, 0.01]


def test_the_question_rows_have_six_seeds_both_budgets_on_every_rung_and_a_fourth_rung():
    question = lm_ladder("ladder-lm-question")
    assert {e.name for e in question.encodings} == QUESTION and len(question.spec.seeds) >= 6
    sqrt_rule = {(r.size.name, r.train.steps) for r in whole(question).runs}
    assert {s for s, _ in sqrt_rule} == {"tiny", "small", "medium", "large"}
    assert matmul_params(question.sizes[-1]) > 2 * matmul_params(question.sizes[-2])
    other = {(r.size.name, r.train.steps) for g in ("ladder-lm-budget", "ladder-lm-budget-medium")
             for r in whole(lm_ladder(g)).runs}
    assert other == {("tiny", 3175), ("small", 3175), ("medium", 600)}
    assert all(len(lm_ladder(g).spec.seeds) >= 6 for g in ("ladder-lm-budget", "ladder-lm-budget-medium"))
    # seeds 0-2 of the question rows at the first three sizes are ladder-lm's runs
    shared = {r.run_id for r in whole(lm_ladder("ladder-lm")).runs} & {r.run_id for r in whole(question).runs}
    assert len(shared) == 3 * 3 * 3 + 3 * 3 * 2  # 3 trained rows x 3 sizes x seeds 0-2, and the sweep's 2 other rates


def test_a_rung_of_a_plan_is_its_runs_evaluations_and_waiting_sweeps_at_that_size():
    grid = lm_ladder("ladder-lm")
    plan = expand(grid)  # nothing trained: every group waits for its sweep
    tiny = plan.of_sizes(["tiny"])
    assert tiny.runs and {r.size.name for r in tiny.runs} == {"tiny"}
    assert all(e.run.size.name == "tiny" for e in tiny.evaluations)
    assert tiny.pending and all(g.split("/")[1] == "tiny" for g in tiny.pending)
    assert len(tiny.runs) * 3 == len(plan.runs)


def test_a_rung_is_published_whole_or_left_out_a_missing_piece_or_a_pending_sweep_keeps_it_out():
    """`posbench publish --whole-sizes`: a size goes into the snapshot only with every piece of it
    recorded; the others are left out, each with its missing pieces counted."""
    grid = lm_ladder("ladder-lm")
    sizes = [s.name for s in grid.sizes]
    waiting = expand(grid)  # nothing trained: every size's sweeps pending, their chosen runs unplanned
    kept, left = waiting.at_whole_sizes(sizes, lambda piece: True)
    assert list(left) == sizes and not kept.runs and not kept.evaluations and not kept.pending
    assert left["tiny"] == len(waiting.of_sizes(["tiny"]).pending) > 0
    rates = grid.spec.tuning.lr
    plan = expand(grid, tuned=lambda sweep: rates[1])  # every sweep chosen: the whole grid
    assert plan.at_whole_sizes(sizes, lambda piece: True) == (plan, {})
    gap = plan.of_sizes(["small"]).evaluations[0]
    kept, left = plan.at_whole_sizes(sizes, lambda piece: piece != gap)
    assert left == {"small": 1}
    # a run whose training failed is recorded so, and is never evaluated: its rung is whole without them
    failed = gap.run
    unevaluated = lambda piece: getattr(piece, "run", None) != failed  # noqa: E731
    assert plan.at_whole_sizes(sizes, unevaluated)[1] == {"small": len(plan.evaluations_of(failed))}
    assert plan.at_whole_sizes(sizes, unevaluated, failed=lambda run: run == failed) == (plan, {})
    assert {r.size.name for r in kept.runs} == {e.run.size.name for e in kept.evaluations} == {"tiny", "medium"}
    assert len(kept.runs) == len(plan.runs) - len(plan.of_sizes(["small"]).runs) > 0


def test_plan_of_one_rung_costs_that_rung_and_refuses_a_size_the_grid_lacks(capsys):
    """`posbench plan GRID --size S`: the rung's pieces and their estimate, the whole grid's
    split between its rungs; an unknown size is named, exit 1."""
    from suite.cli.main import main
    from suite.plan.estimate import _hours, estimate

    grid = lm_ladder("ladder-lm")
    plan = whole(grid)
    hours = []
    for size in ("tiny", "small", "medium"):
        assert main(["--root", str(REPO), "plan", str(REPO / "grids" / "ladder-lm.yaml"), "--size", size]) == 0
        out = " ".join(capsys.readouterr().out.split())
        rung = plan.of_sizes([size])
        hours.append(estimate(rung.runs, rung.evaluations).cpu_hours())
        assert f"{_hours(hours[-1])} CPU-hours on " in out and f"the pieces of size {size}" in out
    assert sum(hours) == pytest.approx(estimate(plan.runs, plan.evaluations).cpu_hours())
    assert main(["--root", str(REPO), "plan", str(REPO / "grids" / "ladder-lm.yaml"), "--size", "huge"]) == 1
    assert "--size 'huge' is not a size of the grid (tiny, small, medium)" in capsys.readouterr().err
