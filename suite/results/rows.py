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
    # the board kind that shows its figures (a name of suite.report.board_kinds.BOARD_KINDS); None: on no
    # board (a cross-check such as bpb_lmeval, a figure that only makes up another's): the report reads
    # this, never the metric's name
    board: str | None = None
    # the board kind that shows its breakdowns (acc_depth3: acc over the examples of depth 3); None: none
    breakdown_board: str | None = None
    bounds: tuple[float | None, float | None] | None = None  # [lowest, highest] a figure can be; None: any

    def __post_init__(self):
        if self.bounds is not None:  # YAML gives a list
            object.__setattr__(self, "bounds", tuple(self.bounds))


# The meta fields of an example that a figure is also broken down by: a breakdown's metric is named
# ``{metric}_{field}{value}`` (suite.evaluation.lmeval_tasks.task_rows, suite.results.samples.rescore).
BREAKDOWN_FIELDS = ("depth",)


@functools.cache
def metric_info() -> dict[str, MetricInfo]:
    """Every declared metric: metrics.yaml's, and those declared since by :func:`declare_metric`."""
    data = yaml.safe_load(resources.files("suite.results").joinpath("metrics.yaml").read_text())
    return {name: MetricInfo(name=name, **fields) for name, fields in data.items()}


def declare_metric(info: MetricInfo) -> MetricInfo:
    """Declare a metric that metrics.yaml does not, in this process only (a test's own metric; code
    that builds boards in its own process); a name already declared is refused, not replaced."""
    if info.name in metric_info():
        raise ValueError(f"metric '{info.name}' is already declared")
    metric_info()[info.name] = info
    return info


def withdraw_metric(name: str) -> None:
    """Undo :func:`declare_metric` (a test's own metric, once the test is done)."""
    del metric_info()[name]


def breakdown_of(metric: str) -> tuple[str, str, str] | None:
    """(base metric, field, value) of a breakdown's name (``acc_depth3``: acc, depth, 3); None when
    the name is not one (a declared metric never is)."""
    if metric in metric_info():
        return None
    for field in BREAKDOWN_FIELDS:
        base, sep, value = metric.partition(f"_{field}")
        if sep and base:
            return base, field, value
    return None


def declaration(metric: str) -> MetricInfo | None:
    """A metric's declaration; a breakdown (``acc_depth3``) has its base metric's."""
    info = metric_info()
    if metric in info:
        return info[metric]
    parts = breakdown_of(metric)
    return info.get(parts[0]) if parts else None


def board_of(metric: str) -> str | None:
    """The board kind that shows a metric's figures, as declared: its own ``board``, or for a
    breakdown its base metric's ``breakdown_board``; None: on no board."""
    info = metric_info()
    if metric in info:
        return info[metric].board
    base = declaration(metric)
    return base.breakdown_board if base is not None else None


def lower_is_better(metric: str) -> bool:
    """A metric's direction; per-depth breakdowns (``acc_depth3``) follow their base metric."""
    info = declaration(metric)
    return info.lower_is_better if info is not None else False
