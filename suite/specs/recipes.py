"""The recipes a grid names (``grids/<name>.yaml``): training (:class:`TrainRecipe`), evaluation
(:class:`EvalRecipe`), GLUE-style fine-tuning (:class:`GlueRecipe`), further evaluations
(:class:`EvaluationEntry`) and fine-tuned extensions (:class:`ExtensionSpec`)."""

from __future__ import annotations

from typing import Annotated, Any

import pydantic
from pydantic import Field
from pydantic_core import PydanticCustomError

from suite.core.registry import did_you_mean
from suite.specs.base import Spec, MAX_LENGTH, MAX_STEPS, MAX_BATCH, MAX_SCALE, MAX_TOKENS


MIN_SWEEP = 3  # learning rates a tuning budget tries at least (MAD-lab sweeps 3 x 2 weight decays)


class TuningSpec(Spec):
    """A grid's tuning budget (suite.plan.tuning): every (encoding, size, task) trains once per
    learning rate of ``lr`` at seed ``seed``; the one with the lowest validation loss at the
    training length is its learning rate for every seed."""

    lr: list[Annotated[float, Field(gt=0, le=1000)]] = Field(min_length=MIN_SWEEP)
    seed: int = Field(0, ge=0)

    @pydantic.field_validator("lr")
    @classmethod
    def _distinct(cls, lr: list[float]) -> list[float]:
        if len(set(lr)) != len(lr):
            raise PydanticCustomError("value_error", "the learning rates must differ (a value twice tries it twice)")
        return sorted(lr)


class TrainRecipe(Spec):
    # > 0, but for a child's recipe (validated with context {"child": True}): an extension of 0
    # steps calibrates its encoding on the parent's weights (LongRoPE's search) and trains nothing
    steps: int = Field(300, le=MAX_STEPS)
    batch_size: int = Field(16, gt=0, le=MAX_BATCH)
    seq_len: int = Field(64, gt=1, le=MAX_LENGTH)  # L, the training length
    # bounded by what AdamW training can use: beyond 1,000 a learning rate is a typo (the tests'
    # deliberate divergence uses 1,000), a decay beyond 10 erases the weights every step
    lr: float = Field(3e-3, gt=0, le=1000)
    warmup_steps: int = Field(30, ge=0, le=MAX_STEPS)
    weight_decay: float = Field(0.1, ge=0, le=10)
    grad_clip: float = Field(1.0, gt=0, le=1e6)
    # torch.compile the model (inductor): how the steps run, not what they compute, so it
    # is not part of the run id (suite.plan.grid.TrainingRun.content); recorded in the run's provenance
    compile: bool = False
    # the learning rates ``lr`` was chosen from, on validation loss (a grid's ``tuning``,
    # suite.plan.tuning); None: given. Part of the run id when set, so a tuned run is never
    # taken for one whose learning rate was given.
    lr_sweep: tuple[Annotated[float, Field(gt=0, le=1000)], ...] | None = None

    @pydantic.model_validator(mode="after")
    def _lr_in_its_sweep(self):
        if self.lr_sweep is not None and self.lr not in self.lr_sweep:
            raise ValueError(f"lr {self.lr} is not one of its sweep's values {list(self.lr_sweep)}")
        return self

    @pydantic.field_validator("steps")
    @classmethod
    def _trains(cls, steps: int, info: pydantic.ValidationInfo) -> int:
        if (info.context or {}).get("child"):
            if steps < 0:
                raise PydanticCustomError("greater_than_equal", "Input should be greater than or equal to 0")
        elif steps <= 0:
            raise PydanticCustomError("greater_than", "Input should be greater than 0")
        return steps


class EvalRecipe(Spec):
    tokens: int = Field(32768, gt=0, le=MAX_TOKENS)  # tokens scored at every scale (the same tokens for all)
    # language modelling: None scores the test split's first `tokens` bytes; P scores P evenly spaced
    # passages of tokens / P bytes, the unit the intervals resample for text sampling (docs/concepts/boards.md, "Text sampling")
    passages: int | None = Field(None, gt=1, le=4096)
    batch_size: int = Field(8, gt=0, le=MAX_BATCH)
    curve_buckets: int = Field(32, gt=0, le=MAX_LENGTH)  # position buckets of the loss-vs-position curve
    lmeval_rolling: bool = True  # also score the LM span through lm-eval (recorded as bpb_lmeval)
    task_examples: int = Field(64, gt=0, le=MAX_STEPS)  # synthetic tasks: test examples at each scale


