"""A training run's batches, one per optimizer step, as its task kind makes them."""

from __future__ import annotations

import itertools
import time

import lightning as L
import torch

from suite.plan.grid import TrainingRun
from suite.plan.task_kinds import kind_of


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
