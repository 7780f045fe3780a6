"""GRAPE against the authors' code (golden values from scripts/golden/grape.py, which runs
model-architectures/GRAPE's MSGRAPECommuting, the GRAPE-A gated-bias modules and their
attention layers), and the special cases the paper states: GRAPE-M at initialisation is
RoPE (Prop. 3.1), GRAPE-A with constant gates is ALiBi (Secs. 4.2, 5)."""

from __future__ import annotations

import pytest
import torch

from suite.encodings.grape import GrapeA, GrapeM, softplus_inverse
from suite.encodings.simple import alibi_slopes
from suite.modeling.model import Attention, ModelConfig, path_of

from tests.encodings.helpers import build_model, dims, encoding, golden, logits_matrix

TOL = dict(rtol=1e-5, atol=1e-5)  # the reference ran in float64 but keeps its frequencies and gate sums in float32
M_CASES = golden("grape-m")["cases"]
A_CASES = golden("grape-a")["cases"]


def f64(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def heads_first(x) -> torch.Tensor:
    return f64(x).transpose(1, 2)  # [B, T, H, D] -> [B, H, T, D]


def golden_dims(g: dict):
    return dims(head_dim=g["shape"]["head_dim"], n_heads=g["shape"]["n_head"])


def attention_of(case: dict, encoding, q_rows: torch.Tensor, k_rows: torch.Tensor) -> torch.Tensor:
    """Our attention layer with the reference's projections (queries and keys given as rows
    q_rows, k_rows) on the reference's input: y [B, T, C]."""
    x = f64(case["x"])
    cfg = ModelConfig(d_model=x.shape[-1], n_heads=encoding.dims.n_heads, n_layers=1)
    attn = Attention(cfg).double()
    with torch.no_grad():
        attn.qkv.weight.copy_(torch.cat((q_rows, k_rows, f64(case["c_v"]))))
        attn.out.weight.copy_(f64(case["c_proj"]))
    return attn(x, encoding, torch.arange(x.shape[1]), path_of(encoding))


def grape_m(case: dict) -> GrapeM:
    g = golden("grape-m")
    enc = GrapeM(GrapeM.Params(per_head=not case["share_across_heads"]), golden_dims(g)).double()
    assert case["log_freq_scale"] == enc.params.log_freq_scale  # the authors' default is our default
    with torch.no_grad():
        enc.log_freq.copy_(f64(case["log_freq"]))
    return enc


@pytest.mark.parametrize("case", M_CASES, ids=lambda c: c["name"])
def test_grape_m_rotation_is_the_authors_with_the_opposite_sense(case):
    """The authors' MSGRAPECommuting rotates by -n theta: ours at ids -n gives their q, k."""
    enc = grape_m(case)
    q, k = heads_first(case["q"]), heads_first(case["k"])
    pos = torch.arange(q.shape[2])
    q_rot, k_rot = enc.rotate(q, k, -pos, -pos)
    torch.testing.assert_close(q_rot, heads_first(case["q_rot"]), **TOL)
    torch.testing.assert_close(k_rot, heads_first(case["k_rot"]), **TOL)


@pytest.mark.parametrize("case", M_CASES, ids=lambda c: c["name"])
def test_grape_m_attention_is_the_authors(case):
    """Their attention layer (QK-RMSNorm off) is ours with the second half of each head's
    W_q and W_k rows negated, which turns their rotation sense into ours."""
    enc = grape_m(case)
    H, D = enc.dims.n_heads, enc.dims.head_dim
    sign = torch.ones(H, D, dtype=torch.float64)
    sign[:, D // 2 :] = -1
    flip = sign.reshape(-1, 1)  # [H D, 1]
    y = attention_of(case, enc, flip * f64(case["c_q"]), flip * f64(case["c_k"]))
    torch.testing.assert_close(y, f64(case["y"]), **TOL)


def grape_a(case: dict) -> GrapeA:
    enc = GrapeA(GrapeA.Params(gate=case["gate"]), golden_dims(golden("grape-a"))).double()
    with torch.no_grad():
        for name in ("omega", "u", "v"):
            if getattr(enc, name) is not None:
                getattr(enc, name).copy_(f64(case[name]))
    assert {n for n in ("u", "v") if getattr(enc, n) is not None} == {n for n in ("u", "v") if n in case}
    torch.testing.assert_close(enc.slopes.double(), f64(case["slopes"]), rtol=0, atol=0)
    return enc


@pytest.mark.parametrize("case", A_CASES, ids=lambda c: c["gate"])
def test_grape_a_bias_is_the_authors(case):
    """What our score hook adds to the logits is the reference module's bias [B, H, T, T]
    (0 on future keys in both, which the model masks)."""
    enc = grape_a(case)
    x = f64(case["x"])
    B, T, C = x.shape
    H, D = enc.dims.n_heads, enc.dims.head_dim
    q = (x @ f64(case["c_q"]).T).view(B, T, H, D).transpose(1, 2)  # [B, H, T, D]
    k = (x @ f64(case["c_k"]).T).view(B, T, H, D).transpose(1, 2)
    pos = torch.arange(T)
    bias = enc.score(q, k, torch.zeros(B, H, T, T, dtype=torch.float64), pos, pos)
    torch.testing.assert_close(bias, f64(case["bias"]), **TOL)


@pytest.mark.parametrize("case", A_CASES, ids=lambda c: c["gate"])
def test_grape_a_attention_is_the_authors(case):
    enc = grape_a(case)
    y = attention_of(case, enc, f64(case["c_q"]), f64(case["c_k"]))
    torch.testing.assert_close(y, f64(case["y"]), **TOL)


def test_grape_a_slopes_are_the_authors_alibi_slopes():
    """Their _get_alibi_slopes (Python floats; their module keeps them in float32, as ours)."""
    for n, slopes in golden("grape-a")["alibi_slopes"].items():
        torch.testing.assert_close(alibi_slopes(int(n)), torch.tensor(slopes, dtype=torch.float32), rtol=0, atol=0)


# -- the special cases the paper states ------------------------------------------------


@pytest.mark.parametrize("per_head", [False, True])
def test_grape_m_at_initialisation_is_rope(per_head):
    """Prop. 3.1: canonical planes with RoPE's log-uniform spectrum are RoPE; ours starts there,
    and moves off it once a frequency is learned."""
    d = dims(head_dim=16, n_heads=2, train_len=64)
    grape, rope = encoding("grape-m", d, per_head=per_head), encoding("rope", d)
    q, k = torch.randn(2, 2, 64, 16), torch.randn(2, 2, 64, 16)
    pos = torch.arange(64)
    for ours, theirs in zip(grape.rotate(q, k, pos, pos), rope.rotate(q, k, pos, pos)):
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        grape.log_freq[..., 3] += grape.params.log_freq_scale * 0.1  # theta_3 x e^0.1
    assert not torch.allclose(grape.rotate(q, k, pos, pos)[0], rope.rotate(q, k, pos, pos)[0], atol=1e-3)


def test_grape_m_logits_depend_on_the_offset_alone_with_learned_frequencies():
    """Sec. 2.2, the exact relative law: whatever the learned spectrum (per head), q_i.k_j
    depends on j - i alone, and rotations keep norms."""
    enc = encoding("grape-m", dims(head_dim=8, n_heads=1), per_head=True)
    with torch.no_grad():
        enc.log_freq.add_(enc.params.log_freq_scale * torch.randn_like(enc.log_freq))
    q_vec, k_vec = torch.randn(8, dtype=torch.float64), torch.randn(8, dtype=torch.float64)
    enc = enc.double()
    pos = torch.arange(24)
    logits = logits_matrix(enc, q_vec, k_vec, pos)  # [T, T]
    torch.testing.assert_close(logits[1:, 1:], logits[:-1, :-1], rtol=1e-9, atol=1e-9)
    q_rot, _ = enc.rotate(q_vec.expand(1, 1, 24, 8), k_vec.expand(1, 1, 24, 8), pos, pos)
    torch.testing.assert_close(q_rot.norm(dim=-1), q_vec.norm().expand(1, 1, 24), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["grape-a-qk", "grape-a-k", "grape-a-q"])
def test_grape_a_with_constant_gates_is_alibi(name):
    """Secs. 4.2 and 5 ("Exact ALiBi"): gates that ignore the content (u = v = 0, so each is
    softplus(0) = ln 2) and softplus(omega) = 1 / (gates x ln 2) give ALiBi's -m_h (i - j):
    the whole model then computes ALiBi's logits, through the score hook's explicit path."""
    grape, alibi = build_model(name, seed=1).eval(), build_model("alibi", seed=1).eval()
    alibi.load_state_dict({k: v for k, v in grape.state_dict().items() if not k.startswith("encodings.")})
    for enc in grape.encodings:
        gates = sum(p is not None for p in (enc.u, enc.v))
        with torch.no_grad():
            for p in (enc.u, enc.v):
                if p is not None:
                    p.zero_()
            enc.omega.fill_(softplus_inverse(1 / (gates * torch.log(torch.tensor(2.0)).item())))
    idx = torch.randint(0, 256, (2, 40), generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(grape(idx), alibi(idx), rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        grape.encodings[0].omega.mul_(2.0)  # not ALiBi's slope any more: the logits move
    assert not torch.allclose(grape(idx), alibi(idx), atol=1e-3)


def test_grape_a_key_gate_sets_how_fast_a_key_fades():
    """Eq. 4.6 with the key gate: a key whose gate is larger loses more logit per unit of
    distance, and every bias is <= 0 and falls with distance."""
    enc = encoding("grape-a-k", dims(head_dim=4, n_heads=1)).double()
    with torch.no_grad():
        enc.u.copy_(torch.tensor([[1.0, 0.0, 0.0, 0.0]]))
    T = 6
    k = torch.zeros(1, 1, T, 4, dtype=torch.float64)
    k[..., 0] = torch.tensor([4.0, -4.0, 4.0, -4.0, 4.0, -4.0])  # alternately fast- and slow-fading keys
    pos = torch.arange(T)
    bias = enc.score(torch.zeros_like(k), k, torch.zeros(1, 1, T, T, dtype=torch.float64), pos, pos)[0, 0]
    lower = torch.ones(T, T, dtype=torch.bool).tril()
    assert (bias[lower] <= 0).all() and (bias[~lower] == 0).all()
    assert (bias[1:, 0] < bias[:-1, 0]).all()  # the same key, farther queries
    assert bias[5, 2] < bias[5, 1]  # key 2 (gate softplus(2)) is nearer to query 5 than key 1 (softplus(-2)), yet fainter
