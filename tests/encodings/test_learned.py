"""Absolute encodings: learned positions (a table, not applicable past it), the sinusoidal
table against its references (scripts/golden/sinusoidal.py), and NoPE."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from suite.encodings import ScaleBehaviour
from suite.modeling.model import AttentionPath

from tests.encodings.helpers import CFG, build_model, dims, encoding, golden


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


# -- sinusoidal: transformers (the paper's formula) and fairseq (tensor2tensor's layout) -------------


@pytest.mark.parametrize("name, reading, tol", [("sinusoidal", "paper", 1e-5), ("sinusoidal-t2t", "tensor2tensor", 1e-4),
                                                ("sinusoidal-unit", "paper", 1e-5)])
def test_sinusoidal_embedding_golden(name, reading, tol):
    """What embed adds to a zero token embedding is the reference's table; the t2t reference
    computes in float32, hence its 1e-4."""
    g = golden("sinusoidal")
    enc = encoding(name, dims(head_dim=g["d_model"], n_heads=1))
    pos = torch.tensor(g["positions"])
    table = enc.embed(torch.zeros(1, len(pos), g["d_model"]), pos)[0]
    torch.testing.assert_close(table.double(), torch.tensor(g[reading]["table"], dtype=torch.float64), rtol=tol, atol=tol)


def test_sinusoidal_scales_the_token_embeddings_by_sqrt_d():
    enc = encoding("sinusoidal", dims(head_dim=16, n_heads=1))
    x, pos = torch.randn(2, 5, 16), torch.arange(5)
    torch.testing.assert_close(enc.embed(x, pos) - enc.embed(torch.zeros_like(x), pos), x * 4.0)


@pytest.mark.parametrize("init, factor", [("gpt2", 50.0), ("pytorch", 1.0)])
def test_unit_token_scale_brings_the_initial_tokens_to_unit_std(init, factor):
    """sinusoidal-unit multiplies the tokens by 1 / (the size's initial embedding std), which
    the model tells its encoding: 50 for GPT-2's 0.02, 1 for PyTorch's N(0, 1)."""
    model = build_model("sinusoidal-unit", cfg=dataclasses.replace(CFG, init=init))
    enc = model.encodings[0]
    x, pos = torch.randn(2, 5, CFG.d_model), torch.arange(5)
    torch.testing.assert_close(enc.embed(x, pos) - enc.embed(torch.zeros_like(x), pos), x * factor)
    tokens = model.tok.weight * factor
    assert 0.9 < tokens.std().item() < 1.1


# -- NoPE ---------------------------------------------------------------------------------------------


def test_nope_acts_nowhere_and_takes_the_fused_causal_path():
    enc = encoding("nope", dims(head_dim=8, n_heads=2))
    x = torch.randn(1, 5, 16)
    assert type(enc).hooks() == frozenset() and torch.equal(enc.embed(x, torch.arange(5)), x)
    assert build_model("nope").path is AttentionPath.FUSED
