"""xPos, AddRoPE and ReRoPE: encodings built on rotary phases, against their papers
(golden values from scripts/golden/{xpos,addrope,rerope}.py) and their properties."""

from __future__ import annotations

import math

import pytest
import torch

from suite.model import causal_float_mask

from .helpers import dims, encoding, golden, logits_matrix

# -- xPos ---------------------------------------------------------------------------------


def test_xpos_golden():
    g = golden("xpos")
    enc = encoding("xpos", dims(head_dim=g["head_dim"]), gamma=g["gamma"], scale_base=g["scale_base"], base=g["base"])
    torch.testing.assert_close(enc.zeta, torch.tensor(g["zeta"], dtype=torch.float64), rtol=1e-12, atol=0)
    q_vec, k_vec = torch.tensor(g["q"]), torch.tensor(g["k"])
    for (n, m), expected in zip(g["pairs"], g["logits"]):
        pos = torch.tensor([m, n]) if m < n else torch.tensor([n])  # keys and queries share the position ids
        logits = logits_matrix(enc, q_vec, k_vec, pos)
        assert logits[-1, 0].item() == pytest.approx(expected, rel=1e-4, abs=1e-4)


def test_xpos_logits_depend_only_on_the_distance_and_decay():
    enc = encoding("xpos", dims(head_dim=16))
    q_vec = torch.ones(16)
    logits = logits_matrix(enc, q_vec, q_vec, torch.arange(64)).double()
    for offset in range(-63, 1):
        diagonal = logits.diagonal(offset)
        torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal), rtol=1e-4, atol=1e-5)
    shifted = logits_matrix(enc, q_vec, q_vec, torch.arange(64) + 5000).double()
    torch.testing.assert_close(shifted, logits, rtol=1e-4, atol=1e-4)


def test_xpos_stays_finite_far_from_the_origin():
    """Centring: positions around 10^5 would need zeta^(+-200) = 10^(+-109) without it."""
    enc = encoding("xpos", dims(head_dim=16))
    torch.manual_seed(0)
    q_vec, k_vec = torch.randn(16), torch.randn(16)
    far = logits_matrix(enc, q_vec, k_vec, torch.arange(100_000, 100_016))
    near = logits_matrix(enc, q_vec, k_vec, torch.arange(16))
    assert torch.isfinite(far).all()
    torch.testing.assert_close(far.tril(), near.tril(), rtol=1e-3, atol=1e-3)


# -- AddRoPE ------------------------------------------------------------------------------


def test_addrope_golden():
    g = golden("addrope")
    enc = encoding("addrope", dims(head_dim=g["head_dim"]), base=g["base"])
    with torch.no_grad():
        enc.weight_q.copy_(torch.tensor([g["weight"]]))
        enc.phase_q.copy_(torch.tensor([g["phase"]]))
    pos = torch.tensor(g["positions"])
    q = torch.tensor(g["q"]).expand(1, 1, len(pos), -1).clone()
    out, _ = enc.rotate(q, q.clone(), pos, pos)
    torch.testing.assert_close(out[0, 0], torch.tensor(g["added"]), rtol=1e-5, atol=1e-5)


def test_addrope_adds_and_never_multiplies():
    """The change to q does not depend on q; with zero weights nothing changes."""
    enc = encoding("addrope", dims(head_dim=8, n_heads=2))
    pos = torch.arange(10)
    q1, q2, k = torch.randn(1, 2, 10, 8), torch.randn(1, 2, 10, 8), torch.randn(1, 2, 10, 8)
    torch.testing.assert_close(enc.rotate(q1, k, pos, pos)[0] - q1, enc.rotate(q2, k, pos, pos)[0] - q2)
    with torch.no_grad():
        enc.weight_q.zero_()
    assert torch.equal(enc.rotate(q1, k, pos, pos)[0], q1)


