"""Timing training steps for the bench: through the real Lightning module under the
Trainer that training uses (suite.training.trainer.make_trainer), and through a bare loop
with the same model, optimizer, schedule, loss and clipping."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from suite.bench.probes import now, sync

if TYPE_CHECKING:
    from suite.bench.run import BenchConfig


def training_run(project, spec, size, cfg: BenchConfig, steps: int):
    from suite.plan.grid import TrainingRun
    from suite.specs import TrainRecipe, load_task

    task = load_task(project.spec_path("tasks", "lm", project.root))
    recipe = TrainRecipe(steps=steps, batch_size=cfg.batch, seq_len=cfg.seq_len, warmup_steps=min(30, steps),
                         compile=cfg.compile)
    return TrainingRun(encoding=spec, size=size, task=task, seed=cfg.seed, train=recipe, data_fingerprint="bench")


def random_batches(cfg: BenchConfig, steps: int, device: torch.device) -> list[tuple[torch.Tensor, torch.Tensor]]:
    gen = torch.Generator().manual_seed(cfg.seed)
    data = torch.randint(0, 256, (steps, cfg.batch, cfg.seq_len + 1), generator=gen)
    return [(b[:, :-1].to(device), b[:, 1:].to(device)) for b in data]  # [B, T] inputs and targets


def trainer_settings(device: torch.device) -> dict:
    """What :func:`suite.training.fit.fit` gives its Trainer, on the device asked for."""
    from suite.core.runtime import device_settings

    if device.type == "cuda":
        return device_settings()
    return {"accelerator": "cpu", "devices": 1, "precision": "32-true", "deterministic": True}


def lightning_step_times(run, batches, device: torch.device):
    """(seconds between successive batch starts, the trained module)."""
    import lightning as L

    from suite.training.batches import StepBatches
    from suite.training.fit import accelerate
    from suite.training.module import LanguageModel
    from suite.training.trainer import make_trainer

    class Clock(L.Callback):
        def __init__(self):
            self.marks = []

        def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
            sync(device)
            self.marks.append(now(device))

        def on_train_end(self, trainer, pl_module):
            sync(device)
            self.marks.append(now(device))

    L.seed_everything(run.seed, verbose=False)
    module = LanguageModel(run.to_dict())
    accelerate(module.model, device.type == "cuda", run.train.compile)  # as fit() does
    clock = Clock()
    trainer = make_trainer(len(batches), gradient_clip_val=run.train.grad_clip, callbacks=[clock],
                           **trainer_settings(device))  # the factory fit() uses
    trainer.fit(module, train_dataloaders=StepBatches(batches))
    return [b - a for a, b in zip(clock.marks, clock.marks[1:])], module


def bare_step_times(run, batches, device: torch.device) -> list[float]:
    """The same model, optimizer, schedule, loss and clipping, in a plain loop."""
    import lightning as L

    from suite.data.synthetic_train import IGNORE
    from suite.training.fit import accelerate
    from suite.training.module import LanguageModel

    L.seed_everything(run.seed, verbose=False)
    module = LanguageModel(run.to_dict()).to(device)
    accelerate(module.model, device.type == "cuda", run.train.compile)
    model = module.model.train()
    optimizers = module.configure_optimizers()
    opt, sched = optimizers["optimizer"], optimizers["lr_scheduler"]["scheduler"]
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")  # as bf16-mixed
    times = []
    for x, y in batches:
        sync(device)
        start = now(device)
        with autocast:
            logits = model(x)  # [B, T, V]
        loss = F.cross_entropy(logits.flatten(0, 1).float(), y.flatten(), ignore_index=IGNORE)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), run.train.grad_clip)
        opt.step()
        sched.step()
        sync(device)
        times.append(now(device) - start)
    return times


# -- evaluation ---------------------------------------------------------------------
