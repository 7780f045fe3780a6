"""Training one run with Lightning: the DataModule, the LightningModule and ``fit``.

The LightningModule wraps the training loop and nothing else: next-byte cross
entropy, AdamW with linear warmup and cosine decay. CPU by default (deterministic:
the same run gives the same numbers), a GPU when there is one (bf16 autocast).
One checkpoint per training run, holding the run itself so it can be rebuilt anywhere.

Distributed training and preemption belong to Lightning:

* ``POSBENCH_DEVICES`` / ``POSBENCH_NODES`` (``posbench run-one --devices N --nodes M``)
  ask for DDP over N devices on each of M nodes (gloo on CPU, NCCL on GPUs), launched
  by ``srun`` under SLURM or by Lightning itself elsewhere. The global batch stays the
  recipe's: each rank trains on its slice of every batch (batch / world size).
* Under SLURM, Lightning's ``SLURMEnvironment(auto_requeue=True)`` owns requeue: on
  SIGUSR1 (``sbatch --signal=SIGUSR1@90``) it writes an hpc checkpoint into
  ``results/hpc/<run_id>/`` and runs ``scontrol requeue``. We only choose the moment:
  its handler runs at the next step boundary, so the checkpoint is never taken in the
  middle of an optimizer step. A run with an hpc checkpoint resumes from it
  (``ckpt_path="hpc"``) and skips the batches already consumed, so it ends with the
  weights and loss of an uninterrupted run.
"""

from __future__ import annotations

import itertools
import math
import os
import resource
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import lightning as L
import torch
import torch.nn.functional as F

from lightning.pytorch.plugins.environments import SLURMEnvironment

from suite.data.synthetic_train import IGNORE
from suite.plan.grid import TrainingRun, encoding_content
from suite.modeling.model import ModelConfig, Transformer
from suite.encodings.position_transforms import build_transform
from suite.specs import EncodingSpec, SizeSpec
from suite.plan.task_kinds import kind_of


def build_model(encoding: EncodingSpec, size: SizeSpec, train_len: int) -> Transformer:
    """A fresh model of ``size`` with ``encoding`` (trained at length ``train_len``)."""
    cfg = ModelConfig(d_model=size.d_model, n_layers=size.n_layers, n_heads=size.n_heads, d_ff=size.d_ff,
                      train_len=train_len)
    impl, params = encoding.implementation(), encoding.resolved_params()
    transform = None
    if encoding.train_positions is not None:
        transform = build_transform(encoding.train_positions.impl, encoding.train_positions.params)
    return Transformer(cfg, lambda dims: impl(params, dims), position_transform=transform)


class StepBatches:
    """A run's fixed sequence of batches (one per optimizer step, as its task kind makes
    them) from step ``first`` on, each cut into ``world`` equal slices of which this
    rank takes its own. Its length is the whole run's, as Lightning's restored batch
    counter expects; a resumed run starts at its restored global step."""

    def __init__(self, batches, first: int = 0, rank: int = 0, world: int = 1):
        self.batches, self.first, self.rank, self.world = batches, first, rank, world
        self.wait_s = 0.0  # seconds spent making batches (the training loop waits for them: no workers)

    def __len__(self) -> int:
        return len(self.batches)

    def __iter__(self):
        source = itertools.islice(self.batches, self.first, None)
        while True:
            start = time.perf_counter()
            batch = next(source, None)
            self.wait_s += time.perf_counter() - start
            if batch is None:
                return
            yield batch if self.world == 1 else tuple(self.slice(t) for t in batch)

    def slice(self, tensor: torch.Tensor) -> torch.Tensor:
        if len(tensor) % self.world:
            raise ValueError(f"batch of {len(tensor)} does not split evenly over {self.world} processes")
        return tensor.chunk(self.world)[self.rank]  # [B / world, T]

    # Lightning's resumable-loader interface: the position is the restored global step
    def state_dict(self) -> dict:
        return {"first": self.first}

    def load_state_dict(self, state: dict) -> None:
        pass


