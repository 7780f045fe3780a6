"""The pure summary scores (suite.report.scores): hand-computed cases."""

import pytest

from suite.report.scores import effective_length, extrapolation_score, summarize


def test_extrapolation_score():
    assert extrapolation_score({1: 0.8, 2: 0.4, 4: 0.2}) == pytest.approx((0.5 + 0.25) / 2)
    assert extrapolation_score({1: 2.0, 2: 2.5, 4: 4.0}, lower_is_better=True) == pytest.approx((0.8 + 0.5) / 2)
    assert extrapolation_score({1: 2.0, 2: 1.6}, lower_is_better=True) == pytest.approx(1.25)  # better with context
    assert extrapolation_score({1: 0.5, 2: 0.5, 4: None}) == pytest.approx(0.5)  # not applicable retains nothing
    assert extrapolation_score({1: 0.0, 2: 0.0}) is None  # no skill to retain
    assert extrapolation_score({1: 0.5}) is None and extrapolation_score({2: 0.5}) is None


def test_effective_length():
    assert effective_length({1: 1.0, 2: 0.95, 4: 0.89, 8: 0.95}) == 2  # 4 drops below 90%: 8 does not count
    assert effective_length({1: 1.0, 2: 0.9}) == 2  # the tolerance is inclusive
    assert effective_length({1: 0.5, 2: 0.1}, tolerance=0.9) == 2
    assert effective_length({1: 2.0, 2: 2.2, 4: 2.3}, lower_is_better=True) == 2
    assert effective_length({1: 1.0, 2: None, 4: 1.0}) == 1
    assert effective_length({1: 0.0, 2: 0.0}) is None and effective_length({2: 1.0}) is None


def test_effective_length_with_an_absolute_threshold():
    """RULER's fixed threshold and NoLiMa's share of the 1x score, both at once."""
    within_share_only = {1: 0.52, 2: 0.50, 4: 0.48, 8: 0.47}  # every scale within 10% of 1x
    assert effective_length(within_share_only) == 8
    assert effective_length(within_share_only, absolute=0.5) == 2  # 4x falls below 50%
    assert effective_length({1: 0.4, 2: 0.4}, absolute=0.5) == 0  # short of the threshold at 1x already
    assert effective_length({1: 0.0, 2: 0.0}, absolute=0.5) == 0  # defined: below the threshold
    assert effective_length({1: 0.9, 2: 0.85, 4: 0.6}, absolute=0.5) == 2  # 4x: above 50%, not within 10%
    assert effective_length({1: 2.0, 2: 2.1, 4: 2.15}, lower_is_better=True, absolute=2.12) == 2


def test_summarize_reads_long_form_rows():
    rows = [{"task": "copy", "metric": "acc", "scale": s, "value": v} for s, v in ((1, 0.8), (2, 0.6), (4, 0.2))]
    rows += [{"task": "lm", "metric": "bpb", "scale": s, "value": v} for s, v in ((1, 2.0), (2, 2.1))]
    assert summarize(rows) == [
        {"task": "copy", "metric": "acc", "tolerance": 0.1, "extrapolation_score": pytest.approx(0.5),
         "effective_length": 1},
        {"task": "lm", "metric": "bpb", "tolerance": 0.1, "extrapolation_score": pytest.approx(2 / 2.1),
         "effective_length": 2},
    ]
