"""The evaluator contract: a trained model and its settings in, typed metric rows out.

An evaluator is a class registered by name in :data:`EVALUATORS` (the decorator sits
on the class, in the evaluator's own module), with

* ``Settings``: a frozen pydantic model of its settings (defaults filled in, part of
  every evaluation id; a grid's ``evaluations:`` entries are checked against it);
* ``version``: bumped when its figures change, so old records are not reused;
* ``per_scale``: True when it runs at each scale s (eval length s x L), False when
  it looks at the checkpoint once (GLUE-style fine-tuning);
* ``uses_eval_encoding``: True when it evaluates the encoding as the grid names it
  (a training-free variant such as YaRN on the RoPE checkpoint); False when it uses
  the checkpoint as trained (fine-tuning a backbone does not depend on how lengths
  beyond training are handled);
* ``evaluate(model, context) -> EvalResult``.

Evaluators import Lightning, lm-eval or datasets inside ``evaluate`` only, so
commands that train nothing stay fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar

from pydantic import BaseModel, ConfigDict

from suite.core.registry import Registry
from suite.results.rows import CurveRow, MetricRow

if TYPE_CHECKING:
    from suite.plan.grid import Evaluation
    from suite.modeling.model import Transformer


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class EvalContext:
    """What an evaluator may know besides the model."""

    evaluation: "Evaluation"
    settings: Any  # the evaluator's Settings instance
    workdir: Path  # scratch space for generated files (lm-eval configs and data)
    log: Callable[[str], None] = print

    @property
    def train_len(self) -> int:
        return self.evaluation.run.train.seq_len

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


class Evaluator:
    """Base class of every evaluator (see the module docstring)."""

    Settings: ClassVar[type[Settings]] = Settings
    version: ClassVar[int] = 1
    per_scale: ClassVar[bool] = True
    uses_eval_encoding: ClassVar[bool] = True

    @classmethod
    def evaluate(cls, model: "Transformer", context: EvalContext) -> EvalResult:
        raise NotImplementedError


EVALUATORS: Registry[Evaluator] = Registry("evaluator", Evaluator)


def fits(model: "Transformer", eval_len: int) -> bool:
    """False where the encoding cannot represent the length (a learned table has no rows there)."""
    limit = model.encodings[0].max_length()
    return limit is None or eval_len <= limit
