"""MLA's decoupled RoPE against transformers' DeepSeek-V3 attention (golden values from
scripts/golden/mla.py, which runs DeepseekV3Attention), and what DeepSeek-V2's Eqs. 14-18 say:
one rotary key shared by the heads, a rotary part that depends on the distance alone, and
interleaved pairs that differ from half-split ones only by a permutation of the rotary rows."""

from __future__ import annotations

import pytest
import torch

from suite.encodings import ModelDims
from suite.encodings.mla import MLA
from suite.modeling.build import build_model, model_config
from suite.modeling.model import AttentionPath, attend, path_of, recorded_attention
from suite.specs import load_size

from tests.encodings.helpers import REPO, golden, spec


def f64(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def reference_layer(case: dict, g: dict) -> tuple[MLA, torch.Tensor]:
    """The encoding with the reference's rotary projections, and the model's query projection
    [H * nope, D]: the nope rows of the reference's q_proj."""
    H, nope, rope = g["heads"], g["qk_nope_head_dim"], g["qk_rope_head_dim"]
    D = H * nope
    enc = MLA(MLA.Params(base=g["rope_theta"], rope_ratio=rope / nope, interleave=case["interleave"]),
              ModelDims(D, H, nope, 1, g["length"], layer=0)).double()
    q_proj = f64(case["q_proj"]).view(H, nope + rope, D)  # per head: its nope rows, then its rope rows
    with torch.no_grad():
        enc.q_rope.weight.copy_(q_proj[:, nope:].reshape(H * rope, D))
        enc.k_rope.weight.copy_(f64(case["k_rope_proj"]))
    return enc, q_proj[:, :nope].reshape(D, D)


@pytest.mark.parametrize("index", [0, 1], ids=["interleaved", "half-split"])
def test_matches_transformers_deepseek_v3_attention(index):
    """The reference's nope keys and values (its latent's) and our queries, rotary parts and
    attention give its attention weights and output: Eqs. 14-19 and the scale 1/sqrt(nope + rope)."""
    g = golden("mla")
    case = g["cases"][index]
    enc, w_q = reference_layer(case, g)
    x = f64(case["x"])
    B, T, D = x.shape
    q = (x @ w_q.T).view(B, T, g["heads"], -1).transpose(1, 2)  # [B, H, T, nope]
    pos = torch.arange(T)
    assert path_of(enc) is AttentionPath.EXPLICIT
    with torch.no_grad(), recorded_attention() as weights:
        y = attend(q, f64(case["k_nope"]), f64(case["v"]), enc, path_of(enc), pos, pos, x=x)
    out = y.transpose(1, 2).reshape(B, T, -1) @ f64(case["o_proj"]).T
    torch.testing.assert_close(weights[0], f64(case["weights"]), rtol=0, atol=1e-6)
    torch.testing.assert_close(out, f64(case["out"]), rtol=0, atol=1e-6)


def random_mla(interleave: bool = True, heads: int = 2, head_dim: int = 8, seed: int = 0) -> MLA:
    torch.manual_seed(seed)
    enc = MLA(MLA.Params(interleave=interleave), ModelDims(heads * head_dim, heads, head_dim, 1, 16, layer=0)).double()
    with torch.no_grad():
        for p in enc.parameters():
            p.normal_(0.0, 0.5)
    return enc


def test_the_rotary_part_depends_on_the_distance_alone():
    """The same tokens read s places later give the same logits (RoPE is relative); keys
    taken from other places give others."""
    enc = random_mla()
    T, s = 10, 37
    x = torch.randn(1, T, 16, dtype=torch.float64)
    q, k = torch.randn(2, 1, 2, T, 8, dtype=torch.float64)
    later = torch.cat((torch.randn(1, s, 16, dtype=torch.float64), x), dim=1)
    here = enc.logits(q, k, x, 0, 0)
    torch.testing.assert_close(enc.logits(q, k, later, s, s), here, rtol=0, atol=1e-10)
    elsewhere = torch.cat((x, x), dim=1)  # the same key tokens, T places before their queries
    assert not torch.allclose(enc.logits(q, k, elsewhere, T, 0), here)


def test_one_rotary_key_for_every_head():
    """Heads with the same queries see the same logits: the rotary key is one projection W^KR
    of the token (Eq. 15), not one per head."""
    enc = random_mla(heads=3)
    with torch.no_grad():
        enc.q_rope.weight.copy_(enc.q_rope.weight[: enc.rope_dim].repeat(3, 1))
    assert tuple(enc.k_rope.weight.shape) == (enc.rope_dim, 24)
    x = torch.randn(2, 9, 24, dtype=torch.float64)
    q, k = torch.randn(2, 2, 1, 9, 8, dtype=torch.float64).expand(-1, -1, 3, -1, -1)
    logits = enc.logits(q, k, x, 0, 0)  # [2, 3, 9, 9]
    torch.testing.assert_close(logits[:, 1:], logits[:, :1].expand(-1, 2, -1, -1), rtol=0, atol=1e-12)


def test_interleaved_pairs_are_half_split_pairs_with_the_rotary_rows_permuted():
    """DeepSeek-V3 turns pairs (2i, 2i + 1); half-split turns (i, i + r/2). Moving each
    head's rotary rows of W^QR and W^KR accordingly gives the same logits."""
    inter, half = random_mla(interleave=True), random_mla(interleave=False, seed=1)
    r = inter.rope_dim
    order = torch.cat((torch.arange(0, r, 2), torch.arange(1, r, 2)))  # half-split dim j <- interleaved dim order[j]
    with torch.no_grad():
        half.q_rope.weight.copy_(inter.q_rope.weight.view(2, r, -1)[:, order].reshape(2 * r, -1))
        half.k_rope.weight.copy_(inter.k_rope.weight[order])
    x = torch.randn(2, 11, 16, dtype=torch.float64)
    q, k = torch.randn(2, 2, 2, 11, 8, dtype=torch.float64)
    torch.testing.assert_close(half.logits(q, k, x, 0, 0), inter.logits(q, k, x, 0, 0), rtol=0, atol=1e-12)


@pytest.mark.parametrize("ratio, head_dim", [(0.3, 16), (0.25, 12), (0.125, 8)])
def test_a_rotary_part_that_is_not_whole_even_dims_is_refused(ratio, head_dim):
    with pytest.raises(ValueError, match="rope_ratio"):
        MLA(MLA.Params(rope_ratio=ratio), ModelDims(head_dim * 2, 2, head_dim, 1, 16, layer=0))


def test_the_spec_adds_the_rotary_projections_to_ropes_model():
    """At tiny (head dim 16): 8 rotary dims per head (24 per query and key, a third rotary, as
    DeepSeek-V3's 64 of 192), W^QR [H * 8, D] and W^KR [8, D] per layer beside RoPE's weights."""
    size = load_size(REPO / "sizes" / "tiny.yaml")
    cfg = model_config(size, 64)
    mla, rope = build_model(spec("mla"), cfg), build_model(spec("rope"), cfg)
    assert mla.encodings[0].rope_dim == 8 and len(mla.encodings) == cfg.n_layers
    extra = cfg.n_layers * (cfg.n_heads + 1) * 8 * cfg.d_model
    assert mla.num_params() == rope.num_params() + extra
