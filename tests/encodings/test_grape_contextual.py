"""GRAPE-AP and contextual GRAPE-M against the authors' code (golden values from
scripts/golden/grape.py, which runs model-architectures/GRAPE's attention layers and their
model's initialisation), their logits hook on chunks of queries, and the paper's statements:
the path-integral bias of Eqs. 5.1-5.2, GRAPE-AP with constant edges is ALiBi (Sec. 5,
"Exact ALiBi"), and phase-modulated GRAPE-M's logits depend on the phase difference alone."""

from __future__ import annotations

import math

import pytest
import torch

from suite.encodings.grape_contextual import GrapeAP, GrapeMContextual
from suite.modeling.model import Attention, ModelConfig, path_of

from tests.encodings.helpers import build_model, dims, encoding, golden

TOL = dict(rtol=1e-5, atol=1e-5)  # the reference ran in float64 but keeps its bias, phases and angles in float32
AP = golden("grape-ap")
CTX = golden("grape-m-ctx")


def f64(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def golden_dims(g: dict):
    return dims(head_dim=g["shape"]["head_dim"], n_heads=g["shape"]["n_head"])


def attention_of(case: dict, enc, q_rows: torch.Tensor, k_rows: torch.Tensor) -> torch.Tensor:
    """Our attention layer with the reference's projections (query and key rows given) on the
    reference's input: y [B, T, C]."""
    x = f64(case["x"])
    attn = Attention(ModelConfig(d_model=x.shape[-1], n_heads=enc.dims.n_heads, n_layers=1)).double()
    with torch.no_grad():
        attn.qkv.weight.copy_(torch.cat((q_rows, k_rows, f64(case["c_v"]))))
        attn.out.weight.copy_(f64(case["c_proj"]))
    return attn(x, enc, torch.arange(x.shape[1]), path_of(enc))


# -- GRAPE-AP against the authors ------------------------------------------------------


def grape_ap(case: dict) -> GrapeAP:
    enc = GrapeAP(GrapeAP.Params(p_head_dim=case["p_head_dim"]), golden_dims(AP)).double()
    with torch.no_grad():
        enc.probe.weight.copy_(f64(case["c_p"]))
    torch.testing.assert_close(enc.slopes, f64(case["slopes"]), rtol=0, atol=0)
    return enc


@pytest.mark.parametrize("case", AP["cases"], ids=lambda c: c["name"])
def test_grape_ap_bias_is_the_authors(case):
    """b(t, j) is the attn_mask their attention gives SDPA, on the keys a query sees; 0 (theirs
    -inf) on the future keys, which the model masks."""
    enc, x = grape_ap(case), f64(case["x"])
    T = x.shape[1]
    ours = enc.path_bias(x, T, T, 0, 0)
    theirs = torch.tensor([[[[math.nan if v is None else v for v in row] for row in head] for head in batch]
                           for batch in case["bias"]], dtype=torch.float64)
    seen = torch.ones(T, T, dtype=torch.bool).tril().expand_as(ours)
    assert bool(theirs[~seen].isnan().all()) and bool((ours[~seen] == 0).all())
    torch.testing.assert_close(ours[seen], theirs[seen], **TOL)


@pytest.mark.parametrize("case", AP["cases"], ids=lambda c: c["name"])
def test_grape_ap_attention_is_the_authors(case):
    enc = grape_ap(case)
    y = attention_of(case, enc, f64(case["c_q"]), f64(case["c_k"]))
    torch.testing.assert_close(y, f64(case["y"]), **TOL)


def test_grape_ap_starts_as_the_authors_model():
    """W_p drawn N(0, (0.5 / sqrt(D))^2) as their init_llama_mha_weights draws it at the same
    width (measured there to about 1%)."""
    init = AP["init"]
    torch.manual_seed(0)
    d = dims(head_dim=init["n_embd"] // init["n_head"], n_heads=init["n_head"])
    w = GrapeAP(GrapeAP.Params(p_head_dim=init["p_head_dim"]), d).probe.weight
    assert w.shape == (init["n_head"] * init["p_head_dim"], init["n_embd"])
    assert abs(w.std().item() / init["c_p_std"] - 1) < 0.04
    assert abs(w.mean().item()) < 0.1 * init["c_p_std"] and abs(init["c_p_mean"]) < 0.1 * init["c_p_std"]


# -- GRAPE-M contextual against the authors -----------------------------------------------


def grape_m_ctx(case: dict, load: bool = True) -> GrapeMContextual:
    params = GrapeMContextual.Params(per_head=case["per_head"], per_head_phase=case["per_head"])
    enc = GrapeMContextual(params, golden_dims(CTX)).double()
    assert case["omega_scale"] == enc.params.omega_scale  # the authors' default is our default
    if load:
        with torch.no_grad():
            enc.log_freq.copy_(f64(case["log_freq"]))
            enc.omega_proj.weight.copy_(f64(case["omega_proj_weight"]))
            enc.omega_proj.bias.copy_(f64(case["omega_proj_bias"]))
    return enc


def sense_flip(enc) -> torch.Tensor:
    """[H Dh, 1]: -1 on the second half of each head's rows, which turns their rotation sense into ours."""
    H, D = enc.dims.n_heads, enc.dims.head_dim
    sign = torch.ones(H, D, dtype=torch.float64)
    sign[:, D // 2 :] = -1
    return sign.reshape(-1, 1)


@pytest.mark.parametrize("case", CTX["cases"], ids=lambda c: c["name"])
def test_grape_m_ctx_phase_and_rotation_are_the_authors(case):
    """Phi [B, T, H|1] is their _cumulative_phase; their q, k as SDPA gets them are ours
    turned by -Phi (their sense)."""
    enc, x = grape_m_ctx(case), f64(case["x"])
    B, T, _ = x.shape
    H, D = enc.dims.n_heads, enc.dims.head_dim
    phi = enc.phase(x)
    torch.testing.assert_close(phi.transpose(1, 2), f64(case["phi"]), **TOL)
    for rows, turned in (("c_q", "q_rot"), ("c_k", "k_rot")):
        v = (x @ f64(case[rows]).T).view(B, T, H, D).transpose(1, 2)  # [B, H, T, Dh]
        torch.testing.assert_close(enc.turn(v, -phi, 0), f64(case[turned]), **TOL)


@pytest.mark.parametrize("case", CTX["cases"], ids=lambda c: c["name"])
def test_grape_m_ctx_attention_is_the_authors(case):
    enc = grape_m_ctx(case)
    flip = sense_flip(enc)
    y = attention_of(case, enc, flip * f64(case["c_q"]), flip * f64(case["c_k"]))
    torch.testing.assert_close(y, f64(case["y"]), **TOL)


@pytest.mark.parametrize("case", CTX["cases"], ids=lambda c: c["name"])
def test_grape_m_ctx_starts_as_the_authors_model(case):
    """Gate weight 0 (their GPT's init skips it), gate bias softplus^-1(1e-3), RoPE's spectrum."""
    enc, init = grape_m_ctx(case, load=False), case["init"]
    torch.testing.assert_close(enc.omega_proj.weight.float(), torch.tensor(init["omega_proj_weight"]), rtol=0, atol=0)
    torch.testing.assert_close(enc.omega_proj.bias.float(), torch.tensor(init["omega_proj_bias"]), rtol=0, atol=0)
    torch.testing.assert_close(enc.log_freq.float(), torch.tensor(init["log_freq"]), rtol=1e-6, atol=1e-6)


# -- the logits hook on chunks --------------------------------------------------------------


def lively(name: str, d, seed: int = 0):
    """The encoding of spec ``name`` with weights that make the content matter (float64)."""
    torch.manual_seed(seed)
    enc = encoding(name, d).double()
    with torch.no_grad():
        if isinstance(enc, GrapeAP):
            enc.probe.weight.mul_(4.0)
        else:
            enc.omega_proj.weight.normal_(std=1.0)
    return enc


@pytest.mark.parametrize("name", ["grape-ap", "grape-m-ctx"])
@pytest.mark.parametrize("q0, n, k0, k_end", [(8, 6, 3, 14), (0, 5, 0, 5), (15, 5, 10, 20), (4, 5, 2, 20)])
def test_a_chunk_of_queries_gets_the_logits_of_the_whole(name, q0, n, k0, k_end):
    """Queries [q0, q0 + n) over keys [k0, k_end), with the whole sequence's input, are the
    block of the whole's logits (the model's long-sequence chunks rely on it); keys past the
    last query are future keys, there as in the whole."""
    d = dims(head_dim=8, n_heads=2)
    enc = lively(name, d)
    gen = torch.Generator().manual_seed(1)
    B, T = 2, 20
    q, k = (torch.randn(B, 2, T, 8, generator=gen, dtype=torch.float64) for _ in range(2))
    x = torch.randn(B, T, d.d_model, generator=gen, dtype=torch.float64)
    whole = enc.logits(q, k, x, 0, 0)
    part = enc.logits(q[:, :, q0 : q0 + n], k[:, :, k0:k_end], x, q0, k0)
    torch.testing.assert_close(part, whole[:, :, q0 : q0 + n, k0:k_end], rtol=1e-12, atol=1e-12)


# -- what the paper states ---------------------------------------------------------------------


def half_split_rotation(angles: list[float]) -> torch.Tensor:
    """The matrix turning half-split plane (i, i + n) by angles[i], n = len(angles)."""
    n = len(angles)
    r = torch.zeros(2 * n, 2 * n, dtype=torch.float64)
    for i, a in enumerate(angles):
        r[i, i], r[i, i + n], r[i + n, i], r[i + n, i + n] = math.cos(a), -math.sin(a), math.sin(a), math.cos(a)
    return r


def test_grape_ap_bias_is_the_path_sum_of_eqs_5_1_and_5_2():
    """b(t, j) = sum_{l=j+1..t} m_h log sigmoid(<p_t, R_l p^_l> / P) with the matrices written
    out: R_l turns by -l (their apply_rotary_emb), p^ = p / rms(p), the query's own probe raw,
    l = t included; so b(t, t) = 0, b <= 0, and b falls as the key moves away."""
    enc = lively("grape-ap", dims(head_dim=4, n_heads=2), seed=3)
    T, P = 7, enc.params.p_head_dim
    x = torch.randn(1, T, enc.dims.d_model, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    got = enc.path_bias(x, T, T, 0, 0)[0]  # [H, T, T]
    p = enc.probes(x)[0].detach()  # [H, T, P]
    p_hat = p / p.pow(2).mean(-1, keepdim=True).add(torch.finfo(torch.float64).eps).sqrt()
    for h in range(2):
        for t in range(T):
            psi = [enc.slopes[h].item() * torch.nn.functional.logsigmoid(
                p[h, t] @ half_split_rotation([-l] * (P // 2)) @ p_hat[h, l] / P).item() for l in range(T)]
            for j in range(T):
                want = sum(psi[j + 1 : t + 1]) if j <= t else 0.0
                assert got[h, t, j].item() == pytest.approx(want, rel=1e-10, abs=1e-12)
    lower = torch.ones(T, T, dtype=torch.bool).tril(-1)
    assert bool((got.diagonal(dim1=-2, dim2=-1) == 0).all()) and bool((got[:, lower] < 0).all())
    for t in range(1, T):  # b(t, j + 1) - b(t, j) = -psi(t, j + 1) > 0: nearer keys fade less
        assert bool((got[:, t, : t + 1].diff(dim=-1) > 0).all())


def test_grape_ap_with_constant_edges_is_alibi():
    """Sec. 5, "Relation to GRAPE-A": edges that ignore the endpoint and the content give
    psi = -theta_h and b(t, j) = -theta_h (t - j), ALiBi's bias. W_p = 0 makes every edge
    m_h log sigmoid(0): the model then computes ALiBi's with slopes m_h ln 2."""
    grape, alibi = build_model("grape-ap", seed=1).eval(), build_model("alibi", seed=1).eval()
    alibi.load_state_dict({k: v for k, v in grape.state_dict().items() if not k.startswith("encodings.")})
    alibi.encodings[0].slopes.mul_(math.log(2))
    idx = torch.randint(0, 256, (2, 40), generator=torch.Generator().manual_seed(0))
    assert not torch.allclose(grape(idx), alibi(idx), atol=1e-3)  # the probes' content moves the bias
    with torch.no_grad():
        for enc in grape.encodings:
            enc.probe.weight.zero_()
    torch.testing.assert_close(grape(idx), alibi(idx), rtol=1e-5, atol=1e-5)


def test_grape_m_ctx_starts_as_rope_read_at_scaled_positions():
    """With the gate's weight 0 (the authors' start), omega is the constant c = sigmoid(b / 16)
    = 0.394 and Phi_t = c t: the logits are non-contextual GRAPE-M's (RoPE's at initialisation,
    Prop. 3.1) at positions c t; a gate that reads the content moves them."""
    d = dims(head_dim=8, n_heads=2)
    ctx, rope = encoding("grape-m-ctx", d).double(), encoding("grape-m", d).double()
    torch.testing.assert_close(rope.log_freq.exp() ** (1 / rope.params.log_freq_scale), ctx.log_freq.exp(),
                               rtol=1e-6, atol=0)  # the same spectrum, theirs kept in float32
    with torch.no_grad():
        rope.log_freq.copy_(ctx.log_freq * rope.params.log_freq_scale)  # and to the last bit
    c = torch.sigmoid(ctx.omega_proj.bias / ctx.params.omega_scale).item()
    assert c == pytest.approx(0.3937, abs=1e-4)
    gen = torch.Generator().manual_seed(0)
    q, k = (torch.randn(2, 2, 24, 8, generator=gen, dtype=torch.float64) for _ in range(2))
    x = torch.randn(2, 24, 16, generator=gen, dtype=torch.float64)
    pos = c * torch.arange(24, dtype=torch.float64)
    q_rot, k_rot = rope.rotate(q, k, pos, pos)
    torch.testing.assert_close(ctx.logits(q, k, x, 0, 0), q_rot @ k_rot.transpose(-2, -1), rtol=1e-10, atol=1e-10)
    with torch.no_grad():
        ctx.omega_proj.weight.normal_(std=1.0)
    assert not torch.allclose(ctx.logits(q, k, x, 0, 0), q_rot @ k_rot.transpose(-2, -1), atol=1e-3)


def test_grape_m_ctx_logit_depends_on_the_phase_difference():
    """App. B's relative law with phases: logit(i, j) = q_i^T R((Phi_j - Phi_i) theta) k_j with
    the rotation written out; the phase is exclusive (token t's content moves only later
    tokens' phases), and it grows by less than 1 a token."""
    enc = lively("grape-m-ctx", dims(head_dim=4, n_heads=1), seed=5)
    T = 9
    gen = torch.Generator().manual_seed(6)
    q, k = (torch.randn(1, 1, T, 4, generator=gen, dtype=torch.float64) for _ in range(2))
    x = torch.randn(1, T, 4, generator=gen, dtype=torch.float64)
    got, phi = enc.logits(q, k, x, 0, 0)[0, 0], enc.phase(x)[0, 0]
    theta = enc.log_freq.exp()
    for i in range(T):
        for j in range(T):
            r = half_split_rotation([(phi[j] - phi[i]).item() * th for th in theta.tolist()])
            assert got[i, j].item() == pytest.approx((q[0, 0, i] @ r @ k[0, 0, j]).item(), rel=1e-9, abs=1e-9)
    steps = phi.diff()
    assert phi[0] == 0 and bool(((steps > 0) & (steps < 1)).all())
    later = x.clone()
    later[:, 4] += 1.0
    moved = enc.phase(later)[0, 0]
    torch.testing.assert_close(moved[:5], phi[:5], rtol=0, atol=1e-14)  # cumsum - omega: token 4's rounds
    assert bool((moved[5:] != phi[5:]).all())


def test_bad_params_are_refused():
    with pytest.raises(ValueError, match="p_head_dim"):
        GrapeAP.Params(p_head_dim=3)
    with pytest.raises(ValueError, match="init_std_factor"):
        GrapeAP.Params(init_std_factor=0)
    with pytest.raises(ValueError, match="omega_scale"):
        GrapeMContextual.Params(omega_scale=0)
    with pytest.raises(ValueError, match="init_omega"):
        GrapeMContextual.Params(init_omega=0)
