"""The ``glue`` evaluator: GLUE-style fine-tuning of the trained backbone (:mod:`.glue`).

It fine-tunes the checkpoint *as trained* (``uses_eval_encoding = False``): the
training-free variants that share a checkpoint (YaRN, PI, NTK on RoPE) change only
what happens beyond the training length, so they share its GLUE-style score, and
the site says so.
"""

from __future__ import annotations

from suite.specs import GlueRecipe
from suite.evaluation.base import EvalContext, EvalResult
from suite.plan.evaluators import EVALUATORS, Evaluator


@EVALUATORS.register("glue")
class Glue(Evaluator):
    Settings = GlueRecipe
    per_scale = False
    uses_eval_encoding = False

    @classmethod
    def evaluate(cls, model, context: EvalContext) -> EvalResult:
        from suite.evaluation.glue import evaluate_glue

        return EvalResult(evaluate_glue(model, context.settings, context.seed, log=context.log))
