"""Evaluation: everything that turns a trained model into metric rows.

The registry of evaluators (:data:`EVALUATORS`, contract in :mod:`.base`); each
evaluator registers itself in its own module, imported here:

* ``extrapolation``  bits per byte at s x L and loss-vs-position curves (:mod:`.extrapolation`)
* ``lm_rolling``     the same span through lm-eval's rolling log-likelihood (:mod:`.lm_rolling`)
* ``lmeval_task``    a generated length-generalization task through lm-eval (:mod:`.lmeval_task`)
* ``glue``           GLUE-style fine-tuning of the backbone (:mod:`.glue_evaluator`)

Importing this package imports torch but not Lightning, lm-eval or datasets: each
evaluator imports its heavy implementation inside ``evaluate``.
"""

from suite.evaluation import extrapolation, glue_evaluator, lm_rolling, lmeval_task  # noqa: F401 (registration)
from suite.evaluation.base import EVALUATORS, EvalContext, EvalResult, Evaluator

__all__ = ["EVALUATORS", "EvalContext", "EvalResult", "Evaluator"]
