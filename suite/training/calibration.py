"""Calibrating a child's encoding on its parent's weights before it fine-tunes.

An encoding with ``calibrates = True`` (LongRoPE: :mod:`suite.encodings.longrope`) has
something to search on the trained model rather than to learn by gradient, unless its
``searches(params)`` says the params fix it: LongRoPE's factors (Ding et al. 2024, Sec.
3.2), searched on the parent's weights at the child's length and then fine-tuned with, as
the authors search before they fine-tune. The fitness of a candidate is the model's mean
cross-entropy on ``samples`` sequences of the child's own data at its training length (the
authors score perplexity on PG19 samples at the target length), drawn with a seed of their
own so they are not the batches the child then trains on. What the search found goes into
the encoding's persistent buffer (so into every checkpoint of the child) and into the run
record's stats. A child of 0 steps (``steps: 0`` in the grid's extension) stops there: the
search alone, evaluated on the parent's weights.
"""

from __future__ import annotations

import time

import numpy as np
import torch
import torch.nn.functional as F

from suite.plan.grid import TrainingRun
from suite.plan.task_kinds import kind_of
from suite.data.synthetic_train import IGNORE

CALIBRATION_SEED = 7_919  # added to the run's seed: the samples are not its first batches


def calibrating(model) -> list:
    return [enc for enc in model.encodings if getattr(enc, "calibrates", False)]


def calibration_samples(run: TrainingRun, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(inputs [n, T], targets [n, T]) of the run's own task at its training length."""
    xs, ys = [], []
    recipe = run.train
    if recipe.steps == 0:  # a search-only child: its stream holds no batch, so draw as many as the samples need
        recipe = recipe.model_copy(update={"steps": -(-n // recipe.batch_size)})
    for x, y in kind_of(run.task).train_batches(run.task, recipe, run.seed + CALIBRATION_SEED):
        xs.append(x), ys.append(y)
        if sum(len(b) for b in xs) >= n:
            break
    return torch.cat(xs)[:n], torch.cat(ys)[:n]


def calibrate(model, run: TrainingRun) -> dict | None:
    """Search every calibrating encoding's factors on ``model`` (the parent's weights); None
    when the model has none, or its factors are fixed by its params."""
    from suite.encodings.longrope_search import DimMonoSearch

    encodings = [enc for enc in calibrating(model) if enc.searches(enc.params)]
    if not encodings:
        return None
    first = encodings[0]
    x, y = calibration_samples(run, first.params.samples)
    x, y = x.to(first.searched_factors.device), y.to(first.searched_factors.device)
    was_training = model.training
    model.eval()

    @torch.no_grad()
    def fitness(factors: np.ndarray) -> float:
        for enc in encodings:  # one factor vector for every layer, as the authors' replace_rope
            enc.set_factors(torch.from_numpy(factors))
        logits = model(x)
        return F.cross_entropy(logits.flatten(0, 1).float(), y.flatten(), ignore_index=IGNORE).item()

    scale = first.params.target  # the authors search for the target ratio, the range [1, 1 + s] with it
    start = time.perf_counter()
    result = DimMonoSearch(fitness, scale, first.params, seed=run.seed).run(first.rescale_factors(scale).numpy())
    for enc in encodings:
        enc.set_factors(torch.from_numpy(result.factors))
    model.train(was_training)
    return {"longrope_factors": [round(float(f), 6) for f in result.factors], "search_loss": result.loss,
            "search_start_loss": result.start_loss, "search_candidates": result.evaluated,
            "search_s": time.perf_counter() - start}