def glue_task_names(battery: str) -> tuple[str, ...]:
    """The battery's tasks (suite.data.batteries; real GLUE's are listed without importing `datasets`)."""
    from suite.data.batteries import BATTERIES

    return BATTERIES.get(battery)().task_names()


class GlueRecipe(Spec):
    """The GLUE-style fine-tuning protocol; part of every GLUE-style evaluation id."""

    battery: str = "offline"  # suite.data.batteries: offline, built here from the stdlib; glue, the real thing
    tasks: list[str] | None = None  # default: the battery's eight
    steps: int = Field(150, gt=0, le=MAX_STEPS)  # fine-tuning steps per task
    batch_size: int = Field(32, gt=0, le=MAX_BATCH)
    lr: float = Field(1e-3, gt=0)
    max_len: int = Field(128, gt=1, le=MAX_LENGTH)  # inputs are cut to their last max_len bytes
    budget: float = Field(1.0, gt=0, le=1)  # offline: share of each task's own train/dev sizes
    max_train: int | None = Field(20000, gt=0, le=MAX_TOKENS)  # real GLUE: subsample train to at most this
    max_dev: int | None = Field(2000, gt=0, le=MAX_TOKENS)
    glue_dir: str | None = None  # real GLUE: a folder in GLUE's own format; None: the datasets cache

    @pydantic.field_validator("battery")
    @classmethod
    def _known_battery(cls, battery: str) -> str:
        from suite.data.batteries import BATTERIES

        BATTERIES.member(battery)
        return battery

    def task_names(self) -> list[str]:
        return list(self.tasks or glue_task_names(self.battery))

    @pydantic.model_validator(mode="after")
    def _known_tasks(self):
        known = glue_task_names(self.battery)
        for t in self.tasks or []:
            if t not in known:
                raise ValueError(f"unknown {self.battery} GLUE task '{t}'{did_you_mean(t, known)}; known: {', '.join(known)}")
        return self


class EvaluationEntry(Spec):
    """One more evaluation of every training run: an evaluator of suite.evaluation and its
    settings (checked against the evaluator's own Settings when the grid is planned)."""

    evaluator: str
    settings: dict[str, Any] = {}


class ExtensionSpec(Spec):
    """Fine-tuned extension (a child run): each of ``encodings`` continues from the
    checkpoint of ``parent`` (an encoding of the grid that trains as itself) for ``steps`` more
    steps at ``factor`` x its training length, trained as itself (position interpolation as Chen
    et al. 2023 fine-tune it; YaRN as Peng et al. 2023 do; DroPE's recalibration with RoPE
    removed, arXiv 2512.12167). The recipe is the parent's with these fields over it. 0 steps:
    the child only calibrates on the parent's weights (LongRoPE's search) and is evaluated so."""

    parent: str
    encodings: list[str] = Field(min_length=1)
    factor: int = Field(2, ge=1, le=MAX_SCALE)  # the child's training length: factor x the parent's
    # 0: search only, for an encoding that calibrates on the parent (LongRoPE's factors, searched
    # and evaluated without fine-tuning, as Ding et al. 2024 also report it)
    steps: int = Field(ge=0, le=MAX_STEPS)
    lr: float | None = Field(None, gt=0)
    batch_size: int | None = Field(None, gt=0, le=MAX_BATCH)
    warmup_steps: int | None = Field(None, ge=0, le=MAX_STEPS)
    # the children's row names are "<encoding>-<label>" (default "ft<factor>x"): two entries
    # that fine-tune one encoding differently need two labels
    label: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9_-]*$")

    @property
    def suffix(self) -> str:
        return self.label or f"ft{self.factor}x"

    def recipe(self, parent: "TrainRecipe") -> "TrainRecipe":
        """The child's recipe: the parent's, at ``factor`` x its length, with this entry's fields over it."""
        override = {k: v for k, v in {"steps": self.steps, "lr": self.lr, "batch_size": self.batch_size,
                                      "warmup_steps": self.warmup_steps}.items() if v is not None}
        return TrainRecipe.model_validate({**parent.model_dump(), **override, "seq_len": self.factor * parent.seq_len},
                                          context={"child": True})
