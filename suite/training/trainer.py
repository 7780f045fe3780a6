"""The one Lightning ``Trainer`` factory: training, GLUE-style fine-tuning and the bench
all get their Trainer here, so the bench measures the loop that training runs.

Distributed training and preemption belong to Lightning:

* ``POSBENCH_DEVICES`` / ``POSBENCH_NODES`` (suite.core.runtime) ask for DDP over N devices
  on each of M nodes (gloo on CPU, NCCL on GPUs), launched by ``srun`` under SLURM or by
  Lightning itself elsewhere. The global batch stays the recipe's: each rank trains on
  its slice of every batch (batch / world size).
* Under SLURM, Lightning's ``SLURMEnvironment(auto_requeue=True)`` owns requeue: on
  SIGUSR1 (``sbatch --signal=SIGUSR1@90``) it writes an hpc checkpoint into
  ``results/hpc/<run_id>/`` and runs ``scontrol requeue``. We only choose the moment
  (:class:`StepBoundarySignal`): its handler runs at the next step boundary, so the
  checkpoint is never taken in the middle of an optimizer step.
* A process killed without warning (the end of a session, a closed laptop, the OOM killer)
  gets no signal to write one, so :class:`ResumePoints` writes one every
  ``POSBENCH_RESUME_EVERY_S`` seconds of training (10 minutes by default) in the same place:
  a killed run loses at most that much, and its next attempt resumes as from a requeue.
* Either checkpoint holds the random generators' states (:class:`RandomStates`), which
  Lightning's does not: a resumed run draws what an uninterrupted one draws at every step.
"""

from __future__ import annotations

import random
import signal
import sys
import time
from pathlib import Path

import lightning as L
import numpy as np
import torch
from lightning.pytorch.plugins.environments import SLURMEnvironment

from suite.core.runtime import device_settings, world
from suite.training.checkpoints import write_resume_point


def make_trainer(max_steps: int, *, gradient_clip_val: float | None = None, progress_bar: bool = False,
                 root_dir: Path | None = None, **settings) -> L.Trainer:
    """A Trainer that runs ``max_steps`` optimizer steps and nothing else: no logger, no
    checkpoint callback, no validation, no model summary. ``settings`` are Lightning's
    (accelerator, devices, precision, strategy, plugins, callbacks...); by default
    :func:`suite.core.runtime.device_settings`."""
    settings = {**device_settings(), **settings}
    return L.Trainer(max_steps=max_steps, gradient_clip_val=gradient_clip_val, logger=False,
                     enable_checkpointing=False, enable_progress_bar=progress_bar, enable_model_summary=False,
                     num_sanity_val_steps=0, limit_val_batches=0, default_root_dir=root_dir,
                     use_distributed_sampler=False, **settings)


def training_settings() -> dict:
    """:func:`device_settings` for a training run: DDP when asked, Lightning's requeue under SLURM."""
    devices, nodes = world()
    settings = {**device_settings(), "devices": devices, "num_nodes": nodes}
    if devices * nodes > 1:
        settings["strategy"] = "ddp"
    if SLURMEnvironment.detect():
        settings["plugins"] = [SLURMEnvironment(auto_requeue=True, requeue_signal=signal.SIGUSR1)]
    return settings


class StepBoundarySignal(L.Callback):
    """Runs the SIGUSR1 handler Lightning installed (its auto-requeue) at the start of
    the next training step instead of wherever the signal lands, so the hpc checkpoint
    it writes never holds half an optimizer step. Also notes the step training started
    from (non-zero when resumed)."""

    def __init__(self):
        self.handler, self.pending, self.start_step = None, None, None

    def on_train_start(self, trainer, pl_module):
        self.start_step = trainer.global_step
        if self.start_step and trainer.is_global_zero:
            print(f"resumed from the hpc checkpoint at step {self.start_step}", file=sys.stderr, flush=True)
        handler = signal.getsignal(signal.SIGUSR1)
        if callable(handler):
            self.handler = handler
            signal.signal(signal.SIGUSR1, self.defer)

    def defer(self, signum, frame):
        self.pending = (signum, frame)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if self.pending is not None:
            pending, self.pending = self.pending, None
            if trainer.is_global_zero:
                print(f"SIGUSR1 at step {trainer.global_step}: Lightning writes an hpc checkpoint and requeues the job",
                      file=sys.stderr, flush=True)
            self.handler(*pending)

    def on_train_end(self, trainer, pl_module):
        if self.handler is not None:
            signal.signal(signal.SIGUSR1, self.handler)


