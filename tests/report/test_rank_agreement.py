"""Rank agreement (suite.report.rank_agreement), tested by simulation against known truth:
per-seed figures drawn around true means chosen here, at two sizes or corpora; Kendall's tau and
its bootstrap interval checked against what those true means imply."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from suite.report.rank_agreement import agreement

ENCODINGS = ["a", "b", "c", "d", "e", "f"]
FAST = 200  # bootstrap resamples where a test reads a degenerate interval, not percentiles


def test_the_bootstrap_interval_covers_the_true_tau_of_a_partial_agreement():
    """True means that agree in part between the sizes (true tau 11/15 on 6 rows), per-seed noise
    of 1.5x the gap between neighbours, 6 seeds, so the estimates vary (measured 2026-11-29 with
    2,000 resamples, a seed drawn for every row of both sizes: mean width of the interval 0.56,
    coverage 0.93 over 150 ladders, mean estimate 0.68, shrunk towards 0 by the noise): over 60
    simulated ladders the 95% interval covers the true tau in most of them, and is not so wide
    that it covers by width alone."""
    rng = np.random.default_rng(4)
    small_means = {e: 0.4 * i for i, e in enumerate(ENCODINGS)}
    order = [0, 2, 1, 4, 3, 5]  # two adjacent swaps
    large_means = {e: 0.4 * order[i] for i, e in enumerate(ENCODINGS)}
    true_tau = kendalltau([small_means[e] for e in ENCODINGS], [large_means[e] for e in ENCODINGS]).statistic
    assert abs(true_tau - 11 / 15) < 1e-12  # 13 concordant, 2 discordant pairs: (13 - 2) / 15
    def draw(means):
        return {e: dict(enumerate(m + 0.6 * rng.standard_normal(6))) for e, m in means.items()}

    covered, estimates, widths = 0, [], []
    for trial in range(60):
        a = agreement(draw(small_means), draw(large_means), "large", lower_is_better=True, resamples=300, seed=trial)
        estimates.append(a.tau)
        widths.append(a.hi - a.lo)
        covered += a.lo <= true_tau <= a.hi
    assert 0.3 < np.mean(widths) < 0.8  # neither the point nor an interval that covers by its width
    assert covered >= 51  # 85% of 60
    assert abs(np.mean(estimates) - true_tau) < 0.15


def test_columns_of_the_same_seeds_are_resampled_together():
    """A seed draws the same training windows at every size, so two columns of the same seeds share
    noise. Here the larger size is the smaller one's figures plus a constant, seed by seed: every
    seed ranks the rows alike at both, so tau is 1 in every resample that draws the same seeds for
    both, and only an independent draw would put the interval below 1. Columns of other seeds
    (other runs) are drawn independently, and then it does."""
    rng = np.random.default_rng(17)
    small = {e: {s: 2.5 + 0.05 * i + rng.normal(0, 0.2) for s in range(6)} for i, e in enumerate(ENCODINGS)}
    large = {e: {s: v - 0.3 for s, v in values.items()} for e, values in small.items()}
    same = agreement(small, large, "small", True)
    assert same.tau == pytest.approx(1.0) and same.lo == pytest.approx(1.0) and same.hi == pytest.approx(1.0)
    other_runs = {e: {s + 100: v for s, v in values.items()} for e, values in large.items()}
    apart = agreement(small, other_runs, "small", True)
    assert apart.tau == pytest.approx(1.0) and apart.lo < 0.9


def test_seeds_only_one_size_trained_are_drawn_apart_from_those_both_trained():
    """Seeds 0-4 at both sizes (the larger: the smaller's figures less a constant, seed by seed) and
    a seed 5 only the smaller size trained, on which every row scores alike: it cannot move the
    order, so every resample that draws the shared seeds alike at both gives tau 1. Drawn
    independently, as columns of other runs are, the same figures give an interval below 1."""
    rng = np.random.default_rng(19)
    small = {e: {s: 2.5 + 0.05 * i + rng.normal(0, 0.2) for s in range(5)} | {5: 3.0} for i, e in enumerate(ENCODINGS)}
    large = {e: {s: v - 0.3 for s, v in values.items() if s < 5} for e, values in small.items()}
    a = agreement(small, large, "small", True)
    assert a.seeds == 5 and (a.tau, a.lo, a.hi) == pytest.approx((1.0, 1.0, 1.0))
    apart = agreement(small, {e: {s + 100: v for s, v in values.items()} for e, values in large.items()}, "small", True)
    assert apart.lo < 0.9  # the same figures as other runs: nothing shared, nothing drawn alike


def test_a_rows_extra_seeds_do_not_move_it_in_the_order():
    """At the smaller size rows a-c trained seeds 0-5 and rows d-f seeds 0-2, and seeds 3-5 are hard
    for every row (+1 bit: a shared seed effect); the true order is the same at both sizes. Means
    over each row's own seeds would move a-c half a bit down the order (tau -0.2 against the true
    one); over the seeds every row has, the order is the true one."""
    rng = np.random.default_rng(20)
    true = {e: 2.5 + 0.1 * i for i, e in enumerate(ENCODINGS)}
    small = {e: {s: m + rng.normal(0, 0.01) + (1.0 if s >= 3 else 0.0) for s in range(6 if e in "abc" else 3)}
             for e, m in true.items()}
    large = {e: {s: m - 0.3 + rng.normal(0, 0.01) for s in range(3)} for e, m in true.items()}
    a = agreement(small, large, "small", True, resamples=FAST)
    assert a.seeds == 3 and a.tau == pytest.approx(1.0)
    own = {e: float(np.mean(list(v.values()))) for e, v in small.items()}
    assert kendalltau([own[e] for e in ENCODINGS], [true[e] for e in ENCODINGS]).statistic < 0  # what it would read


def test_an_intervals_ends_are_taus_a_resample_gave():
    """Percentiles of the draws themselves: on 11 rows without ties tau-b is a multiple of 1/55, and
    so is each end (with this draw, interpolated, the lower end was 0.490, between 25/55 and 27/55)."""
    rng = np.random.default_rng(18)
    rows = [f"r{i:02d}" for i in range(11)]
    small = {e: {s: 2.5 + 0.05 * i + rng.normal(0, 0.15) for s in range(6)} for i, e in enumerate(rows)}
    large = {e: {s + 100: 2.5 + 0.05 * i + rng.normal(0, 0.15) for s in range(6)} for i, e in enumerate(rows)}
    a = agreement(small, large, "small", True)
    assert a.lo < a.hi
    for end in (a.lo, a.hi):
        assert end * 55 == pytest.approx(round(end * 55))


def test_a_seed_effect_every_row_shares_leaves_the_interval_as_it_is():
    """A seed's runs share their data, so a seed can be easy or hard for every row at once: the
    bootstrap draws the same seeds for every row of a size, and adding such an effect (large:
    twice the gaps) to every row changes neither tau nor its interval. Drawing each row's seeds
    on its own would widen the interval by that effect's spread."""
    rng = np.random.default_rng(14)
    small_means = {e: 0.4 * i for i, e in enumerate(ENCODINGS)}
    large_means = {e: 0.4 * [0, 2, 1, 4, 3, 5][i] for i, e in enumerate(ENCODINGS)}
    noise = lambda means: {e: m + 0.3 * rng.standard_normal(6) for e, m in means.items()}  # noqa: E731
    small, large = noise(small_means), noise(large_means)
    effect_small, effect_large = 0.8 * rng.standard_normal(6), 0.8 * rng.standard_normal(6)
    as_seeds = lambda values, shift: {e: dict(enumerate(v + shift)) for e, v in values.items()}  # noqa: E731
    plain = agreement(as_seeds(small, 0.0), as_seeds(large, 0.0), "large", True, resamples=500, seed=3)
    shared = agreement(as_seeds(small, effect_small), as_seeds(large, effect_large), "large", True,
                       resamples=500, seed=3)
    assert plain.lo < plain.hi  # an interval with width, which the effect could have widened
    assert (shared.tau, shared.lo, shared.hi) == pytest.approx((plain.tau, plain.lo, plain.hi))


def test_the_interval_covers_a_true_tau_of_1_when_the_noise_is_below_the_gaps():
    """The same true order at both sizes (tau 1), five rows 0.4 apart, 6 seeds, independent noise
    of 0.5 a seed: the percentile interval of the measured means' tau covers 1 in most ladders
    (measured 2026-11-29 with 2,000 resamples: 140 of 150 ladders, mean lower end 0.44; at noise
    0.8, twice the gap, 110 of 150: the module docstring says so), and its lower end is not that of
    an interval wide enough to cover anything."""
    rng = np.random.default_rng(15)
    means = {e: 0.4 * i for i, e in enumerate(ENCODINGS[:5])}
    covered, lows = 0, []
    for trial in range(60):
        draw = lambda: {e: dict(enumerate(m + 0.5 * rng.standard_normal(6))) for e, m in means.items()}  # noqa: E731
        a = agreement(draw(), draw(), "large", lower_is_better=True, resamples=300, seed=trial)
        covered += a.hi > 1.0 - 1e-9  # tau's largest value, as the float scipy returns it
        lows.append(a.lo)
    assert covered >= 54  # 90% of 60
    assert np.mean(lows) > 0.2
