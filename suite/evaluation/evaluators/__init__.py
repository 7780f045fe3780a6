"""The evaluators, one module each: every module here registers its evaluator in
:data:`suite.plan.evaluators.EVALUATORS`, which imports them all on its first lookup. What
they share (contexts, results, the lm-eval adapter, the GLUE-style battery) is beside this
package, in :mod:`suite.evaluation`."""
