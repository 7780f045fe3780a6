"""suite.report.stats on hand-computed cases (t and normal quantiles from printed tables)."""

import math

import pytest

from suite.report.stats import (
    Interval,
    all_at_chance,
    all_overlap,
    paired_comparison,
    rank_with_ties,
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


def test_ranks_show_statistical_ties_as_ties():
    per_seed = {
        "best": {0: 1.00, 1: 1.10, 2: 0.90},
        "same": {0: 1.02, 1: 1.07, 2: 0.93},  # within noise of "best": tied with it
        "worse": {0: 1.50, 1: 1.62, 2: 1.41},  # consistently higher (lower is better)
        "empty": {0: None},
    }
    assert rank_with_ties(per_seed, lower_is_better=True) == {"best": 1, "same": 1, "worse": 3, "empty": None}
    flipped = rank_with_ties(per_seed, lower_is_better=False)
    assert flipped["worse"] == 1 and flipped["best"] == flipped["same"] == 2


def test_one_seed_ranks_everything_first():
    assert set(rank_with_ties({"a": {0: 1.0}, "b": {0: 9.0}}, lower_is_better=True).values()) == {1}


def test_board_warnings():
    tight = [Interval(1.0, 0.9, 1.1, 3, ""), Interval(2.0, 1.9, 2.1, 3, "")]
    loose = [Interval(1.0, 0.5, 1.5, 3, ""), Interval(1.2, 0.8, 1.6, 3, "")]
    assert not all_overlap(tight) and all_overlap(loose)
    at_chance = [Interval(0.52, 0.45, 0.59, 3, ""), Interval(0.49, 0.44, 0.55, 3, "")]
    assert all_at_chance(at_chance, 0.5, lower_is_better=False)
    assert not all_at_chance(at_chance + [Interval(0.9, 0.85, 0.95, 3, "")], 0.5, lower_is_better=False)
