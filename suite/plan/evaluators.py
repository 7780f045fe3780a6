"""The evaluator contract, as much of it as a plan needs: a name, settings, a version,
whether it runs per scale and on which encoding. The plan stage declares it, so grid
expansion never imports an evaluator; the evaluators (suite.evaluation) subclass
:class:`Evaluator`, register themselves with ``@EVALUATORS.register(name)``, and are
imported on the first lookup.

An evaluator is a class with

* ``Settings``: a frozen pydantic model of its settings (defaults filled in, part of
  every evaluation id; a grid's ``evaluations:`` entries are checked against it);
* ``version``: bumped when its figures change, so old records are not reused;
* ``per_scale``: True when it runs at each scale s (eval length s x L), False when
  it looks at the checkpoint once (GLUE-style fine-tuning);
* ``uses_eval_encoding``: True when it evaluates the encoding as the grid names it
  (a training-free variant such as YaRN on the RoPE checkpoint); False when it uses
  the checkpoint as trained (fine-tuning a backbone does not depend on how lengths
  beyond training are handled);
* ``evaluate(model, context) -> EvalResult`` (suite.evaluation.base).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from suite.core.registry import Registry


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Evaluator:
    """Base class of every evaluator (see the module docstring)."""

    Settings: ClassVar[type[Settings]] = Settings
    version: ClassVar[int] = 1
    per_scale: ClassVar[bool] = True
    uses_eval_encoding: ClassVar[bool] = True

    @classmethod
    def evaluate(cls, model, context):
        raise NotImplementedError


# every module of suite/evaluation/evaluators/ registers one (imported on the first lookup):
# extrapolation (bits per byte at s x L, curves), lm_rolling (the same span through lm-eval),
# lmeval_task (a generated task through lm-eval), glue_evaluator (GLUE-style fine-tuning),
# attention_sinks (the first token's attention-sink rate and strength), key_tokens (bits per byte on
# the tokens that need long context: LongPPL's offline mode)
EVALUATORS: Registry[Evaluator] = Registry("evaluator", Evaluator, members="suite.evaluation.evaluators")
