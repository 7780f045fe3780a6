"""Learned absolute positions: a table, and not applicable past it."""

from __future__ import annotations

import pytest
import torch

from suite.encodings import ScaleBehaviour

from .helpers import build_model, dims, encoding


def test_table_defaults_to_the_training_length_and_is_the_max_length():
    enc = encoding("learned", dims(head_dim=8, n_heads=2, train_len=24))
    assert enc.table.shape == (24, 16)
    assert enc.max_length() == 24
    assert enc.scale_behaviour is ScaleBehaviour.NOT_APPLICABLE
    assert encoding("learned", dims(head_dim=8, n_heads=2, train_len=24), max_positions=100).max_length() == 100


def test_embed_adds_the_row_of_each_position():
    enc = encoding("learned", dims(head_dim=8, n_heads=2, train_len=24))
    x = torch.randn(3, 5, 16)
    pos = torch.tensor([0, 1, 2, 10, 23])
    assert torch.equal(enc.embed(x, pos), x + enc.table[pos])


def test_positions_past_the_table_raise_instead_of_clamping():
    enc = encoding("learned", dims(head_dim=8, n_heads=2, train_len=24))
    with pytest.raises(ValueError, match="not applicable"):
        enc.embed(torch.randn(1, 25, 16), torch.arange(25))
    model = build_model("learned").eval()
    with pytest.raises(ValueError, match="past the table"):
        model(torch.randint(0, 256, (1, 2 * model.cfg.train_len)))
