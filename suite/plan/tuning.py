"""A fair tuning budget: each (encoding, size, task) gets its learning rate from a sweep.

A comparison at one learning rate per grid favours the encodings that rate happens to suit. So a
grid with ``tuning: {lr: [...], seed: s}`` trains every (encoding as trained, size, task) once
per learning rate, at seed ``s``. The rate with the lowest **validation loss at the training
length** is chosen, never an extrapolation figure: the choice must not look at the comparison it
feeds. It is then that group's rate for every seed of the grid. MAD-lab (Poli et al. 2024,
"Mechanistic Design and Scaling of Hybrid Architectures", Sec. 3) tunes this way, on validation
loss, per setting. The sweep's run at the chosen rate is seed ``s``'s run of the grid (the same
content, so the same run id). The other sweep runs are recorded and published: every variant
tried is shown on its encoding's page (suite.report.pages), none is hidden.

The validation loss is the last point of the run's learning curve (suite.training.learning_curve),
measured by its task kind's probe on examples no training batch holds: ``val_loss`` (nats per byte
on the validation split's windows, language modelling) or ``heldout_loss`` (nats per answer byte on
held-out examples, generated tasks). A sweep run that failed or diverged is never chosen. A group
whose sweep is not finished has no rate yet: its runs wait (``Plan.pending``), and ``posbench run``
plans again once the sweep's records are in.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from suite.core.curves import VALIDATION_FIGURES
from suite.specs import TrainRecipe


def swept(recipe: TrainRecipe, lrs: Iterable[float], lr: float) -> TrainRecipe:
    """``recipe`` at learning rate ``lr``, one of the sweep ``lrs`` it names."""
    return TrainRecipe.model_validate({**recipe.model_dump(), "lr": lr, "lr_sweep": tuple(sorted(lrs))})


def validation_loss(record) -> float | None:
    """The validation loss a run record ends with (its learning curve's last point); None for a
    failed run, a run without one, or a loss that is not finite."""
    if record is None or record.status != "done" or not record.learning_curve:
        return None
    for name in VALIDATION_FIGURES:
        values = record.learning_curve.get(name) or []
        if values and values[-1] is not None and math.isfinite(values[-1]):
            return float(values[-1])
    return None


def choose(losses: dict[float, float | None]) -> float | None:
    """The learning rate of the lowest validation loss (the smaller rate on a tie); None when no
    rate has one."""
    usable = [(loss, lr) for lr, loss in losses.items() if loss is not None]
    return min(usable)[1] if usable else None


Chooser = Callable[[list], "float | None | bool"]
"""Given a group's sweep runs (suite.plan.grid.TrainingRun), its chosen learning rate; None while
any of them has no record; False when all have records and none has a validation loss."""


def chooser(read_record: Callable[[str], object]) -> Chooser:
    """A :data:`Chooser` reading run records with ``read_record(run_id)`` (None: no record)."""

    def choose_for(sweep: list) -> float | None | bool:
        records = {run.train.lr: read_record(run.run_id) for run in sweep}
        if any(r is None for r in records.values()):
            return None
        lr = choose({lr: validation_loss(r) for lr, r in records.items()})
        return False if lr is None else lr

    return choose_for
