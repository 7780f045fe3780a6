"""grids/ladder.yaml, the size ladder of issue 35, planned: three sizes spanning at least 25x in
weights, the steps rule its description states (and the tokens per weight that rule gives), and
a three-rate sweep for every (encoding, size, task). Planned only (its CPU cost is stated in
docs/benchmarks.md)."""

from __future__ import annotations

from pathlib import Path

from suite.plan.estimate import matmul_params
from suite.plan.grid import expand
from suite.specs import Project, load_grid

from tests.conftest import REPO

CORE = {"nope", "sinusoidal", "learned", "rope", "rope-pi", "rope-ntk", "yarn", "rope-dynamic-ntk", "alibi", "t5",
        "kerple-log", "fire", "xpos", "cope", "randomized", "fox", "stick-breaking"}


def ladder():
    return load_grid(REPO / "grids" / "ladder.yaml", Project(REPO))


def test_the_sizes_span_at_least_25x_in_weights_and_the_core_encodings_are_on_it():
    grid = ladder()
    weights = [matmul_params(s) for s in grid.sizes]
    assert weights == sorted(weights) and weights[-1] / weights[0] >= 25
    assert CORE <= {e.name for e in grid.encodings}


def test_steps_follow_the_stated_rule_and_every_group_has_its_sweep():
    grid = ladder()
    rates = grid.spec.tuning.lr
    plan = expand(grid, tuned=lambda sweep: rates[1])  # a rate for every group: the whole grid
    first = grid.sizes[0]
    exponent = grid.spec.steps_weight_exponent
    assert exponent == 0.5  # what the description states: tokens grow as the square root of the weights
    for run in plan.runs:
        base = grid.spec.train.steps if run.task.name == "lm" else grid.spec.recipe_for(run.task.name).steps
        assert run.train.steps == round(base * (matmul_params(run.size) / matmul_params(first)) ** exponent)
    groups = {(r.encoding.name, r.size.name, r.task.name) for r in plan.runs}
    assert len(groups) == 13 * 3 * 3  # the trained encodings (training-free ones evaluate RoPE's) x sizes x tasks
    for group in groups:
        mine = [r for r in plan.runs if (r.encoding.name, r.size.name, r.task.name) == group]
        assert sorted(r.train.lr for r in mine if r.seed == grid.spec.tuning.seed) == rates
        assert {r.seed for r in mine} == set(grid.spec.seeds)
        assert all(r.train.lr == rates[1] for r in mine if r.seed != grid.spec.tuning.seed)


def test_the_description_states_the_tokens_per_weight_the_rule_gives():
    """Exponent 0.5 does not keep tokens per weight: the description once said it did."""
    grid = ladder()
    plan = expand(grid, tuned=lambda sweep: grid.spec.tuning.lr[1])
    text = " ".join(grid.spec.description.split())
    assert "same tokens per weight" not in text
    for task in ("lm", "flip_flop", "passkey"):
        for size in grid.sizes:
            run = next(r for r in plan.runs if r.task.name == task and r.size.name == size.name)
            tokens = run.train.steps * run.train.batch_size * run.train.seq_len
            assert f"{run.train.steps:,}" in text
            assert f"{tokens / matmul_params(size):.1f}" in text, (task, size.name)
