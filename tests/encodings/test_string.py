"""STRING against the authors' code (golden values from scripts/golden/string_rope.py,
which runs HKUNLP/STRING's rotation and two-call attention merge), and its properties."""

from __future__ import annotations

import pytest
import torch

from suite.encodings import ENCODINGS
from suite.modeling.model import AttentionPath, ModelConfig, attend

from tests.encodings.helpers import build_model, golden

StringRope = ENCODINGS.get("string")


def f64(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


@pytest.mark.parametrize("case", range(3))
def test_attention_is_the_authors(case):
    """Our explicit attention with STRING's score hook gives the output of the authors'
    string_flash_forward (sliding-window and shifted calls merged by their log-sum-exps),
    including the key at distance S that both calls hold, and a sequence shorter than S."""
    c = golden("string")["cases"][case]
    q, k, v = (f64(c[n])[None] for n in ("q", "k", "v"))  # [1, H, T, D]
    dims = ModelConfig(d_model=q.shape[1] * q.shape[-1], n_heads=q.shape[1], train_len=c["T"]).dims
    enc = StringRope(StringRope.Params(base=c["base"], local_value=c["W"], shifted_offset=c["S"]), dims).double()
    pos = torch.arange(c["T"])
    q_rot, k_rot = enc.rotate(q, k, pos, pos)
    out = attend(q_rot, k_rot, v, enc, AttentionPath.EXPLICIT, pos, pos)
    torch.testing.assert_close(out[0], f64(c["out"]), rtol=1e-5, atol=1e-6)  # our rotation tables are float32


def test_the_attention_factor_is_the_authors():
    """The default is the value HKUNLP/STRING's replace_with_string assigns (the golden script
    evaluates that expression from the file)."""
    assert StringRope.Params().attention_factor == pytest.approx(golden("string")["attention_factor"], rel=1e-12)


def test_shifted_offset_follows_the_evaluation_length():
    enc = StringRope(StringRope.Params(), ModelConfig(d_model=32, n_heads=4, train_len=64).dims)
    assert enc.shifted_offset() == int(0.33 * 64)
    enc.set_scale(16)
    assert enc.shifted_offset() == int(0.33 * 1024)


def test_string_is_rope_where_every_distance_is_below_s():
    """Queries that see no key farther than S read plain RoPE's logits, times the attention
    factor squared (with factor 1, RoPE's own); beyond S they differ."""
    string, rope = build_model("string", seed=1).eval(), build_model("rope", seed=1).eval()
    rope.load_state_dict(string.state_dict())
    idx = torch.randint(0, 256, (1, 16))  # S = int(0.33 * 16) = 5 at scale 1 (the helpers' L = 16)
    out_s, out_r = string(idx), rope(idx)
    assert not torch.allclose(out_s[:, 1:5], out_r[:, 1:5], rtol=1e-5, atol=1e-5)  # the factor sharpens every logit
    dims = ModelConfig(d_model=16, n_heads=2, train_len=16).dims
    plain = StringRope(StringRope.Params(attention_factor=1.0), dims).double()
    scaled = StringRope(StringRope.Params(), dims).double()
    pos = torch.arange(16)
    q, k = (torch.randn(1, 2, 16, 8, dtype=torch.float64) for _ in range(2))
    rope_q, rope_k = plain.rope.rotate(q, k, pos, pos)
    rope_logits = rope_q @ rope_k.transpose(-2, -1) / 8 ** 0.5
    for enc, factor in ((plain, 1.0), (scaled, StringRope.Params().attention_factor)):
        q_rot, k_rot = enc.rotate(q, k, pos, pos)
        logits = enc.score(q_rot, k_rot, q_rot @ k_rot.transpose(-2, -1) / 8 ** 0.5, pos, pos)
        near = (pos[:, None] - pos[None, :]) < enc.shifted_offset()
        torch.testing.assert_close(logits[..., near], factor ** 2 * rope_logits[..., near])
        assert not torch.allclose(logits[..., ~near], factor ** 2 * rope_logits[..., ~near])
