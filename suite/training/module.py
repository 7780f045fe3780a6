"""The LightningModule: the training loop and nothing else.

Next-byte cross entropy (answer-only for generated tasks: targets marked ``IGNORE`` are
left out), AdamW with linear warmup and cosine decay. The module holds the run itself
(plain data), so a checkpoint rebuilds it anywhere.
"""

from __future__ import annotations

import lightning as L
import torch
import torch.nn.functional as F

from suite.core.runtime import warmup_cosine
from suite.data.synthetic_train import IGNORE
from suite.encodings.base import PositionalEncoding
from suite.modeling.build import build_model, run_model_config
from suite.plan.grid import TrainingRun


def weight_decay_groups(module: torch.nn.Module) -> tuple[list[torch.nn.Parameter], list[torch.nn.Parameter]]:
    """(decayed, undecayed) parameters, each in ``named_parameters`` order: the weights of two or
    more dimensions are decayed (GPT-2's and nanoGPT's rule), norms, biases and 1-D positional
    parameters are not, nor any parameter an encoding names in ``no_weight_decay`` (a spectrum
    learned per head is 2-D, and takes the same rule as the spectrum shared by the heads)."""
    exempt = {id(p) for m in module.modules() if isinstance(m, PositionalEncoding)
              for n, p in m.named_parameters() if n in m.no_weight_decay()}
    decay, no_decay = [], []
    for _, p in module.named_parameters():
        (decay if p.dim() >= 2 and id(p) not in exempt else no_decay).append(p)
    return decay, no_decay


class LanguageModel(L.LightningModule):
    def __init__(self, run: dict):
        """``run`` is :meth:`TrainingRun.to_dict` (plain data, so the checkpoint rebuilds it anywhere)."""
        super().__init__()
        self.save_hyperparameters()
        self.run = TrainingRun.from_dict(run)
        self.model = build_model(self.run.encoding, run_model_config(self.run))
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
        decay, no_decay = weight_decay_groups(self)
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": recipe.weight_decay},
                                 {"params": no_decay, "weight_decay": 0.0}], lr=recipe.lr, betas=(0.9, 0.95))
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: warmup_cosine(s, recipe.warmup_steps, recipe.steps))
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    def on_train_end(self):
        # the mean over ranks: under DDP each rank saw its slice of the last batch
        self.final_loss = self.trainer.strategy.reduce(self.last_loss.clone(), reduce_op="mean")


DIVERGENCE_CHECK_EVERY = 25  # steps between checks for a non-finite loss (each check reads the loss)
