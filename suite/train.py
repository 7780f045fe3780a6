"""Training one run with Lightning: the DataModule, the LightningModule and ``fit``.

The LightningModule wraps the training loop and nothing else: next-byte cross
entropy, AdamW with linear warmup and cosine decay. CPU by default (deterministic:
the same run gives the same numbers), a GPU when there is one (bf16 autocast).
One checkpoint per training run, holding the run itself so it can be rebuilt anywhere.
"""

from __future__ import annotations

import math
import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

import lightning as L
import torch
import torch.nn.functional as F

from .data.synthetic_train import IGNORE
from .grid import TrainingRun, encoding_content
from .model import ModelConfig, Transformer
from .specs import EncodingSpec, SizeSpec
from .task_kinds import kind_of


def build_model(encoding: EncodingSpec, size: SizeSpec, train_len: int) -> Transformer:
    """A fresh model of ``size`` with ``encoding`` (trained at length ``train_len``)."""
    cfg = ModelConfig(d_model=size.d_model, n_layers=size.n_layers, n_heads=size.n_heads, d_ff=size.d_ff,
                      train_len=train_len)
    impl, params = encoding.implementation(), encoding.resolved_params()
    return Transformer(cfg, lambda: impl(params, cfg.dims))


class RunDataModule(L.LightningDataModule):
    """Training batches for a run, as its task kind makes them."""

    def __init__(self, run: TrainingRun):
        super().__init__()
        self.run = run

    def train_dataloader(self):
        return kind_of(self.run.task).train_batches(self.run.task, self.run.train, self.run.seed)


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
        self.log("train_loss", loss, prog_bar=True)
        self.last_loss = loss.detach()
        return loss

    def configure_optimizers(self):
        recipe = self.run.train
        decay = [p for n, p in self.named_parameters() if p.dim() >= 2]
        no_decay = [p for n, p in self.named_parameters() if p.dim() < 2]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": recipe.weight_decay},
                                 {"params": no_decay, "weight_decay": 0.0}], lr=recipe.lr, betas=(0.9, 0.95))
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: warmup_cosine(s, recipe.warmup_steps, recipe.steps))
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


@dataclass(frozen=True)
class FitResult:
    module: LanguageModel
    checkpoint: Path
    stats: dict


def device_settings() -> dict:
    if torch.cuda.is_available():
        return {"accelerator": "gpu", "devices": 1, "precision": "bf16-mixed", "deterministic": False}
    return {"accelerator": "cpu", "devices": 1, "precision": "32-true", "deterministic": True}


def peak_memory_mb() -> float:
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB: process peak RSS


def fit(run: TrainingRun, checkpoint_dir: Path, progress_bar: bool = True, **trainer_overrides) -> FitResult:
    L.seed_everything(run.seed, workers=True, verbose=False)
    module = LanguageModel(run.to_dict())
    settings = {**device_settings(), **trainer_overrides}
    trainer = L.Trainer(max_steps=run.train.steps, gradient_clip_val=run.train.grad_clip, logger=False,
                        enable_checkpointing=False, enable_progress_bar=progress_bar, enable_model_summary=False,
                        num_sanity_val_steps=0, limit_val_batches=0, **settings)
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    trainer.fit(module, datamodule=RunDataModule(run))
    wall = time.perf_counter() - start
    loss = module.last_loss.item()
    if not math.isfinite(loss):  # recorded as failed by the runner; no checkpoint of NaN weights is kept
        raise FloatingPointError(f"training diverged: final loss {loss} after {trainer.global_step} steps")
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    checkpoint = checkpoint_dir / f"{run.run_id}.ckpt"
    save_atomically(trainer, checkpoint)
    tokens = run.train.steps * run.train.batch_size * run.train.seq_len
    stats = {"train_wall_s": wall, "train_tokens_per_s": tokens / wall, "final_train_loss": loss,
             "peak_memory_mb": peak_memory_mb(), "n_params": module.model.num_params(),
             "device": "cuda:" + torch.cuda.get_device_name() if settings["accelerator"] == "gpu" else "cpu",
             "precision": settings["precision"], "attention_path": module.model.path.value}
    return FitResult(module, checkpoint, stats)


def save_atomically(trainer: L.Trainer, checkpoint: Path) -> None:
    """Written beside and renamed, so a killed process never leaves half a checkpoint."""
    tmp = checkpoint.with_name(f".tmp-{os.getpid()}-{checkpoint.name}")
    try:
        trainer.save_checkpoint(tmp)
        os.replace(tmp, checkpoint)
    finally:
        tmp.unlink(missing_ok=True)


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
