"""Evaluation: everything that turns a trained model into metric rows.

Each evaluator registers itself in :data:`suite.plan.evaluators.EVALUATORS` (the contract)
in its own module; the registry lists the modules and imports them on first lookup:

* ``extrapolation``  bits per byte at s x L and loss-vs-position curves (:mod:`.extrapolation`)
* ``lm_rolling``     the same span through lm-eval's rolling log-likelihood (:mod:`.lm_rolling`)
* ``lmeval_task``    a generated length-generalization task through lm-eval (:mod:`.lmeval_task`)
* ``glue``           GLUE-style fine-tuning of the backbone (:mod:`.glue_evaluator`)

What an evaluator gets and gives is :mod:`.base`.
"""
