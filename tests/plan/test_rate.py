"""One core's training step time, the power law posbench plan costs training with
(suite.plan.rate): fitted to the committed bench records, it reproduces each of them, spans the
sizes plans use on the CPU, and is the one suite.plan.estimate.CPU states. No wall-clock
assertion: the figures are those of the records."""

from __future__ import annotations

import pytest

from suite.plan.estimate import CPU
from suite.plan.rate import fit, step_points
from tests.plan.test_calibrate_plan import load_calibration

TOLERANCE = 0.10  # the fit's largest miss on its own points is 6% (medium)


@pytest.fixture(scope="module")
def calibration():
    return load_calibration()


@pytest.fixture(scope="module")
def points(calibration):
    return step_points(calibration.fit_records())


def test_the_fit_reproduces_every_measured_point(points):
    scale, exponent = fit(points)
    for p in points:
        assert scale * p.flops**exponent == pytest.approx(p.seconds, rel=TOLERANCE), p.shape


def test_the_points_span_tiny_to_base_and_the_ladder_between(points, calibration):
    assert [p.shape for p in points] == ["tiny 16x64", "small 16x64", "medium 16x64", "base 16x64"]
    assert points[0].records > 1  # the published bench records at tiny and this folder's
    assert len(list(calibration.FIT_RECORDS.glob("*.json"))) == 4


def test_plan_states_the_fit_of_the_committed_records(points):
    scale, exponent = fit(points)
    assert CPU.step_scale == pytest.approx(scale, rel=1e-3) and CPU.step_exponent == pytest.approx(exponent, abs=1e-4)


def test_a_bigger_model_is_slower_a_step_but_faster_a_flop(points):
    rates = [p.flops / CPU.step_seconds(p.flops) for p in points]
    assert rates == sorted(rates) and 0 < CPU.step_exponent < 1
