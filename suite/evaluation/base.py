"""What an evaluator gets and gives: its context (the evaluation, settings, a scratch
folder) and its result (typed metric rows and curves). The contract itself (settings,
version, per scale, registration) is :mod:`suite.plan.evaluators`, which grid expansion
reads without importing any evaluator.

Evaluators import Lightning, lm-eval or datasets inside ``evaluate`` only, so
commands that train nothing stay fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from suite.results.rows import CurveRow, MetricRow, SampleRow

if TYPE_CHECKING:
    from suite.plan.grid import Evaluation
    from suite.modeling.model import Transformer


@dataclass(frozen=True)
class EvalContext:
    """What an evaluator may know besides the model."""

    evaluation: "Evaluation"
    settings: Any  # the evaluator's Settings instance
    workdir: Path  # scratch space for generated files (lm-eval configs and data)
    log: Callable[[str], None] = print

    @property
    def train_len(self) -> int:
        """What scale 1 means: the run's training length (a fine-tuned child's: its parent's)."""
        return self.evaluation.run.base_len

    @property
    def eval_len(self) -> int | None:
        scale = self.evaluation.scale
        return None if scale is None else scale * self.train_len

    @property
    def seed(self) -> int:
        return self.evaluation.run.seed

    @property
    def task(self):
        return self.evaluation.run.task


@dataclass(frozen=True)
class EvalResult:
    metrics: list[MetricRow]
    curves: list[CurveRow] = field(default_factory=list)
    samples: list[SampleRow] = field(default_factory=list)  # per-example outcomes (suite.results.samples)


def fits(model: "Transformer", eval_len: int) -> bool:
    """False where the encoding cannot represent the length (a learned table has no rows there)."""
    limit = model.encodings[0].max_length()
    return limit is None or eval_len <= limit

