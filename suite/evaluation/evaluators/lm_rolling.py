"""The ``lm_rolling`` evaluator: the extrapolation span scored through lm-eval's rolling
log-likelihood, recorded as ``bpb_lmeval`` beside the direct ``bpb`` (they agree up
to float error: a cross-check of the adapter, not a second opinion)."""

from __future__ import annotations

from pydantic import Field

from suite.evaluation.base import EvalContext, EvalResult
from suite.plan.evaluators import EVALUATORS, Evaluator, Settings


class LmRollingSettings(Settings):
    tokens: int = Field(32768, gt=0)
    batch_size: int = Field(8, gt=0)


@EVALUATORS.register("lm_rolling")
class LmRolling(Evaluator):
    Settings = LmRollingSettings

    @classmethod
    def evaluate(cls, model, context: EvalContext) -> EvalResult:
        from suite.data.corpus import load_corpus
        from suite.evaluation.lmeval_tasks import evaluate_lm_rolling

        s = context.settings
        test = load_corpus(context.task.corpus)["test"]
        rows = evaluate_lm_rolling(model, context.train_len, test, [context.evaluation.scale], s.tokens,
                                   context.workdir, s.batch_size, task=context.task.name)
        return EvalResult(rows)
