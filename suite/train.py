"""Training one cell with Lightning: the DataModule, the LightningModule and ``fit``.

The LightningModule wraps the training loop and nothing else: next-byte cross
entropy, AdamW with linear warmup and cosine decay. CPU by default (deterministic:
the same cell gives the same numbers), a GPU when there is one (bf16 autocast).
One checkpoint per cell, holding the cell itself so it can be rebuilt anywhere.
"""

from __future__ import annotations

import math
import resource
import time
from dataclasses import dataclass
from pathlib import Path

import lightning as L
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from .data.corpus import load_corpus
from .data.synthetic_train import IGNORE, SyntheticBatches
from .data.windows import RandomWindows
from .grid import Cell
from .model import ModelConfig, Transformer


def build_model(cell: Cell) -> Transformer:
    cfg = ModelConfig(d_model=cell.size.d_model, n_layers=cell.size.n_layers, n_heads=cell.size.n_heads,
                      d_ff=cell.size.d_ff, train_len=cell.train.seq_len)
    impl, params = cell.encoding.implementation(), cell.encoding.resolved_params()
    return Transformer(cfg, lambda: impl(params, cfg.dims))


class CellDataModule(L.LightningDataModule):
    """Training batches for a cell: corpus windows (lm) or generated examples (synthetic)."""

    def __init__(self, cell: Cell):
        super().__init__()
        self.cell = cell

    def train_dataloader(self):
        task, recipe = self.cell.task, self.cell.train
        if task.kind == "synthetic":
            batches = SyntheticBatches(task.generator, recipe.seq_len, task.min_train_len, recipe.steps,
                                       recipe.batch_size, self.cell.seed)
            return DataLoader(batches, batch_size=None, shuffle=False, num_workers=0)
        tokens = load_corpus(task.corpus)["train"]
        windows = RandomWindows(tokens, recipe.seq_len, recipe.steps * recipe.batch_size, self.cell.seed)
        return DataLoader(windows, batch_size=recipe.batch_size, shuffle=False, num_workers=0)


def warmup_cosine(step: int, warmup: int, total: int) -> float:
    """Learning-rate multiplier: linear warmup, then cosine decay to 10%."""
    if step < warmup:
        return (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))


class LanguageModel(L.LightningModule):
    def __init__(self, cell: dict):
        """``cell`` is :meth:`Cell.to_dict` (plain data, so the checkpoint rebuilds it anywhere)."""
        super().__init__()
        self.save_hyperparameters()
        self.cell = Cell.from_dict(cell)
        self.model = build_model(self.cell)
        self.last_loss = torch.tensor(float("nan"))  # a tensor: reading it each step would sync the device

    def training_step(self, batch, batch_idx):
        x, y = batch  # [B, T] each
        logits = self.model(x)  # [B, T, V]
        loss = F.cross_entropy(logits.flatten(0, 1).float(), y.flatten(), ignore_index=IGNORE)
        self.log("train_loss", loss, prog_bar=True)
        self.last_loss = loss.detach()
        return loss

    def configure_optimizers(self):
        recipe = self.cell.train
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


def fit(cell: Cell, checkpoint_dir: Path, progress_bar: bool = True, **trainer_overrides) -> FitResult:
    L.seed_everything(cell.seed, workers=True, verbose=False)
    module = LanguageModel(cell.to_dict())
    settings = {**device_settings(), **trainer_overrides}
    trainer = L.Trainer(max_steps=cell.train.steps, gradient_clip_val=cell.train.grad_clip, logger=False,
                        enable_checkpointing=False, enable_progress_bar=progress_bar, enable_model_summary=False,
                        num_sanity_val_steps=0, limit_val_batches=0, **settings)
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    trainer.fit(module, datamodule=CellDataModule(cell))
    wall = time.perf_counter() - start
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    checkpoint = checkpoint_dir / f"{cell.cell_id}.ckpt"
    trainer.save_checkpoint(checkpoint)
    tokens = cell.train.steps * cell.train.batch_size * cell.train.seq_len
    stats = {"train_wall_s": wall, "train_tokens_per_s": tokens / wall, "final_train_loss": module.last_loss.item(),
             "peak_memory_mb": peak_memory_mb(), "n_params": module.model.num_params(),
             "device": "cuda:" + torch.cuda.get_device_name() if settings["accelerator"] == "gpu" else "cpu",
             "precision": settings["precision"], "attention_path": module.model.path.value}
    return FitResult(module, checkpoint, stats)


def load_checkpoint(path: Path) -> LanguageModel:
    module = LanguageModel.load_from_checkpoint(path, map_location="cpu", weights_only=False)
    return module.eval()
