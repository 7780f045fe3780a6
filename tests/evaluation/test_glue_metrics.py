"""GLUE metrics against hand-computed cases, degenerate inputs, and GLUE's averages."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from suite.evaluation.glue_metrics import METRICS, compute, compute_task, macro_average, task_score
from suite.data.glue_tasks import TASKS

# predictions vs labels, position by position:
#   pred  1 0 1 1 0
#   label 1 0 0 1 1
#         TP TN FP TP FN  ->  TP = 2, TN = 1, FP = 1, FN = 1
PRED = [1, 0, 1, 1, 0]
GOLD = [1, 0, 0, 1, 1]


def test_accuracy_by_hand():
    assert compute("accuracy", PRED, GOLD) == pytest.approx(3 / 5)  # TP + TN = 3 of 5


def test_f1_by_hand():
    # precision = TP / (TP + FP) = 2/3, recall = TP / (TP + FN) = 2/3, F1 = 2PR / (P + R) = 2/3
    assert compute("f1", PRED, GOLD) == pytest.approx(2 / 3)
    # positive class is 1: swapping the classes gives TP = 1, FP = 1, FN = 1 -> F1 = 1/2
    assert compute("f1", [1 - p for p in PRED], [1 - g for g in GOLD]) == pytest.approx(1 / 2)


def test_matthews_by_hand():
    # (TP*TN - FP*FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)) = (2 - 1) / sqrt(3 * 3 * 2 * 2) = 1/6
    assert compute("matthews", PRED, GOLD) == pytest.approx(1 / 6)
    assert compute("matthews", GOLD, GOLD) == pytest.approx(1.0)
    assert compute("matthews", [1 - g for g in GOLD], GOLD) == pytest.approx(-1.0)


def test_pearson_by_hand():
    # x = 1 2 3 4 (mean 2.5), y = 2 4 5 9 (mean 5): deviations -1.5 -.5 .5 1.5 and -3 -1 0 4
    # sum dx*dy = 4.5 + .5 + 0 + 6 = 11, sum dx^2 = 5, sum dy^2 = 26 -> r = 11 / sqrt(130)
    assert compute("pearson", [1, 2, 3, 4], [2, 4, 5, 9]) == pytest.approx(11 / math.sqrt(130))


def test_spearman_by_hand():
    # ranks 1 2 3 4 vs 1 3 2 4: d = 0 -1 1 0, rho = 1 - 6 * sum d^2 / (n (n^2 - 1)) = 1 - 12/60
    assert compute("spearman", [1.0, 2.0, 3.0, 4.0], [10.0, 30.0, 20.0, 40.0]) == pytest.approx(0.8)
    # monotone but not linear: Spearman 1, Pearson below 1
    assert compute("spearman", [1, 2, 3, 4], [1, 8, 27, 64]) == pytest.approx(1.0)
    assert compute("pearson", [1, 2, 3, 4], [1, 8, 27, 64]) < 0.99


def test_degenerate_inputs_are_defined():
    labels = [0, 1, 0, 1]
    assert compute("matthews", [1, 1, 1, 1], labels) == 0.0
    assert compute("matthews", [1, 1, 1, 1], [1, 1, 1, 1]) == 0.0
    assert compute("f1", [0, 0, 0, 0], labels) == 0.0
    assert compute("f1", [0, 0, 0, 0], [0, 0, 0, 0]) == 0.0
    assert compute("accuracy", [1, 1, 1, 1], labels) == 0.5
    for metric in ("pearson", "spearman"):
        assert compute(metric, [2.5, 2.5, 2.5, 2.5], [0, 1, 2, 3]) == 0.0
        assert compute(metric, [0, 1, 2, 3], [3, 3, 3, 3]) == 0.0
        assert compute(metric, [1.0], [2.0]) == 0.0


def test_bad_inputs_are_errors():
    with pytest.raises(ValueError, match="did you mean 'matthews'"):
        compute("mathews", PRED, GOLD)
    with pytest.raises(ValueError, match="equally long"):
        compute("accuracy", [1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match="non-empty"):
        compute("f1", [], [])
    with pytest.raises(ValueError, match="non-finite"):
        compute("pearson", [1.0, float("nan")], [1.0, 2.0])


def test_every_task_metric_is_known():
    for task in TASKS.values():
        assert set(task.metrics) <= set(METRICS)


def test_task_score_follows_glue():
    # MRPC/QQP: mean of F1 and accuracy; STS-B: mean of Pearson and Spearman
    assert task_score(TASKS["paraphrase"], {"f1": 0.8, "accuracy": 0.6}) == pytest.approx(0.7)
    assert task_score(TASKS["similarity"], {"pearson": 0.9, "spearman": 0.7, "extra": 0.0}) == pytest.approx(0.8)
    assert task_score(TASKS["acceptability"], {"matthews": 0.3}) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="accuracy"):
        task_score(TASKS["duplicate"], {"f1": 0.5})


def test_macro_average_is_unweighted():
    assert macro_average({"a": 0.5, "b": 0.7, "c": 0.9}) == pytest.approx(0.7)
    with pytest.raises(ValueError):
        macro_average({})


def test_compute_task_on_hand_case():
    values = compute_task(TASKS["paraphrase"], PRED, GOLD)
    assert values == pytest.approx({"f1": 2 / 3, "accuracy": 3 / 5})
    assert task_score(TASKS["paraphrase"], values) == pytest.approx((2 / 3 + 3 / 5) / 2)


classes = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=60)
# scores on a grid of 0.01 so that an affine map cannot merge or split ties by rounding
scores = st.lists(st.tuples(st.integers(-500, 500), st.integers(-500, 500)), min_size=2, max_size=40)


@given(classes)
def test_classification_metrics_properties(pairs):
    predictions, labels = zip(*pairs)
    accuracy = compute("accuracy", predictions, labels)
    assert accuracy == pytest.approx(np.mean(np.array(predictions) == np.array(labels)))
    assert -1.0 <= compute("matthews", predictions, labels) <= 1.0
    assert 0.0 <= compute("f1", predictions, labels) <= 1.0
    # Matthews is symmetric in its arguments and flips sign when the predictions do
    assert compute("matthews", labels, predictions) == pytest.approx(compute("matthews", predictions, labels))
    flipped = [1 - p for p in predictions]
    assert compute("matthews", flipped, labels) == pytest.approx(-compute("matthews", predictions, labels), abs=1e-12)


@given(scores, st.floats(0.1, 10), st.floats(-10, 10))
def test_correlations_ignore_positive_affine_maps(pairs, scale, shift):
    predictions, labels = (np.array(side) / 100 for side in zip(*pairs))
    for metric in ("pearson", "spearman"):
        value = compute(metric, predictions, labels)
        assert -1.0 - 1e-9 <= value <= 1.0 + 1e-9
        if np.ptp(predictions) > 0 and np.ptp(labels) > 0:
            assert compute(metric, predictions * scale + shift, labels) == pytest.approx(value, abs=1e-6)
