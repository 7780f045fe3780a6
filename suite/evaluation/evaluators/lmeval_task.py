"""The ``lmeval_task`` evaluator: a generated length-generalization task through lm-eval."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from suite.core.registry import did_you_mean
from suite.evaluation.base import EvalContext, EvalResult
from suite.plan.evaluators import EVALUATORS, Evaluator, Settings


class LmEvalTaskSettings(Settings):
    task: str  # a generator of suite.data.synthetic.TASKS
    examples: int = Field(64, gt=0)  # test examples at each scale
    batch_size: int = Field(8, gt=0)
    template: Literal["posbench_synthetic", "posbench_synthetic_generate"] = "posbench_synthetic"

    @field_validator("task")
    @classmethod
    def _known(cls, name: str) -> str:
        from suite.data.synthetic import TASKS

        if name not in TASKS:
            raise ValueError(f"unknown task '{name}'{did_you_mean(name, TASKS)}; known: {', '.join(TASKS)}")
        return name


@EVALUATORS.register("lmeval_task")
class LmEvalTask(Evaluator):
    """Exact-match accuracy on ``examples`` generated examples of exactly s x L bytes
    (see :mod:`suite.evaluation.lmeval_tasks`); the examples' seed is the run's seed."""

    Settings = LmEvalTaskSettings

    @classmethod
    def evaluate(cls, model, context: EvalContext) -> EvalResult:
        from suite.evaluation.lmeval_tasks import evaluate_tasks

        s = context.settings
        samples = []
        rows = evaluate_tasks(model, context.train_len, [s.task], [context.evaluation.scale], n=s.examples,
                              seed=context.seed, workdir=context.workdir, batch_size=s.batch_size, template=s.template,
                              samples=samples)
        return EvalResult(rows, samples=samples)
