"""suite.report.stats on hand-computed cases (t and normal quantiles from printed tables)."""

import math

import pytest
from scipy import stats

from suite.report.ranking import pairwise, rank_intervals
from suite.report.stats import (
    CLIPPED,
    Interval,
    all_at_chance,
    all_overlap,
    paired_comparison,
    sampling_variance,
    seed_interval,
    wilson_interval,
)


def test_seed_interval_is_the_student_t_interval():
    i = seed_interval([1.0, 2.0, 3.0])  # mean 2, sd 1, t(0.975, 2) = 4.303 (table)
    assert i.mean == 2.0 and i.n == 3
    assert i.half_width == pytest.approx(4.303 / math.sqrt(3), abs=1e-3)
    i = seed_interval([10.0, 12.0])  # sd sqrt(2), t(0.975, 1) = 12.706
    assert (i.lo, i.hi) == pytest.approx((11 - 12.706, 11 + 12.706), abs=1e-3)


def test_one_seed_has_no_interval_and_says_so():
    i = seed_interval([3.25, None])
    assert (i.mean, i.lo, i.hi, i.n, i.method) == (3.25, None, None, 1, "one seed")
    assert seed_interval([]).mean is None


def test_wilson_interval_of_8_in_10():
    i = wilson_interval(8, 10)  # the textbook case: [0.490, 0.943]
    assert (i.lo, i.hi) == pytest.approx((0.490, 0.943), abs=1e-3)
    assert wilson_interval(0, 20).lo == 0.0 and wilson_interval(0, 20).hi == pytest.approx(0.161, abs=1e-3)


def test_an_accuracy_on_400_examples_has_an_interval_narrower_than_a_tenth():
    assert wilson_interval(200, 400).hi - wilson_interval(200, 400).lo < 0.1


def test_paired_comparison_by_hand():
    a, b = {0: 1.0, 1: 2.0, 2: 3.0, 9: 5.0}, {0: 0.5, 1: 1.6, 2: 2.4}
    c = paired_comparison(a, b)  # differences 0.5, 0.4, 0.6: t = 0.5 / (0.1 / sqrt 3) = 8.660, df 2
    assert c.n_shared == 3 and c.mean_difference == pytest.approx(0.5)
    assert c.p_value == pytest.approx(0.01307, abs=2e-4) and c.significant()
    assert not paired_comparison({0: 1.0}, {0: 0.0}).significant()  # one shared seed: nothing is significant


def test_rank_intervals_show_what_the_paired_tests_cannot_separate():
    per_seed = {
        "best": {0: 1.00, 1: 1.10, 2: 0.90},
        "same": {0: 1.02, 1: 1.07, 2: 0.93},  # within noise of "best": either could be first
        "worse": {0: 1.50, 1: 1.62, 2: 1.41},  # consistently higher (lower is better)
        "empty": {0: None},
    }
    ranks = rank_intervals(pairwise(per_seed, lower_is_better=True))
    assert ranks == {"best": (1, 2), "same": (1, 2), "worse": (3, 3)}  # "empty" has no value: no rank
    flipped = rank_intervals(pairwise(per_seed, lower_is_better=False))
    assert flipped["worse"] == (1, 1) and flipped["best"] == flipped["same"] == (2, 3)


def test_one_seed_separates_no_rank():
    assert rank_intervals(pairwise({"a": {0: 1.0}, "b": {0: 9.0}}, lower_is_better=True)) == {"a": (1, 2), "b": (1, 2)}


def test_an_accuracy_interval_never_leaves_0_1():
    """0.522 +- 1.113 was possible: three seeds at 0.98, 0.03 and 0.556 have an sd of 0.47."""
    for values in ([0.98, 0.03, 0.556], [1.0, 1.0, 0.9], [0.0, 0.0, 0.05], [1.0, 0.0]):
        i = seed_interval(values, floor=0.0, share=True)
        assert 0.0 <= i.lo <= i.mean <= i.hi <= 1.0
    assert seed_interval([0.98, 0.03, 0.556], share=True).method == CLIPPED  # asymmetric now: shown as [lo, hi]
    assert seed_interval([0.5, 0.52, 0.48], share=True).method != CLIPPED  # inside: the plain t interval


def test_the_sampling_floor_widens_an_accuracy_that_agrees_on_every_seed():
    """Three runs at 90/100 agree exactly; each is still uncertain by sqrt(.9 .1 / 100)."""
    floor = sampling_variance(0.9, 100)
    i = seed_interval([0.9, 0.9, 0.9], floor=floor, share=True)
    assert i.half_width == pytest.approx(4.303 * math.sqrt(floor / 3), abs=1e-4)  # t(0.975, 2) = 4.303
    assert seed_interval([0.9, 0.9, 0.9]).half_width == 0  # no floor: no width


def test_a_difference_equal_on_every_seed_gets_the_p_of_its_sampling_error():
    """The old test gave p = 0 to any difference equal on every seed; with the floor it is
    the paired t-test of the difference against its sampling error (two shares of 100)."""
    a, b = {0: 0.99, 1: 0.99, 2: 0.99}, {0: 0.97, 1: 0.97, 2: 0.97}
    fa = {s: sampling_variance(0.99, 100) for s in a}
    fb = {s: sampling_variance(0.97, 100) for s in b}
    c = paired_comparison(a, b, fa, fb)
    se = math.sqrt((sampling_variance(0.99, 100) + sampling_variance(0.97, 100)) / 3)
    expected = 2 * stats.t.sf(0.02 / se, 2)
    assert c.p_value == pytest.approx(expected) and 0.1 < c.p_value < 1  # 0.02 is within the sampling noise
    assert not c.significant()
    assert paired_comparison(a, a, fa, fa).p_value == 1.0  # no difference at all
    assert paired_comparison({0: 1.0, 1: 2.0}, {0: 0.5, 1: 1.5}).p_value == 0.0  # no floor, no spread: the t limit


def test_the_board_tests_agree_with_one_paired_comparison():
    a, b = {0: 1.0, 1: 2.0, 2: 3.0, 9: 5.0}, {0: 0.5, 1: 1.6, 2: 2.4}
    tests = pairwise({"a": a, "b": b}, lower_is_better=True)
    assert tests.p[0] == pytest.approx(paired_comparison(a, b).p_value)
    assert tests.adjusted[0] == pytest.approx(tests.p[0])  # one pair: Holm changes nothing
    assert tests.better("b", "a") and not tests.better("a", "b")


def test_board_warnings():
    tight = [Interval(1.0, 0.9, 1.1, 3, ""), Interval(2.0, 1.9, 2.1, 3, "")]
    loose = [Interval(1.0, 0.5, 1.5, 3, ""), Interval(1.2, 0.8, 1.6, 3, "")]
    assert not all_overlap(tight) and all_overlap(loose)
    at_chance = [Interval(0.52, 0.45, 0.59, 3, ""), Interval(0.49, 0.44, 0.55, 3, "")]
    assert all_at_chance(at_chance, 0.5, lower_is_better=False)
    assert not all_at_chance(at_chance + [Interval(0.9, 0.85, 0.95, 3, "")], 0.5, lower_is_better=False)