class RunDataModule(L.LightningDataModule):
    """Training batches for a run, as its task kind makes them, from the trainer's
    current global step (0, or where a resumed run stopped)."""

    def __init__(self, run: TrainingRun):
        super().__init__()
        self.run = run

    def train_dataloader(self):
        batches = kind_of(self.run.task).train_batches(self.run.task, self.run.train, self.run.seed)
        trainer = self.trainer
        self.loader = StepBatches(batches, trainer.global_step, trainer.global_rank, trainer.world_size)
        return self.loader


def warmup_cosine(step: int, warmup: int, total: int) -> float:
    """Learning-rate multiplier: linear warmup, then cosine decay to 10%."""
    if step < warmup:
        return (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))


class LanguageModel(L.LightningModule):
    def __init__(self, run: dict):
        """``run`` is :meth:`TrainingRun.to_dict` (plain data, so the checkpoint rebuilds it anywhere)."""
        super().__init__()
        self.save_hyperparameters()
        self.run = TrainingRun.from_dict(run)
        self.model = build_model(self.run.encoding, self.run.size, self.run.train.seq_len)
        self.last_loss = torch.tensor(float("nan"))  # a tensor: reading it each step would sync the device

    def training_step(self, batch, batch_idx):
        x, y = batch  # [B, T] each
        logits = self.model(x)  # [B, T, V]
        loss = F.cross_entropy(logits.flatten(0, 1).float(), y.flatten(), ignore_index=IGNORE)
        if batch_idx % DIVERGENCE_CHECK_EVERY == 0:  # for the progress bar; every step costs 3% of a tiny step
            self.log("train_loss", loss, prog_bar=True)
        self.last_loss = loss.detach()
        if batch_idx % DIVERGENCE_CHECK_EVERY == 0 and not torch.isfinite(self.last_loss):  # a sync only every N steps
            raise FloatingPointError(f"training diverged: loss {self.last_loss.item()} at step {self.global_step}")
        return loss

    def configure_optimizers(self):
        recipe = self.run.train
        decay = [p for n, p in self.named_parameters() if p.dim() >= 2]
        no_decay = [p for n, p in self.named_parameters() if p.dim() < 2]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": recipe.weight_decay},
                                 {"params": no_decay, "weight_decay": 0.0}], lr=recipe.lr, betas=(0.9, 0.95))
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: warmup_cosine(s, recipe.warmup_steps, recipe.steps))
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    def on_train_end(self):
        # the mean over ranks: under DDP each rank saw its slice of the last batch
        self.final_loss = self.trainer.strategy.reduce(self.last_loss.clone(), reduce_op="mean")


DIVERGENCE_CHECK_EVERY = 25  # steps between checks for a non-finite loss (each check reads the loss)


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


DEVICES_ENV, NODES_ENV = "POSBENCH_DEVICES", "POSBENCH_NODES"


def world() -> tuple[int, int]:
    """(devices per node, nodes) asked for through the environment (default 1, 1)."""
    return int(os.environ.get(DEVICES_ENV) or 1), int(os.environ.get(NODES_ENV) or 1)


def launched_rank() -> int:
    """This process's global rank as a launcher set it: srun, torchrun, or Lightning's
    own launcher for the ranks it starts; 0 for a process nobody launched."""
    for var in ("SLURM_PROCID", "RANK"):
        if os.environ.get(var):
            return int(os.environ[var])
    return int(os.environ.get("NODE_RANK") or 0) * world()[0] + int(os.environ.get("LOCAL_RANK") or 0)


def device_settings() -> dict:
    if torch.cuda.is_available():
        return {"accelerator": "gpu", "devices": 1, "precision": "bf16-mixed", "deterministic": False}
    return {"accelerator": "cpu", "devices": 1, "precision": "32-true", "deterministic": True}


def training_settings() -> dict:
    """:func:`device_settings` for a training run: DDP when asked, Lightning's requeue under SLURM."""
    devices, nodes = world()
    settings = {**device_settings(), "devices": devices, "num_nodes": nodes}
    if devices * nodes > 1:
        settings["strategy"] = "ddp"
    if SLURMEnvironment.detect():
        settings["plugins"] = [SLURMEnvironment(auto_requeue=True, requeue_signal=signal.SIGUSR1)]
    return settings


def resume_dir(checkpoint_dir: Path, run: TrainingRun) -> Path:
    """Where Lightning writes a run's hpc checkpoints: results/hpc/<run_id>/."""
    return checkpoint_dir.parent / "hpc" / run.run_id


