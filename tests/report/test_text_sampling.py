"""Text sampling in the intervals and paired tests, calibrated by simulation against known truth.

The model the statistics assume (suite.report.stats, "Text sampling"): a figure of seed s on
passage d is mu + a_s + t_d + e_sd, every seed reading the same passages, the passages drawn
from the corpus. The truth an interval should cover is mu, the figure over new seeds *and*
new text. The simulations plant mu (and, for a pair of rows, their true difference), draw
seeds and passages, and count how often the interval covers the truth, and how often a paired
test between two equal rows calls a difference. Deterministic (seeded numpy Generators).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from suite.report.ranking import pairwise
from suite.report.stats import ALPHA, PASSAGES, WINDOW_BOUND, paired_comparison, seed_interval, text_variance

TRIALS = 2000


def draw(rng, seeds: int, passages: int, seed_sd: float, text_sd: float, noise_sd: float, mu: float = 3.0):
    """One board cell: seeds x passages figures under the crossed model."""
    a = rng.normal(0, seed_sd, (seeds, 1))
    t = rng.normal(0, text_sd, (1, passages))
    return mu + a + t + rng.normal(0, noise_sd, (seeds, passages))


def covered(y: np.ndarray, mu: float, with_text: bool) -> bool:
    runs = {s: row for s, row in enumerate(y)}
    text = text_variance(runs, None, list(runs)) if with_text else None
    interval = seed_interval([float(row.mean()) for row in y], text=text)
    return interval.lo <= mu <= interval.hi


@pytest.mark.parametrize("seeds,passages,seed_sd,text_sd", [
    (3, 16, 0.02, 0.3),  # text dominates: the published first-16-KB regime at 16x
    (5, 64, 0.05, 0.2),
    (10, 32, 0.1, 0.05),  # seeds dominate
])
def test_the_interval_with_text_sampling_covers_the_truth_95_percent_of_the_time(seeds, passages, seed_sd, text_sd):
    rng = np.random.default_rng(1000 * seeds + passages)
    hits = sum(covered(draw(rng, seeds, passages, seed_sd, text_sd, 0.05), 3.0, True) for _ in range(TRIALS))
    # 2000 trials: the rate's standard error is 0.005; the estimate counts var(e)/(kP) twice (conservative)
    assert 0.93 <= hits / TRIALS <= 0.99


def test_an_interval_over_seeds_alone_misses_the_truth_when_the_text_varies():
    """Why the term is there: three seeds on one sample of text, whose passages vary 15x more
    than the seeds do, cover the corpus's figure far less often than they claim."""
    rng = np.random.default_rng(7)
    hits = sum(covered(draw(rng, 3, 16, 0.02, 0.3, 0.05), 3.0, False) for _ in range(TRIALS))
    assert hits / TRIALS < 0.5


def pair(rng, seeds, passages, shared_text_sd, interaction_sd, difference=0.0):
    """Two rows on the same seeds and passages: text difficulty they share, plus how differently
    the two read each passage (the interaction), plus each run's noise."""
    shared = rng.normal(0, shared_text_sd, (1, passages))
    seed_effect = rng.normal(0, 0.02, (seeds, 1))  # a seed's data order, shared by the rows
    rows = []
    for mean in (3.0, 3.0 + difference):
        own = rng.normal(0, interaction_sd, (1, passages))
        rows.append(mean + seed_effect + rng.normal(0, 0.02, (seeds, 1)) + shared + own
                    + rng.normal(0, 0.02, (seeds, passages)))
    return [{s: row for s, row in enumerate(r)} for r in rows]


def calls_a_difference(a, b, with_text: bool) -> bool:
    means = [{s: float(v.mean()) for s, v in r.items()} for r in (a, b)]
    c = paired_comparison(means[0], means[1], text_a=a if with_text else None, text_b=b if with_text else None)
    return c.p_value < ALPHA


