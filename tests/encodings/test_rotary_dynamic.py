"""Dynamic scalings (dynamic NTK, dynamic YaRN) evaluated as a left-to-right reader sees
them: against the references' per-length frequencies (golden values from
scripts/golden/rotary.py) and against token-by-token decoding of a tiny model."""

from __future__ import annotations

import math

import pytest
import torch

from suite.modeling.model import AttentionPath, ModelConfig, Transformer

from tests.encodings.helpers import build_model, dims, encoding, golden

DYNAMIC = {"rope-dynamic-ntk": "rope-ntk", "yarn-dynamic": "yarn"}  # and the static spec each follows per query
L, T = 8, 32
CFG = ModelConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, train_len=L)  # head dim 8, as the golden files


def peaked(model: Transformer) -> Transformer:
    """Larger q/k/v weights: at the initial std 0.02 attention is nearly uniform and a tiny
    model's logits move by ~1e-6 whatever the rotation, below the tolerance of the tests."""
    with torch.no_grad():
        for block in model.blocks:
            block.attn.qkv.weight.mul_(20)
    return model.eval()


def explicit_logits(enc, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """q.k [Tq, Tk] as the model's explicit path computes them: rotate, q k^T / sqrt(Dh) with
    the causal mask, then the score hook; times sqrt(Dh) to compare with the references."""
    pos = torch.arange(q.shape[0])
    q_rot, k_rot = enc.rotate(q[None, None], k[None, None], pos, pos)
    mask = torch.full((len(pos), len(pos)), float("-inf")).triu(1)
    scores = q_rot @ k_rot.transpose(-2, -1) / math.sqrt(q.shape[-1]) + mask
    return (enc.score(q_rot, k_rot, scores, pos, pos) * math.sqrt(q.shape[-1]))[0, 0]


@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_golden(name):
    """Row t: the reference's frequencies for a sequence of length t + 1, applied to q_t and every key j <= t."""
    g = golden(name)
    enc = encoding(name, dims(head_dim=g["head_dim"], train_len=g["train_len"]), base=g["base"])
    enc.set_scale(g["length"] / g["train_len"])
    inv_freq, attention = enc.query_frequencies(g["length"])
    torch.testing.assert_close(inv_freq, torch.tensor(g["inv_freq_by_seq_len"], dtype=torch.float64), rtol=1e-10, atol=0)
    torch.testing.assert_close(attention, torch.tensor(g["attention_factor_by_seq_len"], dtype=torch.float64), rtol=1e-7, atol=0)
    logits = explicit_logits(enc, torch.tensor(g["q"], dtype=torch.float32), torch.tensor(g["k"], dtype=torch.float32))
    for t, expected in enumerate(g["logits"]):
        torch.testing.assert_close(logits[t, : t + 1].double(), torch.tensor(expected, dtype=torch.float64), rtol=1e-5, atol=1e-5)


# -- the model, against token-by-token decoding ---------------------------------------------


def rotate_reference(x: torch.Tensor, positions: torch.Tensor, inv_freq: torch.Tensor, attention: float) -> torch.Tensor:
    """x [B, H, n, Dh] rotated as transformers applies it: x cos + rotate_half(x) sin, cos/sin in float64."""
    freqs = positions.double()[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos() * attention, emb.sin() * attention
    half = x.shape[-1] // 2
    rotated_half = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return (x.double() * cos + rotated_half.double() * sin).float()


@torch.no_grad()
def decode_token_by_token(model: Transformer, idx: torch.Tensor, g: dict) -> torch.Tensor:
    """Logits [B, T, V] of a reader that reads one token at a time and caches every layer's
    keys and values before rotation; at step t each layer rotates its query and all cached
    keys with the reference frequencies of length t + 1 (golden ``inv_freq_by_seq_len``)."""
    B, n = idx.shape
    H = model.cfg.n_heads
    cache = [([], []) for _ in model.blocks]
    out = []
    for t in range(n):
        inv_freq = torch.tensor(g["inv_freq_by_seq_len"][t], dtype=torch.float64)
        attention = g["attention_factor_by_seq_len"][t]
        x = model.tok(idx[:, t : t + 1])  # [B, 1, D]
        for block, (keys, values) in zip(model.blocks, cache):
            q, k, v = block.attn.qkv(block.ln1(x)).split(model.cfg.d_model, dim=-1)
            q, k, v = (z.view(B, 1, H, -1).transpose(1, 2) for z in (q, k, v))  # [B, H, 1, Dh]
            keys.append(k)
            values.append(v)
            K, V = torch.cat(keys, dim=2), torch.cat(values, dim=2)  # [B, H, t + 1, Dh]
            positions = torch.arange(t + 1)
            q = rotate_reference(q, positions[-1:], inv_freq, attention)
            K = rotate_reference(K, positions, inv_freq, attention)
            weights = (q @ K.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(dim=-1)  # [B, H, 1, t + 1]
            x = x + block.attn.out((weights @ V).transpose(1, 2).reshape(B, 1, -1))
            x = x + block.mlp(block.ln2(x))
        out.append(model.head(model.ln_f(x)))
    return torch.cat(out, dim=1)


@pytest.mark.parametrize("name", DYNAMIC)
def test_one_forward_equals_token_by_token_decoding(name):
    """A 2-layer model evaluated in one window of s x L tokens gives, at every position,
    the logits of the left-to-right reader with a cache of un-rotated keys."""
    model = peaked(build_model(name, cfg=CFG))
    idx = torch.randint(0, 256, (2, T), generator=torch.Generator().manual_seed(0))
    model.set_scale(T / L)
    with torch.no_grad():
        logits = model(idx)
    torch.testing.assert_close(logits, decode_token_by_token(model, idx, golden(name)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", DYNAMIC)
def test_one_layer_equals_rereading_each_prefix_with_the_static_scaling(name):
    """With one layer, the reader above is also the one that re-reads the prefix [0..t]
    in a plain forward with the static scaling at factor (t + 1) / L and keeps the last
    position's logits. (With more layers re-reading also recomputes the lower layers'
    states at j < t with the later factor, which the cached reader does not.)"""
    cfg = ModelConfig(d_model=32, n_layers=1, n_heads=4, d_ff=64, train_len=L)
    model, static = peaked(build_model(name, cfg=cfg)), build_model(DYNAMIC[name], cfg=cfg).eval()
    static.load_state_dict(model.state_dict(), strict=True)  # trains_as: both evaluate the RoPE checkpoint
    idx = torch.randint(0, 256, (2, T), generator=torch.Generator().manual_seed(1))
    model.set_scale(T / L)
    with torch.no_grad():
        logits = model(idx)
        for t in range(T):
            static.set_scale(max(1.0, (t + 1) / L))
            torch.testing.assert_close(logits[:, t], static(idx[:, : t + 1])[:, -1], rtol=1e-5, atol=1e-5)


@torch.no_grad()
def test_dynamic_ntk_is_rope_within_the_training_length_and_differs_from_static_ntk_beyond():
    models = {name: build_model(name, cfg=CFG).eval() for name in ("rope-dynamic-ntk", "rope-ntk", "rope")}
    peaked(models["rope"])
    for model in models.values():
        model.load_state_dict(models["rope"].state_dict(), strict=True)
    idx = torch.randint(0, 256, (2, 4 * L), generator=torch.Generator().manual_seed(2))
    rope = models["rope"](idx[:, :L])
    for s in (2, 4):
        for model in models.values():
            model.set_scale(s)
        dynamic, static = models["rope-dynamic-ntk"](idx[:, : s * L]), models["rope-ntk"](idx[:, : s * L])
        torch.testing.assert_close(dynamic[:, :L], rope, rtol=1e-5, atol=1e-5)
        # the last query's own factor is s, as static NTK's; every earlier query beyond L differs
        assert (dynamic[:, L:-1] - static[:, L:-1]).abs().amax(dim=-1).min() > 1e-3, f"scale {s}: a position agrees"


def test_dynamic_takes_the_explicit_path_only_beyond_scale_1():
    model = build_model("rope-dynamic-ntk", cfg=CFG)
    assert model.path is AttentionPath.FUSED
    model.set_scale(4)
    assert model.path is AttentionPath.EXPLICIT
    model.set_scale(1)
    assert model.path is AttentionPath.FUSED
    with pytest.raises(ValueError, match="set_scale"):
        model(torch.randint(0, 256, (1, 2 * L)))


def test_dynamic_scalings_need_their_own_class():
    with pytest.raises(ValueError, match="DynamicRotary"):
        encoding("rope", scaling="dynamic_ntk")
    with pytest.raises(ValueError, match="impl: rotary"):
        encoding("rope-dynamic-ntk", scaling="ntk")
