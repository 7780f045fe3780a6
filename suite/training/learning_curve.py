"""A run's learning curve: training loss, and a held-out score where the task kind has one,
at a few evenly spaced steps of training.

A length-generalization figure means something only for a model that learned the task at
its training length; the curve lets a reader see that it did (and when) before judging its
extrapolation. It is recorded in the run's record (``learning_curve``) and drawn on the run
page. The held-out probe is the task kind's (:meth:`suite.plan.task_kinds.TaskKind.learning_probe`),
on examples no training batch and no test set holds.
"""

from __future__ import annotations

from typing import Callable

import lightning as L
import torch

CURVE_POINTS = 8  # evenly spaced steps, the last one the final step


def curve_steps(steps: int, points: int = CURVE_POINTS) -> list[int]:
    """The steps after which the curve is measured: ``points`` evenly spaced (rounded up), ending at ``steps``."""
    return sorted({-(-steps * k // points) for k in range(1, points + 1)})


class LearningCurve(L.Callback):
    """Records ``{"step": [...], "train_loss": [...], <probe's figures>: [...]}`` after the
    steps of :func:`curve_steps`. Its state travels in Lightning's checkpoints, so a resumed
    run keeps the points measured before it stopped."""

    def __init__(self, steps: int, probe: Callable[[torch.nn.Module], dict[str, float]] | None = None):
        self.at = set(curve_steps(steps))
        self.probe = probe
        self.curve: dict[str, list] = {"step": [], "train_loss": []}

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        step = trainer.global_step  # optimizer steps taken, this one included
        if step not in self.at or step in self.curve["step"]:
            return
        loss = outputs["loss"] if isinstance(outputs, dict) else outputs
        self.curve["step"].append(step)
        self.curve["train_loss"].append(round(float(loss), 6))
        if self.probe is not None:
            model = pl_module.model
            was_training = model.training
            model.eval()
            with torch.no_grad():
                figures = self.probe(model)
            model.train(was_training)
            for name, value in figures.items():
                self.curve.setdefault(name, []).append(round(float(value), 6))

    def state_dict(self) -> dict:
        return {"curve": self.curve}

    def load_state_dict(self, state: dict) -> None:
        self.curve = state["curve"]
