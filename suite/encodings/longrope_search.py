"""LongRoPE's evolutionary search for its rescale factors.

Ding et al. 2024, "LongRoPE", Sec. 3.2 and Algorithm 1, as the authors' code runs it
(microsoft/LongRoPE@c9e56aa, ``evolution/algorithms/genetic_base.py`` and ``dim_mono.py``, the
algorithm their examples search with): a population of factor vectors lambda [r/2], each
scored by the model's loss at the target length; every iteration keeps the best
``parents_size``, and adds ``mutation_numbers`` mutants and ``crossover_size`` crossovers of
them. The constraints are the paper's: lambda_i >= 1, non-decreasing in i (lower frequencies
are interpolated no less than higher ones), each value on a grid of step ``list_step``
within [1, 1 + s]. Mutation redraws each factor with probability 0.3 between its
neighbours; crossover takes each factor of the second parent with probability 0.3 x 0.5.
A candidate already scored is never scored again (the authors' ``history``: a candidate is
"already scored" when ``np.allclose`` to one in it, as their ``Individual.__eq__`` compares).

This is a re-implementation, not a copy: the authors score candidates on several GPUs
through sockets; here one process scores them in turn, so the loss of a candidate is
known at once instead of when its queue is joined (the populations are the same). Checked
against the authors' ``DimMonoGeneticAlgorithm`` itself, run with a fixed loss in place of its
evaluators (scripts/golden/longrope_search.py): the same candidates in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass
class Candidate:
    factors: np.ndarray
    loss: float


@dataclass
class SearchResult:
    factors: np.ndarray  # the best candidate of the last population
    loss: float
    start_loss: float  # the search's first candidate (its start factors)
    best_per_iteration: list[float] = field(default_factory=list)  # the authors' "PPL curve"
    evaluated: int = 0  # candidates scored


def monotone(factors: np.ndarray) -> bool:
    return bool(np.all(np.diff(factors) >= 0))


class DimMonoSearch:
    """The authors' ``DimMonoGeneticAlgorithm`` over ``fitness(factors) -> loss``."""

    def __init__(self, fitness: Callable[[np.ndarray], float], scale: float, params, seed: int):
        self.fitness, self.scale, self.p = fitness, float(scale), params
        self.rng = np.random.RandomState(seed)
        self.history: list[np.ndarray] = []
        self._made = np.empty((0, 0))  # the history as rows, with room to grow

    def seen(self, factors: np.ndarray) -> bool:
        """Whether ``factors`` was scored already, as the authors test it: ``Individual(new) in
        history`` runs ``item.__eq__(new)`` on every earlier candidate, i.e. ``np.allclose(item,
        new)`` (tolerance 1e-8 + 1e-5 |new|). A key rounded to 6 decimals is not the same: it
        tells apart values a few 1e-6 off the list_step grid that allclose calls equal (the
        golden's near-grid start)."""
        if not self.history:
            return False
        made = self._made[: len(self.history)]
        return bool(np.isclose(made, factors[None, :]).all(axis=1).any())

    def score(self, factors: np.ndarray) -> Candidate:
        n = len(self.history)
        if n == len(self._made):  # double the rows: appending one at a time would copy them all each time
            self._made = np.concatenate([self._made.reshape(n, len(factors)), np.empty((max(n, 64), len(factors)))])
        self._made[n] = factors
        self.history.append(factors)
        return Candidate(factors, float(self.fitness(factors)))

    def mutate(self, parent: Candidate) -> Candidate:
        step = self.p.list_step
        top = np.arange(1.0, 1.0 + self.scale + step, step).max()  # the authors' evo_list.max()
        new = parent.factors
        # the authors test the history first; both tests are pure (no random draw), so the cheap
        # one first gives the same answer
        while not monotone(new) or self.seen(new):
            for dim in range(len(new)):
                if self.rng.rand() < 0.3:
                    low = 1.0 if dim == 0 else new[dim - 1]
                    high = new[dim + 1] if dim == 0 else (top + step if dim == len(new) - 1 else new[dim + 1] + step)
                    choices = np.arange(low, high, step)
                    if len(choices):
                        new = new.copy()
                        new[dim] = choices[self.rng.randint(0, len(choices))]
        return self.score(new)

    def crossover(self, first: Candidate, second: Candidate) -> Candidate | None:
        if np.allclose(first.factors, second.factors):
            return None
        new = first.factors.copy()
        for _ in range(self.p.max_crossover_try):
            for i in range(len(new)):
                if self.rng.rand() < 0.3:
                    new = new.copy()
                    if self.rng.rand() < 0.5:
                        new[i] = second.factors[i]
                    if not monotone(new) or self.seen(new):
                        continue
                    return self.score(new)
        return None

    def run(self, start: np.ndarray) -> SearchResult:
        first = self.score(np.asarray(start, dtype=np.float64))
        population = [first] + [self.mutate(first) for _ in range(self.p.population_size - 1)]
        curve = []
        for _ in range(self.p.iterations):
            parents = sorted(population, key=lambda c: c.loss)[: self.p.parents_size]
            curve.append(parents[0].loss)
            population = list(parents)
            for _ in range(self.p.mutation_numbers):
                population.append(self.mutate(parents[self.rng.randint(len(parents))]))
            for _ in range(self.p.crossover_size):
                i, j = sorted(self.rng.choice(len(parents), 2, replace=False))
                child = self.crossover(parents[i], parents[j])
                population.append(child if child is not None else self.mutate(parents[i]))
        best = min(population, key=lambda c: c.loss)
        return SearchResult(best.factors, best.loss, first.loss, curve, len(self.history))
