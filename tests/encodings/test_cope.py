"""CoPE: contextual positions from gates, on the paper's hand-computable example
(golden values from scripts/golden/cope.py) and its properties."""

from __future__ import annotations

import math

import torch

from suite.encodings.cope import cope_positions, interpolated_logits
from suite.model import causal_float_mask

from .helpers import dims, encoding, golden


def hand_example():
    g = golden("cope")
    enc = encoding("cope", dims(head_dim=2, n_heads=1), npos_max=g["npos_max"])
    with torch.no_grad():
        enc.pos_emb.copy_(torch.tensor(g["pos_emb"]))
    q, k = torch.tensor(g["q"])[None, None], torch.tensor(g["k"])[None, None]  # [1, 1, 4, 2]
    idx = torch.arange(4)
    scores = q @ k.transpose(-2, -1) / math.sqrt(2) + causal_float_mask(torch.zeros(1, 4, 4), idx, idx)
    return g, enc, q, k, scores


def test_cope_positions_golden():
    g, _, _, _, scores = hand_example()
    gates = torch.sigmoid(scores)
    torch.testing.assert_close(gates[0, 0], torch.tensor(g["gates"]), rtol=1e-6, atol=1e-7)  # future gates are exactly 0
    positions = cope_positions(gates, g["npos_max"])[0, 0]
    for i, row in enumerate(g["positions"]):
        torch.testing.assert_close(positions[i, : i + 1], torch.tensor(row[: i + 1]), rtol=1e-6, atol=1e-6)


def test_cope_scores_golden():
    g, enc, q, k, scores = hand_example()
    out = enc.score(q, k, scores, torch.arange(4), torch.arange(4))[0, 0]
    for i, row in enumerate(g["scores"]):
        torch.testing.assert_close(out[i, : i + 1], torch.tensor(row[: i + 1]), rtol=1e-6, atol=1e-6)
        assert torch.isneginf(out[i, i + 1 :]).all()


def test_integer_positions_take_exactly_their_embedding():
    logits_int = torch.tensor([[10.0, 20.0, 30.0]])
    positions = torch.tensor([[0.0, 1.0, 2.0, 1.25]])
    assert interpolated_logits(logits_int, positions).tolist() == [[10.0, 20.0, 30.0, 22.5]]


def test_future_keys_change_nothing():
    _, enc, q, k, scores = hand_example()
    out = enc.score(q, k, scores, torch.arange(4), torch.arange(4))
    k2 = k.clone()
    k2[..., 3, :] = 100.0  # only the last key changes: rows 0..2 must not move
    idx = torch.arange(4)
    scores2 = q @ k2.transpose(-2, -1) / math.sqrt(2) + causal_float_mask(torch.zeros(1, 4, 4), idx, idx)
    out2 = enc.score(q, k2, scores2, idx, idx)
    assert torch.equal(out[..., :3, :], out2[..., :3, :])
