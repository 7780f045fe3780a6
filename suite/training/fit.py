"""Training one run: ``fit`` builds the module and the Trainer, trains, and writes one checkpoint.

A child run (a fine-tuned extension) starts from its parent's weights, which the runner
has trained first (suite.execution.runner); its optimizer and schedule start afresh, as
the methods' fine-tuning does. A run with an hpc checkpoint (Lightning's requeue under SLURM,
or the resume point written every 10 minutes of training: suite.training.trainer) resumes from
it (``ckpt_path="hpc"``), skips the batches already consumed and draws from the random
generators' states of that step, so it ends with the weights and loss of an uninterrupted run.
A failure is :class:`TrainingFailed` with the step it happened at (the runner records both).
"""

from __future__ import annotations

import json
import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import lightning as L
import torch

from suite.core import numerics
from suite.core.aside import set_aside
from suite.core.runtime import peak_memory_mb, reset_peak_memory, resume_every_s
from suite.modeling.model import Transformer
from suite.plan.grid import TrainingRun
from suite.training.batches import RunDataModule
from suite.training.calibration import calibrate
from suite.plan.task_kinds import kind_of
from suite.training.checkpoints import load_checkpoint, resumable, resume_dir, save_atomically, weights_sha256
from suite.training.learning_curve import LearningCurve
from suite.training.module import LanguageModel
from suite.training.trainer import RandomStates, ResumePoints, StepBoundarySignal, make_trainer, training_settings


class TrainingFailed(Exception):
    """Training stopped with an exception at ``step`` (the runner records both)."""

    def __init__(self, step: int, cause: BaseException):
        self.step, self.cause = step, cause
        super().__init__(f"{type(cause).__name__}: {cause}")


@dataclass(frozen=True)
class FitResult:
    module: LanguageModel
    checkpoint: Path
    stats: dict
    learning_curve: dict  # suite.training.learning_curve.LearningCurve's figures


def fit(run: TrainingRun, checkpoint_dir: Path, progress_bar: bool = True, commit: str | None = None,
        **trainer_overrides) -> FitResult:
    """Train ``run`` and write its checkpoint into ``checkpoint_dir``. ``commit``: the code's git
    commit, carried in its resume points, so that a resumed run's record names the commits that
    trained its earlier steps where they are not the one finishing it (``resumed_from_commit``)."""
    numerics.pin()  # threads and SIMD level, recorded in the stats: verify re-runs with them
    L.seed_everything(run.seed, workers=True, verbose=False)
    module = LanguageModel(run.to_dict())
    settings = {**training_settings(), **trainer_overrides}
    accelerate(module.model, settings["accelerator"] == "gpu", run.train.compile)
    hpc, boundary = resume_dir(checkpoint_dir, run), StepBoundarySignal()
    resuming = any(hpc.glob("hpc_ckpt_*.ckpt"))
    if resuming and (why := resumable(hpc)) is not None:  # else it fails the same way at every retry
        set_aside(hpc, checkpoint_dir.parent, f"hpc checkpoint of run {run.run_id} cannot be resumed: {why}")
        resuming = False
    calibration = Calibration()
    if run.parent is not None and not resuming:  # a resumed child has its own weights in the hpc checkpoint
        start_from_parent(module, checkpoint_dir / f"{run.parent.run_id}.ckpt")
        calibration.found = calibrate(module.model, run)  # LongRoPE's search, on the parent's weights
    curve = LearningCurve(run.train.steps, kind_of(run.task).learning_probe(run.task, run.train))
    points = [] if (every := resume_every_s()) is None else [ResumePoints(hpc, every)]
    written_by = WrittenBy(commit)
    settings["callbacks"] = [RandomStates(), boundary, curve, calibration, written_by, *points,
                             *settings.get("callbacks", [])]
    trainer = make_trainer(run.train.steps, gradient_clip_val=run.train.grad_clip, progress_bar=progress_bar,
                           root_dir=hpc, **settings)
    reset_peak_memory()  # this run's peak, whatever the worker ran before
    start = time.perf_counter()
    try:
        data = RunDataModule(run)
        trainer.fit(module, datamodule=data, ckpt_path="hpc" if resuming else None)
        loss = module.final_loss.item() if run.train.steps else None  # a search-only child takes no step
        if loss is not None and not math.isfinite(loss):  # no checkpoint of NaN weights is ever written
            raise FloatingPointError(f"training diverged: final loss {loss}")
    except Exception as exc:
        raise TrainingFailed(trainer.global_step, exc) from exc
    wall = time.perf_counter() - start
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    checkpoint = checkpoint_dir / f"{run.run_id}.ckpt"
    save_atomically(trainer, checkpoint, durable=True)  # on disk before its resume point goes
    if trainer.is_global_zero:
        shutil.rmtree(hpc, ignore_errors=True)  # finished: nothing left to resume
    tokens = (run.train.steps - (boundary.start_step or 0)) * run.train.batch_size * run.train.seq_len
    stats = {"train_wall_s": wall, "train_tokens_per_s": tokens / wall if tokens else None,  # None: no step taken
             "final_train_loss": loss,
             "peak_memory_mb": peak_memory_mb(), "n_params": module.model.num_params(),
             "device": "cuda:" + torch.cuda.get_device_name() if settings["accelerator"] == "gpu" else "cpu",
             "precision": settings["precision"], "attention_path": module.model.path_name,
             "compiled": run.train.compile,
             # the share of training wall time spent making batches (the loop waits for them)
             "data_wait_s": data.loader.wait_s, "data_wait_share": data.loader.wait_s / wall,
             "world_size": trainer.world_size, "resumed_from_step": boundary.start_step or None,
             "numerics": numerics.measured(), "weights_sha256": weights_sha256(module.model)}
    if calibration.found is not None:
        stats["calibration"] = calibration.found
    if boundary.start_step and written_by.earlier:
        stats["resumed_from_commit"] = ", ".join(written_by.earlier)
    module.trainer = None  # the optimizer's state goes with the trainer: what follows needs the weights alone
    return FitResult(module, checkpoint, stats, curve.curve)