class ResumePoints(L.Callback):
    """Every ``every_s`` seconds of training, at the next step boundary, an hpc checkpoint in
    ``hpc`` (suite.training.checkpoints.write_resume_point: the earlier one removed), which
    ``fit`` resumes from as from a requeue: with the weights, optimizer, schedule, learning
    curve and batch position of that step, so the run ends as an uninterrupted one would
    (tests/e2e/test_distributed.py). A distributed run writes none: its ranks would have to
    agree on the moment, and the cluster path has the requeue signal."""

    def __init__(self, hpc: Path, every_s: float):
        self.hpc, self.every_s, self.since = hpc, every_s, None

    def on_train_start(self, trainer, pl_module):
        self.since = time.monotonic()

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if trainer.world_size > 1 or time.monotonic() - self.since < self.every_s:
            return
        write_resume_point(trainer, self.hpc)
        self.since = time.monotonic()


class RandomStates(L.Callback):
    """The global random generators' states (torch's, CUDA's, numpy's, Python's), and those of
    the generators the model's modules hold (randomized positions' evaluation generator, which
    the learning curve's probes draw from), in every checkpoint a fit writes, restored when the
    fit resumes from one. Lightning's checkpoint holds the weights, optimizer, schedule and loop
    position but not these, and ``fit`` seeds every attempt from the run's seed, so without them
    a run that draws while it trains (randomized positions, Ruoss et al. 2023; PoSE's skips, Zhu
    et al. 2024; dropout) would draw at step N after a resume what it drew at step 0. The states are saved as tensors,
    numbers and lists, which a checkpoint read with ``weights_only`` may hold.

    Both checkpoints are written at the start of a training step (:class:`StepBoundarySignal`,
    :class:`ResumePoints`), and the states go back at that moment of the resumed fit, not when
    Lightning restores the callbacks: between the two, the training loop makes its dataloader's
    iterator, which draws a base seed from torch's generator (as it did once before step 0 of
    the uninterrupted run). ``fit`` lists this callback first, so it restores before any other
    callback of that step could write a checkpoint."""

    def __init__(self):
        self.restore, self.module = None, None

    def on_fit_start(self, trainer, pl_module):
        self.module = pl_module

    def state_dict(self) -> dict:
        _, keys, pos, has_gauss, gauss = np.random.get_state()
        version, internal, python_gauss = random.getstate()
        return {"modules": {name: g.get_state() for name, g in module_generators(self.module).items()},
                "torch": torch.get_rng_state(),
                # this process's device alone: each rank of a distributed run restores it on its own
                # device (the ranks' generators are seeded alike and draw alike), and a resume with
                # fewer devices visible has no other device's state to fail on
                "cuda": torch.cuda.get_rng_state() if torch.cuda.is_available() else None,
                "numpy": {"keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                          "has_gauss": int(has_gauss), "gauss": float(gauss)},
                "python": {"version": version, "state": list(internal), "gauss": python_gauss}}

    def load_state_dict(self, state: dict) -> None:
        self.restore = state  # at the next step's start (above)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if self.restore is not None:
            state, self.restore = self.restore, None
            self.set_states(state, pl_module)

    @staticmethod
    def set_states(state: dict, module: torch.nn.Module) -> None:
        for name, generator in module_generators(module).items():
            if name in state["modules"]:
                generator.set_state(state["modules"][name])
        torch.set_rng_state(state["torch"])
        if state["cuda"] is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state(state["cuda"])
        numpy_state = state["numpy"]
        np.random.set_state(("MT19937", numpy_state["keys"].numpy().astype(np.uint32), numpy_state["pos"],
                             numpy_state["has_gauss"], numpy_state["gauss"]))
        python_state = state["python"]
        random.setstate((python_state["version"], tuple(python_state["state"]), python_state["gauss"]))


def module_generators(module: torch.nn.Module | None) -> dict[str, torch.Generator]:
    """Every ``torch.Generator`` an attribute of ``module`` or of one of its submodules holds, by
    "submodule path.attribute" (none before the fit starts)."""
    if module is None:
        return {}
    return {f"{path}.{attribute}": value for path, sub in module.named_modules()
            for attribute, value in vars(sub).items() if isinstance(value, torch.Generator)}