def test_a_paired_test_of_equal_rows_with_text_sampling_errs_at_most_5_percent():
    rng = np.random.default_rng(11)
    false = sum(calls_a_difference(*pair(rng, 5, 32, 0.5, 0.1), True) for _ in range(TRIALS))
    assert false / TRIALS <= ALPHA + 0.01


def test_a_paired_test_over_seeds_alone_errs_often_when_rows_read_passages_differently():
    rng = np.random.default_rng(12)
    false = sum(calls_a_difference(*pair(rng, 5, 32, 0.5, 0.3), False) for _ in range(TRIALS))
    assert false / TRIALS > 0.3


def test_text_the_rows_share_cancels_in_a_paired_test():
    """Passages that are hard for every row do not weaken a comparison: the same draws with
    and without a large shared text effect give the same p-value, and a true difference of
    0.1 is found nearly always."""
    def p_value(shared_sd, trial):
        a, b = pair(np.random.default_rng(trial), 5, 64, shared_sd, 0.02, difference=0.1)
        means = [{s: float(v.mean()) for s, v in r.items()} for r in (a, b)]
        return paired_comparison(means[0], means[1], text_a=a, text_b=b).p_value

    ps = [(p_value(0.0, trial), p_value(1.0, trial)) for trial in range(400)]
    assert all(without == pytest.approx(with_shared, rel=1e-6, abs=1e-12) for without, with_shared in ps)
    assert sum(p < ALPHA for p, _ in ps) / len(ps) > 0.9


def test_the_window_bound_without_passages_is_conservative_for_rows_that_share_text():
    """Records of the first-bytes design keep only each run's window error: the bound treats
    two rows' errors as independent, which overstates a difference's text variance when the
    rows share their text's difficulty, so equal rows are called different less than 5% of
    the time."""
    rng = np.random.default_rng(14)
    false = 0
    for _ in range(TRIALS):
        a, b = pair(rng, 5, 16, 0.3, 0.1)
        bound = [{s: float(v.var(ddof=1) / len(v)) for s, v in r.items()} for r in (a, b)]
        means = [{s: float(v.mean()) for s, v in r.items()} for r in (a, b)]
        false += paired_comparison(means[0], means[1], text_a=bound[0], text_b=bound[1]).p_value < ALPHA
    assert false / TRIALS <= ALPHA


def test_text_variance_says_how_it_was_estimated():
    passages = {0: np.array([1.0, 2.0, 3.0]), 1: np.array([1.5, 2.0, 2.5])}
    tv = text_variance(passages, None, [0, 1])
    assert tv.method == PASSAGES and tv.dof == 2
    assert tv.variance == pytest.approx(np.var([1.25, 2.0, 2.75], ddof=1) / 3)
    bound = text_variance({0: 0.01, 1: 0.03}, {0: 0.02, 1: 0.02}, [0, 1])
    assert bound.method == WINDOW_BOUND and math.isinf(bound.dof) and bound.variance == pytest.approx(0.04)
    assert text_variance(passages, None, [0, 1, 2]) is None  # a seed without text: nothing to add


def test_a_board_of_equal_rows_with_shared_text_declares_a_difference_on_at_most_5_percent_of_boards():
    """The board's Holm-corrected pairwise tests with the text term: 6 equal rows, 5 seeds,
    32 passages each, rows reading passages differently."""
    rng = np.random.default_rng(15)
    boards, hits = 300, 0
    for _ in range(boards):
        shared = rng.normal(0, 0.5, (1, 32))
        rows = {f"r{k}": {s: 3.0 + shared[0] + row for s, row in
                          enumerate(rng.normal(0, 0.02, (5, 1)) + rng.normal(0, 0.1, (1, 32)))}
                for k in range(6)}
        per_seed = {n: {s: float(v.mean()) for s, v in r.items()} for n, r in rows.items()}
        hits += bool(pairwise(per_seed, lower_is_better=True, text=rows).wins.any())
    assert hits / boards <= ALPHA
