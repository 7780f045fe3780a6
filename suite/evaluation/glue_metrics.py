"""GLUE's metrics, computed with scikit-learn and SciPy, and GLUE's averages.

Scores are fractions (accuracy and F1 in [0, 1], Matthews and correlations in
[-1, 1]), not GLUE's percentages. Predictions are class ids for classification
and scores for regression; F1 is binary with positive class 1.

Degenerate inputs give defined values, never NaN: Matthews correlation is 0 when
predictions or labels take a single value (scikit-learn's convention, here also
when both are the same single value); Pearson and Spearman are 0 when either side
is constant (a constant predictor explains nothing); F1 is 0 when there is no
positive prediction or label.

Averages follow GLUE's leaderboard: a task's score is the mean of its metrics
(F1 and accuracy for MRPC and QQP, Pearson and Spearman for STS-B; the single
metric elsewhere), and the battery's score is the unweighted mean of task scores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

from suite.core.registry import did_you_mean

if TYPE_CHECKING:
    from suite.data.glue_tasks import GlueTask


def _accuracy(predictions: np.ndarray, labels: np.ndarray) -> float:
    return accuracy_score(labels, predictions)


def _f1(predictions: np.ndarray, labels: np.ndarray) -> float:
    return f1_score(labels, predictions, pos_label=1, average="binary", zero_division=0.0)


def _matthews(predictions: np.ndarray, labels: np.ndarray) -> float:
    if len(np.unique(predictions)) < 2 or len(np.unique(labels)) < 2:
        return 0.0  # the denominator vanishes; scikit-learn returns 0 here too, with a warning
    return matthews_corrcoef(labels, predictions)


def _correlation(statistic: Callable) -> Callable[[np.ndarray, np.ndarray], float]:
    def correlation(predictions: np.ndarray, labels: np.ndarray) -> float:
        predictions, labels = predictions.astype(float), labels.astype(float)
        if not (np.isfinite(predictions).all() and np.isfinite(labels).all()):
            raise ValueError("correlation of non-finite values")
        if np.ptp(predictions) == 0 or np.ptp(labels) == 0:
            return 0.0
        return statistic(predictions, labels).statistic

    return correlation


_METRICS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "accuracy": _accuracy,
    "f1": _f1,
    "matthews": _matthews,
    "pearson": _correlation(pearsonr),
    "spearman": _correlation(spearmanr),
}
METRICS = tuple(_METRICS)


def compute(metric: str, predictions: Sequence, labels: Sequence) -> float:
    if metric not in _METRICS:
        hint = did_you_mean(metric, METRICS)
        raise ValueError(f"unknown metric {metric!r}{hint} (known: {', '.join(METRICS)})")
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    if predictions.ndim != 1 or predictions.shape != labels.shape or len(labels) == 0:
        raise ValueError(
            f"{metric}: need two equally long non-empty 1-D sequences, got {predictions.shape} and {labels.shape}"
        )
    return float(_METRICS[metric](predictions, labels))


def compute_task(task: GlueTask, predictions: Sequence, labels: Sequence) -> dict[str, float]:
    """Every metric of a task, by name."""
    return {metric: compute(metric, predictions, labels) for metric in task.metrics}


def task_score(task: GlueTask, values: Mapping[str, float]) -> float:
    """GLUE's score for one task: the mean of its metrics."""
    missing = [metric for metric in task.metrics if metric not in values]
    if missing:
        raise ValueError(f"{task.name}: missing metric(s) {missing} for its score")
    return float(np.mean([values[metric] for metric in task.metrics]))


def macro_average(task_scores: Mapping[str, float]) -> float:
    """GLUE's overall score: the unweighted mean of the task scores (see task_score)."""
    if not task_scores:
        raise ValueError("macro average of no tasks")
    return float(np.mean(list(task_scores.values())))
