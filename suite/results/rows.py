"""The rows every evaluator returns, and the metadata of every metric: pure data, no torch.

A metric row is built here and nowhere else (HELM's ``Stat``): evaluators return
:class:`MetricRow` and :class:`CurveRow`; records store them as plain dicts; the
store, the site and the terminal read a metric's direction, unit and chance level
from :func:`metric_info`, never from a string match of their own.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from importlib import resources
from typing import Literal

import yaml

Status = Literal["ok", "not_applicable", "skipped", "failed", "partial"]


def _finite_or_none(value: float | None) -> float | None:
    """JSON has no NaN or infinity: a non-finite figure is stored as None (status says why)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class MetricRow:
    """One figure: ``metric`` of ``task`` at eval length ``eval_len`` = scale x L (None:
    not length-dependent, e.g. GLUE-style), with its standard error and sample size."""

    task: str
    metric: str
    value: float | None
    n: int
    status: Status = "ok"
    scale: int | None = None
    eval_len: int | None = None
    stderr: float | None = None
    window_policy: str | None = None
    source: str | None = None
    chance: float | None = None  # the score of a model that guesses, where the task has one

    def __post_init__(self):
        value, stderr = _finite_or_none(self.value), _finite_or_none(self.stderr)
        if self.value is not None and value is None and self.status == "ok":
            object.__setattr__(self, "status", "failed")  # a NaN figure is a failure, never a number
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "stderr", stderr)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def not_applicable(cls, task: str, metric: str, scale: int, eval_len: int, **rest) -> "MetricRow":
        """The encoding cannot represent this length (e.g. a learned table has no rows there)."""
        return cls(task=task, metric=metric, value=None, n=0, status="not_applicable", scale=scale,
                   eval_len=eval_len, **rest)


@dataclass(frozen=True)
class CurveRow:
    """Mean bits of the positions [pos_start, pos_end) of every window at one scale."""

    task: str
    scale: int
    eval_len: int
    bucket: int
    pos_start: int
    pos_end: int
    value: float | None
    n: int

    def __post_init__(self):
        object.__setattr__(self, "value", _finite_or_none(self.value))

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class SampleRow:
    """One test example's outcome in an evaluation (lm-eval's logged sample): what was asked
    (the prompt's hash, as lm-eval computes it, and the target), what the model gave, and
    whether it was right. ``correct`` is the per-sample value lm-eval aggregates into
    ``metric`` (its mean is the figure), so a figure can be recomputed from its samples."""

    task: str
    scale: int | None
    eval_len: int | None
    metric: str  # the metric ``correct`` is a sample of (acc, exact_match)
    doc_id: int
    prompt_hash: str
    target: str
    correct: float
    logprob: float | None = None  # log-likelihood templates: the target's log-probability
    output: str | None = None  # generation templates: the generated text
    breakdown: str | None = None  # the example's meta field its figure is also broken down by (depth)
    breakdown_value: str | None = None


METRIC_COLUMNS = tuple(f.name for f in dataclasses.fields(MetricRow))
CURVE_COLUMNS = tuple(f.name for f in dataclasses.fields(CurveRow))


@dataclass(frozen=True)
class MetricInfo:
    """What the site and the terminal show for a metric (from ``suite/results/metrics.yaml``)."""

    name: str
    display_name: str
    description: str
    lower_is_better: bool
    unit: str | None = None
    chance: float | None = None  # the score of a model that guesses, where the metric has one
    headline: bool = False  # the figure a progress line shows for an evaluation


@functools.cache
def metric_info() -> dict[str, MetricInfo]:
    data = yaml.safe_load(resources.files("suite.results").joinpath("metrics.yaml").read_text())
    return {name: MetricInfo(name=name, **fields) for name, fields in data.items()}


def lower_is_better(metric: str) -> bool:
    """A metric's direction; per-depth breakdowns (``acc_depth3``) follow their base metric."""
    info = metric_info()
    if metric in info:
        return info[metric].lower_is_better
    base = metric.split("_depth", 1)[0]
    return info[base].lower_is_better if base in info else False