def peak_memory_mb() -> float:
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB: process peak RSS


def fit(run: TrainingRun, checkpoint_dir: Path, progress_bar: bool = True, **trainer_overrides) -> FitResult:
    L.seed_everything(run.seed, workers=True, verbose=False)
    module = LanguageModel(run.to_dict())
    settings = {**training_settings(), **trainer_overrides}
    accelerate(module.model, settings["accelerator"] == "gpu", run.train.compile)
    hpc, boundary = resume_dir(checkpoint_dir, run), StepBoundarySignal()
    settings["callbacks"] = [boundary, *settings.get("callbacks", [])]
    trainer = L.Trainer(max_steps=run.train.steps, gradient_clip_val=run.train.grad_clip, logger=False,
                        enable_checkpointing=False, enable_progress_bar=progress_bar, enable_model_summary=False,
                        num_sanity_val_steps=0, limit_val_batches=0, default_root_dir=hpc,
                        use_distributed_sampler=False, **settings)
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    try:
        data = RunDataModule(run)
        trainer.fit(module, datamodule=data, ckpt_path="hpc" if any(hpc.glob("hpc_ckpt_*.ckpt")) else None)
        loss = module.final_loss.item()
        if not math.isfinite(loss):  # no checkpoint of NaN weights is ever written
            raise FloatingPointError(f"training diverged: final loss {loss}")
    except Exception as exc:
        raise TrainingFailed(trainer.global_step, exc) from exc
    wall = time.perf_counter() - start
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    checkpoint = checkpoint_dir / f"{run.run_id}.ckpt"
    save_atomically(trainer, checkpoint)
    if trainer.is_global_zero:
        shutil.rmtree(hpc, ignore_errors=True)  # finished: nothing left to resume
    tokens = (run.train.steps - boundary.start_step) * run.train.batch_size * run.train.seq_len
    stats = {"train_wall_s": wall, "train_tokens_per_s": tokens / wall, "final_train_loss": loss,
             "peak_memory_mb": peak_memory_mb(), "n_params": module.model.num_params(),
             "device": "cuda:" + torch.cuda.get_device_name() if settings["accelerator"] == "gpu" else "cpu",
             "precision": settings["precision"], "attention_path": module.model.path_name,
             "compiled": run.train.compile,
             # the share of training wall time spent making batches (the loop waits for them)
             "data_wait_s": data.loader.wait_s, "data_wait_share": data.loader.wait_s / wall,
             "world_size": trainer.world_size, "resumed_from_step": boundary.start_step or None}
    return FitResult(module, checkpoint, stats)


def save_atomically(trainer: L.Trainer, checkpoint: Path) -> None:
    """Written beside and renamed, so a killed process never leaves half a checkpoint."""
    tmp = checkpoint.with_name(f".tmp-{os.getpid()}-{checkpoint.name}")
    try:
        trainer.save_checkpoint(tmp)  # collective under DDP: every rank calls it, rank 0 writes
        if trainer.is_global_zero:
            os.replace(tmp, checkpoint)
    finally:
        tmp.unlink(missing_ok=True)


def accelerate(model: Transformer, on_gpu: bool, compile: bool) -> None:
    """The GPU path: relative-bias encodings through FlexAttention on a GPU (exact: see
    :func:`suite.modeling.model.flex_attend`), and ``torch.compile`` when the recipe asks for it
    (in place, so the state dict keeps its names)."""
    model.use_flex_attention(on_gpu)
    if compile:
        model.compile()


def model_for(evaluation_encoding: EncodingSpec, trained: LanguageModel) -> Transformer:
    """The trained weights in a model with the encoding as evaluated (a training-free
    variant on the checkpoint it trains as); strict: every weight must fit."""
    run = trained.run
    if encoding_content(evaluation_encoding) == encoding_content(run.encoding):
        return trained.model
    model = build_model(evaluation_encoding, run.size, run.train.seq_len)
    model.load_state_dict(trained.model.state_dict(), strict=True)
    return model.eval()


def load_checkpoint(path: Path) -> LanguageModel:
    module = LanguageModel.load_from_checkpoint(path, map_location="cpu", weights_only=False)
    return module.eval()