class Calibration(L.Callback):
    """A child's calibration (LongRoPE's search: suite.training.calibration) carried in its
    checkpoints, so a resumed child, which does not search again (the factors it found are among
    the weights it resumes with), records what its first attempt found."""

    def __init__(self):
        self.found: dict | None = None

    def state_dict(self) -> dict:
        return {"found": json.loads(json.dumps(self.found))}  # plain numbers and lists: a weights_only read takes them

    def load_state_dict(self, state: dict) -> None:
        self.found = state["found"]


class WrittenBy(L.Callback):
    """The commits of the code that trained a run so far, carried in its checkpoints:
    :attr:`earlier` lists those of the steps before this fit's, other than this fit's own
    (``"not recorded"`` for a checkpoint from before checkpoints said), in the order they
    trained, through any number of resumes."""

    def __init__(self, commit: str | None):
        self.commit, self.trained_by, self.loaded = commit, [], False

    @property
    def earlier(self) -> list[str]:
        return [c for c in dict.fromkeys(self.trained_by) if c != self.commit]

    def state_dict(self) -> dict:
        return {"trained_by": [*dict.fromkeys(self.trained_by), self.commit]}

    def load_state_dict(self, state: dict) -> None:
        self.trained_by, self.loaded = list(state["trained_by"]), True

    def on_train_start(self, trainer, pl_module):
        if trainer.global_step and not self.loaded:  # resumed from a checkpoint that does not say
            self.trained_by = ["not recorded"]


def start_from_parent(module: LanguageModel, parent_checkpoint: Path) -> None:
    """The parent's weights in the child's model, strictly (the grid check,
    suite.plan.checks._check_extensions, has made sure they fit) but for what the child's encoding
    adds, which the parent cannot have: a calibrating encoding's searched state (LongRoPE's
    factors) and an encoding's ``added_state`` (DroPE's QK-norm gains, left at their initial ones)."""
    if not parent_checkpoint.is_file():
        raise FileNotFoundError(f"the parent's checkpoint {parent_checkpoint} is missing: train the parent first")
    own = {f"encodings.{i}.{name}" for i, enc in enumerate(module.model.encodings)
           for name in (*getattr(enc, "calibrated_state", ()), *getattr(enc, "added_state", ()))}
    missing, unexpected = module.model.load_state_dict(load_checkpoint(parent_checkpoint).model.state_dict(), strict=False)
    if unexpected or set(missing) - own:
        raise RuntimeError(f"the parent's weights do not fit the child: missing {sorted(set(missing) - own)}, "
                           f"unexpected {sorted(unexpected)}")


def accelerate(model: Transformer, on_gpu: bool, compile: bool) -> None:
    """The GPU path: relative-bias encodings through FlexAttention on a GPU (exact: see
    :func:`suite.modeling.flex.flex_attend`), and ``torch.compile`` when the recipe asks for it
    (in place, so the state dict keeps its names)."""
    model.use_flex_attention(on_gpu)
    if compile:
        model.compile()
