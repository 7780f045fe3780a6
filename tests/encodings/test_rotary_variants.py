"""xPos, AddRoPE and ReRoPE: encodings built on rotary phases, against their authors'
code (golden values from scripts/golden/{xpos,addrope,rerope}.py, which run
microsoft/torchscale, cccntu/lingua@addrope and bojone/rerope) and their properties."""

from __future__ import annotations

import math

import pytest
import torch

from suite.encodings.rerope import logn_scale
from suite.modeling.model import Attention, AttentionPath, ModelConfig, causal_float_mask

from tests.encodings.helpers import dims, encoding, golden, logits_matrix

TOL = {"rtol": 1e-5, "atol": 1e-5}


def half_split(x: torch.Tensor) -> torch.Tensor:
    """Interleaved pairs (2i, 2i + 1), as torchscale and lingua lay them out, to ours
    (i, i + Dh/2): the fixed permutation between the two conventions, on the last dim."""
    d = x.shape[-1]
    return x[..., torch.cat((torch.arange(0, d, 2), torch.arange(1, d, 2)))]


def f64(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


# -- xPos ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", range(4))
def test_xpos_rotates_as_torchscale(case):
    """Our rotate returns torchscale's XPOS queries and keys (up to the pair permutation),
    including its centring, and so its logits; the last case is torchscale's incremental
    decoding (queries offset to the end of the keys)."""
    g = golden("xpos")
    c = g["cases"][case]
    enc = encoding("xpos", dims(head_dim=g["head_dim"]), gamma=g["gamma"], scale_base=g["scale_base"], base=g["base"])
    torch.testing.assert_close(enc.zeta, f64(c["zeta"]), rtol=1e-12, atol=0)
    k_pos = torch.arange(c["n_keys"])
    q_pos = k_pos[c["offset"]:]
    q, k = half_split(f64(c["q"]))[None, None], half_split(f64(c["k"]))[None, None]  # [1, 1, T, Dh]
    q_out, k_out = enc.rotate(q, k, q_pos, k_pos)
    torch.testing.assert_close(q_out[0, 0], half_split(f64(c["q_out"])), **TOL)
    torch.testing.assert_close(k_out[0, 0], half_split(f64(c["k_out"])), **TOL)
    expected = f64(c["q_out"]) @ f64(c["k_out"]).T  # the permutation cancels in q . k
    causal = q_pos[:, None] >= k_pos[None, :]
    torch.testing.assert_close((q_out[0, 0] @ k_out[0, 0].T)[causal], expected[causal], **TOL)


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


ADDROPE_PARAMS = (("weight_q", "q_weight"), ("weight_k", "k_weight"), ("phase_q", "q_phase"), ("phase_k", "k_phase"))


def test_addrope_initialisation_is_the_authors():
    g = golden("addrope")
    enc = encoding("addrope", dims(head_dim=g["head_dim"], n_heads=g["n_heads"]))
    for ours, theirs in ADDROPE_PARAMS:
        assert torch.equal(getattr(enc, ours), torch.tensor(g["init"][theirs]))
    small = encoding("addrope-small-init", dims(head_dim=g["head_dim"], n_heads=g["n_heads"]))  # the other reading
    assert torch.equal(small.weight_q, torch.full_like(small.weight_q, g["head_dim"] ** -0.5))


@pytest.mark.parametrize("case", ["consecutive", "sparse"])
def test_addrope_adds_as_the_authors_code(case):
    """Our rotate returns what the author's apply_additive_rotary_emb does (up to the pair
    permutation), with every weight and phase set to a different value."""
    g = golden("addrope")
    c = g["cases"][case]
    enc = encoding("addrope", dims(head_dim=g["head_dim"], n_heads=g["n_heads"]), base=g["base"])
    with torch.no_grad():
        for ours, theirs in ADDROPE_PARAMS:
            getattr(enc, ours).copy_(torch.tensor(c[theirs]))
    pos = torch.tensor(c["positions"])
    q = half_split(f64(c["q"])).transpose(0, 1)[None]  # [T, H, Dh] -> [1, H, T, Dh]
    k = half_split(f64(c["k"])).transpose(0, 1)[None]
    q_out, k_out = enc.rotate(q, k, pos, pos)
    torch.testing.assert_close(q_out[0], half_split(f64(c["q_out"])).transpose(0, 1), **TOL)
    torch.testing.assert_close(k_out[0], half_split(f64(c["k_out"])).transpose(0, 1), **TOL)


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
    mask = causal_float_mask(torch.zeros(1, len(pos), len(pos), dtype=q.dtype), idx, idx)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + mask
    return enc.score(q, k, scores, pos, pos)[0, 0]


def rerope_case(case: int):
    """(golden, case, our encoding with the golden's shapes, the model's attention with its weights)."""
    g = golden("rerope")
    c = g["cases"][case]
    spec = "rerope" if c["leaky_k"] is None else "rerope-leaky"
    d = dims(head_dim=g["head_dim"], n_heads=g["n_heads"], train_len=g["train_len"])
    enc = encoding(spec, d, base=g["base"], window=g["window"], leaky_k=c["leaky_k"]).eval()
    cfg = ModelConfig(d_model=d.d_model, n_layers=1, n_heads=d.n_heads, d_ff=4, train_len=d.train_len)
    attn = Attention(cfg).double().eval()
    with torch.no_grad():
        attn.qkv.weight.copy_(torch.cat([f64(c["w_q"]), f64(c["w_k"]), f64(c["w_v"])]))
        attn.out.weight.copy_(f64(c["w_o"]))
    return g, c, enc, attn


@pytest.mark.parametrize("case", [0, 1], ids=["rerope", "leaky"])
def test_rerope_logits_are_the_reference_patches(case):
    """The logits of Su's patched Llama attention, log(n) scaling included (queries at
    8 .. 23 past the training length 8), through rotate and score as the model calls them."""
    g, c, enc, attn = rerope_case(case)
    x = f64(c["hidden"])
    T, H = x.shape[0], g["n_heads"]
    q, k, _ = attn.qkv(x).split(x.shape[1], dim=-1)
    q, k = (t.view(T, H, g["head_dim"]).transpose(0, 1)[None] for t in (q, k))  # [1, H, T, Dh]
    pos = torch.arange(T)
    qr, kr = enc.rotate(q, k, pos, pos)
    mask = causal_float_mask(torch.zeros(1, T, T, dtype=torch.float64), pos, pos)
    out = enc.score(qr, kr, qr @ kr.transpose(-2, -1) / math.sqrt(g["head_dim"]) + mask, pos, pos)[0]  # [H, T, T]
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    expected = torch.tensor([[[v if v is not None else math.nan for v in row] for row in head] for head in c["logits"]],
                            dtype=torch.float64)
    torch.testing.assert_close(out[:, causal], expected[:, causal], **TOL)
    assert torch.isneginf(out[:, ~causal]).all()


@pytest.mark.parametrize("case", [0, 1], ids=["rerope", "leaky"])
def test_rerope_attention_output_is_the_reference_patches(case):
    """What the model applies: suite.modeling.model.Attention on its explicit path gives the
    patched LlamaAttention's output for the same weights and hidden states."""
    g, c, enc, attn = rerope_case(case)
    x = f64(c["hidden"])[None]  # [1, T, D]
    T = x.shape[1]
    idx = torch.arange(T)
    mask = causal_float_mask(torch.zeros(1, T, T, dtype=torch.float64), idx, idx)[None]
    torch.testing.assert_close(attn(x, enc, idx, AttentionPath.EXPLICIT, mask)[0], f64(c["output"]), **TOL)


def test_rerope_logn_scales_each_query_row_past_the_training_length_only():
    torch.manual_seed(0)
    q, k = torch.randn(1, 1, 40, 8, dtype=torch.float64), torch.randn(1, 1, 40, 8, dtype=torch.float64)
    pos = torch.arange(40)
    d = dims(head_dim=8, train_len=16)
    for spec in ("rerope", "rerope-leaky"):
        scaled = rerope_scores(encoding(spec, d).eval(), q, k, pos)
        plain = rerope_scores(encoding(spec, d, logn=False).eval(), q, k, pos)
        assert torch.equal(scaled[:16], plain[:16])  # log(n + 1) / log(L) <= 1 there
        factor = torch.log(pos[16:].double() + 1) / math.log(16)
        torch.testing.assert_close(scaled[16:], plain[16:] * factor[:, None], rtol=1e-12, atol=0)
    assert torch.equal(logn_scale(torch.tensor([0, 15, 16, 255]), 16), f64([1, 1, math.log(17) / math.log(16), 2]))


def test_rerope_is_exact_for_any_increasing_position_ids():
    """Sparse ids (as randomized positions give): the capped distance and the log(n)
    scaling (id 100 is past the training length 64) are taken from the ids."""
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
        lam = max(1.0, math.log(pos[i] + 1) / math.log(64))
        for j in range(i + 1):
            if pos[i] - pos[j] >= 10:
                torch.testing.assert_close(out[i, j], lam * reference, **TOL)
            else:
                d = torch.tensor([0, int(pos[i] - pos[j])])
                expected = lam * logits_matrix(rope, q_vec, k_vec, d)[1, 0] / math.sqrt(8)
                torch.testing.assert_close(out[i, j], expected, **TOL)


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
