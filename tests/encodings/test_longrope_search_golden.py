"""LongRoPE's search against the authors' genetic algorithm (golden values:
scripts/golden/longrope_search.py, microsoft/LongRoPE@c9e56aa ``DimMonoGeneticAlgorithm``
executed as written with a closed-form loss in place of its GPU evaluators; Ding et al. 2024,
Sec. 3.2, Algorithm 1)."""

from __future__ import annotations

import numpy as np
import pytest

from suite.encodings.longrope import LongRopeParams
from suite.encodings.longrope_search import DimMonoSearch

from tests.encodings.helpers import golden

G = golden("longrope-search")
RUNS = [(case["start_name"], case["start"], run) for case in G["cases"] for run in case["runs"]]


def fixed_loss(factors: np.ndarray) -> float:
    """The golden's evaluator, from its stored formula and parameters:
    sum_i w_i (l_i - t_i)^2 + c (sum_i (l_i - t_i))^2."""
    e = G["evaluator"]
    assert e["formula"] == "sum_i w_i (l_i - t_i)^2 + c (sum_i (l_i - t_i))^2"
    err = np.asarray(factors, dtype=np.float64) - np.asarray(e["t"])
    return float(np.sum(np.asarray(e["w"]) * err ** 2) + e["c"] * np.sum(err) ** 2)


def params() -> LongRopeParams:
    h = G["hyper_params"]
    assert h["evo_scale"] == 1.0  # the authors multiply every count by it
    return LongRopeParams(population_size=h["population_size"], iterations=h["max_time_budget"],
                          mutation_numbers=h["mutation_numbers"], crossover_size=h["crossover_size"],
                          parents_size=h["parents_size"], max_crossover_try=h["max_crossover_try"],
                          list_step=h["list_step"])


@pytest.mark.parametrize("start_name, start, run", RUNS, ids=[f"{name}-seed{run['seed']}" for name, _, run in RUNS])
def test_the_search_scores_the_authors_candidates_in_their_order(start_name, start, run):
    """Same seed, start and fitness: every candidate the authors' algorithm scored, in the same
    order, with the same loss; the same best per iteration; the same result. From the
    near-grid start this holds only if a candidate counts as scored when np.allclose to one
    in the history, as the authors' ``Individual.__eq__`` has it."""
    scored = []

    def fitness(factors: np.ndarray) -> float:
        value = fixed_loss(factors)
        scored.append((factors.copy(), value))
        return value

    result = DimMonoSearch(fitness, scale=G["scale"], params=params(), seed=run["seed"]).run(np.asarray(start))
    assert len(scored) == len(run["scored_factors"]) == result.evaluated
    for i, ((ours, our_loss), theirs, their_loss) in enumerate(zip(scored, run["scored_factors"], run["scored_losses"])):
        assert np.array_equal(ours, np.asarray(theirs)), f"candidate {i}: {ours.tolist()} != {theirs}"
        assert our_loss == their_loss, f"candidate {i}"
    assert result.best_per_iteration == run["best_per_iteration"]
    assert np.array_equal(result.factors, np.asarray(run["final_factors"]))
    assert result.loss == run["final_loss"]
    assert result.start_loss == run["scored_losses"][0]


def test_the_golden_exercises_the_search():
    """The golden's runs are not trivial: the authors' history rejected candidates already made,
    crossovers gave up and fell back to mutation, and the search got well below its start."""
    assert [case["start_name"] for case in G["cases"]] == ["yarn", "near-grid"]
    for _, _, run in RUNS:
        assert run["history_hits"] > 0 and run["crossover_fallbacks"] > 0
        assert run["final_loss"] < 0.2 * run["scored_losses"][0]
        assert len({tuple(f) for f in run["scored_factors"]}) == len(run["scored_factors"])
