"""CoPE against the authors' released code (golden logits and attention from
scripts/golden/cope.py, which runs facebookresearch/RAM's ContextPosSelfAttn) and its
properties."""

from __future__ import annotations

import math

import pytest
import torch

from suite.encodings.cope import cope_positions, interpolated_logits
from suite.modeling.model import causal_float_mask

from tests.encodings.helpers import dims, encoding, golden
from tests.encodings.test_bias import TOL, assert_lower_close

SPECS = {False: "cope", True: "cope-nodiv"}  # the reference's --cope-nodiv is our cope-nodiv


def reference_case(nodiv: bool):
    """Our encoding with the reference's position embeddings, its q, k, v [1, H, T, Dh] and
    the logits the model hands to ``score`` (scaled q.k plus the causal mask)."""
    g = golden("cope")
    case = next(c for c in g["cases"] if c["nodiv"] is nodiv)
    enc = encoding(SPECS[nodiv], dims(head_dim=g["head_dim"], n_heads=g["n_heads"], train_len=g["block_size"]))
    with torch.no_grad():
        enc.pos_emb.copy_(torch.tensor(g["pos_emb"]))  # [Dh, P]: shared by the heads, as theirs
    q, k, v = (torch.tensor(g[x], dtype=torch.float64)[None] for x in "qkv")
    idx = torch.arange(g["length"])
    scores = q @ k.transpose(-2, -1) / math.sqrt(g["head_dim"]) + causal_float_mask(torch.zeros(1, len(idx), len(idx)), idx, idx)
    return case, enc.double(), q, k, v, scores, idx


@pytest.mark.parametrize("nodiv", [False, True])
def test_cope_logits_attention_and_output_golden(nodiv):
    case, enc, q, k, v, scores, idx = reference_case(nodiv)
    assert enc.npos_max == case["npos"]  # training length + 1, their block_size + 1
    logits = enc.score(q, k, scores, idx, idx)[0]  # [H, T, T]
    assert_lower_close(logits, case["logits"])
    assert torch.isneginf(logits.triu(1)[logits.triu(1) != 0]).all()
    attention = logits.softmax(-1)
    assert_lower_close(attention, case["attention"])
    torch.testing.assert_close(attention @ v[0], torch.tensor(case["output"], dtype=torch.float64), **TOL)


def test_counts_reach_the_clamp_in_the_golden_case():
    """The example exercises the last embedding: some counts exceed block_size and are clamped."""
    _, enc, _, _, _, scores, _ = reference_case(False)
    unclamped = torch.sigmoid(scores).flip(-1).cumsum(-1).flip(-1)
    assert (unclamped > enc.npos_max - 1).any()
    assert cope_positions(torch.sigmoid(scores), enc.npos_max).max() == enc.npos_max - 1


def test_the_default_divides_the_position_term_by_sqrt_d():
    _, enc, q, k, _, scores, idx = reference_case(False)
    _, enc_nodiv, *_ = reference_case(True)
    with_div = enc.score(q, k, scores, idx, idx) - scores
    without = enc_nodiv.score(q, k, scores, idx, idx) - scores
    keep = ~scores.isinf()
    torch.testing.assert_close(with_div[keep] * math.sqrt(q.shape[-1]), without[keep])


def test_integer_positions_take_exactly_their_embedding():
    logits_int = torch.tensor([[10.0, 20.0, 30.0]])
    positions = torch.tensor([[0.0, 1.0, 2.0, 1.25]])
    assert interpolated_logits(logits_int, positions).tolist() == [[10.0, 20.0, 30.0, 22.5]]


def test_future_keys_change_nothing():
    _, enc, q, k, _, scores, idx = reference_case(False)
    out = enc.score(q, k, scores, idx, idx)
    k2 = k.clone()
    k2[..., -1, :] = 100.0  # only the last key changes: the rows before it must not move
    scores2 = q @ k2.transpose(-2, -1) / math.sqrt(q.shape[-1]) + causal_float_mask(torch.zeros(1, len(idx), len(idx)), idx, idx)
    out2 = enc.score(q, k2, scores2, idx, idx)
    assert torch.equal(out[..., :-1, :], out2[..., :-1, :])
