"""The learning-curve probe of language modelling (suite.data.windows.ValidationLoss): windows
evenly spaced over the whole validation split, and its figure their mean next-byte loss."""

from __future__ import annotations

import math

import pytest
import torch

from suite.data.windows import ValidationLoss
from suite.encodings.simple import Sinusoidal, SinusoidalParams
from tests.evaluation.test_lmeval import untrained

SPLIT = torch.randint(0, 256, (10_000,), generator=torch.Generator().manual_seed(7), dtype=torch.uint8)


def test_the_windows_are_evenly_spaced_from_the_start_to_the_end_of_the_split():
    probe = ValidationLoss(SPLIT, length=16, n=8)
    starts = [int(torch.nonzero((SPLIT.unfold(0, 16, 1) == row.to(torch.uint8)).all(dim=1))[0])
              for row in probe.inputs]
    assert starts[0] == 0 and starts[-1] == len(SPLIT) - 17
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert max(gaps) - min(gaps) <= 1
    assert torch.equal(probe.targets[:, :-1], probe.inputs[:, 1:])  # each target is the next byte


@torch.no_grad()
def test_its_figure_is_the_mean_next_byte_loss_of_its_windows():
    model = untrained(Sinusoidal, SinusoidalParams(), train_len=16)
    probe = ValidationLoss(SPLIT, length=16, n=8)
    logits = model(probe.inputs)
    expected = torch.nn.functional.cross_entropy(logits.flatten(0, 1), probe.targets.flatten()).item()
    assert probe(model)["val_loss"] == pytest.approx(expected, rel=1e-5)
    assert math.isfinite(expected)


def test_a_split_too_short_for_one_window_is_refused():
    with pytest.raises(ValueError, match="holds no window of 17"):
        ValidationLoss(SPLIT[:10], length=16)