def test_addrope_phasor_products_depend_only_on_the_distance():
    enc = encoding("addrope", dims(head_dim=16))
    with torch.no_grad():
        enc.phase_q.uniform_(-3, 3)
        enc.phase_k.uniform_(-3, 3)
    logits = logits_matrix(enc, torch.zeros(16), torch.zeros(16), torch.arange(48)).double()  # only a_i . b_j
    for offset in range(-47, 48):
        diagonal = logits.diagonal(offset)
        torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal), rtol=1e-4, atol=1e-5)


# -- ReRoPE -------------------------------------------------------------------------------


def rerope_scores(enc, q, k, pos):
    """What the model's explicit path computes: rotate, scaled logits + causal mask, score."""
    q, k = enc.rotate(q, k, pos, pos)
    idx = torch.arange(len(pos))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + causal_float_mask(torch.zeros(1, len(pos), len(pos)), idx, idx)
    return enc.score(q, k, scores, pos, pos)[0, 0]


@pytest.mark.parametrize("case", [0, 1])
def test_rerope_golden(case):
    g = golden("rerope")
    expected = g["cases"][case]
    enc = encoding("rerope", dims(head_dim=8), base=g["base"], window=g["window"], leaky_k=expected["leaky_k"]).eval()
    q, k = torch.tensor(g["q"])[None, None], torch.tensor(g["k"])[None, None]
    out = rerope_scores(enc, q, k, torch.arange(len(g["q"])))
    for i, row in enumerate(expected["logits"]):
        torch.testing.assert_close(out[i, : i + 1], torch.tensor(row[: i + 1]), rtol=1e-5, atol=1e-5)
        assert torch.isneginf(out[i, i + 1 :]).all()


def test_rerope_is_exact_for_any_increasing_position_ids():
    """Sparse ids (as randomized positions give): the capped distance is taken from the ids."""
    enc = encoding("rerope", dims(head_dim=8), window=10).eval()
    rope = encoding("rope", dims(head_dim=8))
    torch.manual_seed(0)
    q_vec, k_vec = torch.randn(8), torch.randn(8)
    pos = torch.tensor([0, 3, 4, 9, 15, 40, 41, 100])
    q, k = q_vec.expand(1, 1, 8, -1).clone(), k_vec.expand(1, 1, 8, -1).clone()
    out = rerope_scores(enc, q, k, pos)
    capped = torch.tensor([0, 10])  # a key at distance 10 and one at the same query position
    reference = logits_matrix(rope, q_vec, k_vec, capped)[1, 0] / math.sqrt(8)
    for i in range(8):
        for j in range(i + 1):
            if pos[i] - pos[j] >= 10:
                torch.testing.assert_close(out[i, j], reference, rtol=1e-5, atol=1e-5)
            else:
                d = torch.tensor([0, int(pos[i] - pos[j])])
                torch.testing.assert_close(out[i, j], logits_matrix(rope, q_vec, k_vec, d)[1, 0] / math.sqrt(8), rtol=1e-5, atol=1e-5)


def test_rerope_trains_as_rope_by_default():
    pos = torch.arange(20)
    torch.manual_seed(0)
    q, k = torch.randn(1, 1, 20, 8), torch.randn(1, 1, 20, 8)
    rerope = encoding("rerope", dims(head_dim=8, train_len=8))  # window 4
    rope = encoding("rope", dims(head_dim=8, train_len=8))
    idx = torch.arange(20)
    mask = causal_float_mask(torch.zeros(1, 20, 20), idx, idx)
    qr, kr = rope.rotate(q, k, pos, pos)
    rope_scores = (qr @ kr.transpose(-2, -1) / math.sqrt(8) + mask)[0, 0]
    assert torch.equal(rerope_scores(rerope.train(), q, k, pos), rope_scores)
    assert not torch.allclose(rerope_scores(rerope.eval(), q, k, pos), rope_scores)
    trained_with_it = encoding("rerope", dims(head_dim=8, train_len=8), train_as="rerope").train()
    assert torch.equal(rerope_scores(trained_with_it, q, k, pos), rerope_scores(rerope.eval(), q, k, pos))
