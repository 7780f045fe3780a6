"""The rotary family: RoPE, partial RoPE and the scaling variants, against their
papers (golden values from scripts/golden/rotary.py) and their properties."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.encodings.rotary import RotaryParams, Rotary, default_inv_freq, llama3_inv_freq

from .helpers import dims, encoding, golden, logits_matrix

ROTARY_SPECS = ["rope", "rope-partial", "rope-pi", "rope-ntk", "rope-dynamic-ntk", "yarn", "rope-llama3"]
ADJUSTING = ["rope-pi", "rope-ntk", "rope-dynamic-ntk", "yarn", "rope-llama3"]
F64 = dict(rtol=1e-12, atol=0)  # frequencies: float64 on both sides
F32 = dict(rtol=1e-5, atol=1e-6)  # rotated vectors: float32 tables


def rotary(d, train_len=64, **params) -> Rotary:
    return Rotary(RotaryParams(**params), dims(head_dim=d, train_len=train_len))


def rotate_one(enc, x: list[float], position: int) -> torch.Tensor:
    q = torch.tensor(x, dtype=torch.float32)[None, None, None, :]  # [1, 1, 1, Dh]
    pos = torch.tensor([position])
    return enc.rotate(q, q.clone(), pos, pos)[0][0, 0, 0]


# -- properties ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, scale", [(n, 1) for n in ROTARY_SPECS] + [(n, 4) for n in ADJUSTING])
def test_logits_depend_only_on_the_distance(name, scale):
    """With the same q and k at every position, q_i . k_j is a function of i - j (a Toeplitz matrix)."""
    enc = encoding(name, dims(head_dim=16, train_len=32))
    enc.set_scale(scale)
    torch.manual_seed(0)
    T = 32 * scale
    logits = logits_matrix(enc, torch.randn(16), torch.randn(16), torch.arange(T)).double()
    for offset in range(-T + 1, T):
        diagonal = logits.diagonal(offset)
        torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ROTARY_SPECS)
@settings(max_examples=20, deadline=None)
@given(position=st.integers(0, 5000), scale=st.sampled_from([1, 2, 8]))
def test_rotations_preserve_norms(name, position, scale):
    enc = encoding(name, dims(head_dim=16, train_len=64))
    enc.set_scale(scale)
    x = torch.randn(16, generator=torch.Generator().manual_seed(position))
    _, mscale = enc.frequencies(position + 1)
    torch.testing.assert_close(rotate_one(enc, x.tolist(), position).norm(), x.norm() * mscale, rtol=1e-5, atol=1e-5)


def test_partial_rotation_leaves_the_other_dimensions_alone():
    enc = encoding("rope-partial", dims(head_dim=16))
    x = torch.randn(16)
    out = rotate_one(enc, x.tolist(), 9)
    assert enc.rotary_dim == 4
    assert torch.equal(out[4:], x[4:]) and not torch.allclose(out[:4], x[:4])


@settings(max_examples=20, deadline=None)
@given(p=st.integers(0, 300), s=st.sampled_from([2, 4, 16]))
def test_interpolation_maps_position_s_p_to_the_angles_of_p(p, s):
    pi, rope = rotary(16, scaling="pi"), rotary(16)
    pi.set_scale(s)
    cos_pi, sin_pi = pi.cos_sin(s * p + 1, "cpu")
    cos, sin = rope.cos_sin(p + 1, "cpu")
    torch.testing.assert_close(cos_pi[s * p], cos[p], **F32)
    torch.testing.assert_close(sin_pi[s * p], sin[p], **F32)


def test_ntk_changes_the_base_by_s_to_the_d_over_d_minus_2():
    enc = rotary(16, scaling="ntk")
    enc.set_scale(4)
    inv_freq, _ = enc.frequencies(256)
    torch.testing.assert_close(inv_freq, default_inv_freq(16, 10000 * 4 ** (16 / 14)), **F64)
    assert inv_freq[0] == 1.0  # the highest frequency is kept
    torch.testing.assert_close(inv_freq[-1], default_inv_freq(16, 10000)[-1] / 4, **F64)  # the lowest interpolated by s


def test_dynamic_ntk_is_rope_within_the_training_length_and_differs_beyond():
    dynamic, rope = rotary(16, train_len=32, scaling="dynamic_ntk"), rotary(16, train_len=32)
    torch.manual_seed(0)
    q, k = torch.randn(1, 1, 64, 16), torch.randn(1, 1, 64, 16)
    for T in (8, 32):
        pos = torch.arange(T)
        for a, b in zip(dynamic.rotate(q[:, :, :T], k[:, :, :T], pos, pos), rope.rotate(q[:, :, :T], k[:, :, :T], pos, pos)):
            assert torch.equal(a, b)
    pos = torch.arange(64)
    assert not torch.allclose(dynamic.rotate(q, k, pos, pos)[0], rope.rotate(q, k, pos, pos)[0])
    assert dynamic.frequencies(64)[0][-1] < rope.frequencies(64)[0][-1]


def test_yarn_keeps_the_highest_frequency_and_divides_the_lowest_by_s():
    enc = rotary(64, train_len=2048, scaling="yarn")
    base = default_inv_freq(64, 10000)
    for s in (2, 8, 16):
        enc.set_scale(s)
        inv_freq, mscale = enc.frequencies(2048 * s)
        assert inv_freq[0] == base[0]
        torch.testing.assert_close(inv_freq[-1], base[-1] / s, **F64)
        assert mscale == pytest.approx(0.1 * math.log(s) + 1)
        assert torch.all(inv_freq <= base) and torch.all(inv_freq >= base / s)


def test_yarn_temperature_scales_the_logits_by_one_over_t():
    """(0.1 ln s + 1)^2 = 1/t multiplies q.k: both q and k carry sqrt(1/t)."""
    enc = rotary(16, train_len=64, scaling="yarn")
    torch.manual_seed(0)
    q, k = torch.randn(1, 1, 1, 16), torch.randn(1, 1, 1, 16)
    pos = torch.tensor([0])  # position 0: no rotation, only the temperature
    enc.set_scale(8)
    q8, k8 = enc.rotate(q, k, pos, pos)
    torch.testing.assert_close((q8 * k8).sum(), (q * k).sum() * (0.1 * math.log(8) + 1) ** 2, **F32)


def test_llama3_boundaries():
    """Wavelengths below L/high_freq_factor are kept, above L/low_freq_factor divided by s,
    and the smooth part meets both ends continuously."""
    L, s, low, high = 64, 4.0, 1.0, 4.0
    wavelengths = torch.tensor([2.0, L / high - 1e-9, L / high, 20.0, 40.0, L / low, L / low + 1e-9, 500.0], dtype=torch.float64)
    inv_freq = 2 * math.pi / wavelengths
    out = llama3_inv_freq(inv_freq, s, L, low, high)
    torch.testing.assert_close(out[:3], inv_freq[:3], **F64)  # kept, including the boundary
    torch.testing.assert_close(out[5:], inv_freq[5:] / s, **F64)  # divided, including the boundary
    assert torch.all(out[3:5] < inv_freq[3:5]) and torch.all(out[3:5] > inv_freq[3:5] / s)


def test_every_scaling_is_plain_rope_at_scale_1():
    rope = default_inv_freq(16, 10000)
    for scaling in ("pi", "ntk", "dynamic_ntk", "yarn", "llama3"):
        inv_freq, mscale = rotary(16, scaling=scaling).frequencies(64)
        torch.testing.assert_close(inv_freq, rope, **F64)
        assert mscale == 1.0


# -- golden values ------------------------------------------------------------------------


def test_rope_golden():
    g = golden("rope")
    enc = rotary(g["head_dim"], base=g["base"])
    torch.testing.assert_close(enc.frequencies(1)[0], torch.tensor(g["inv_freq"], dtype=torch.float64), **F64)
    for p, angles, rotated in zip(g["positions"], g["angles"], g["rotated"]):
        cos, _ = enc.cos_sin(p + 1, "cpu")
        torch.testing.assert_close(cos[p], torch.tensor(angles, dtype=torch.float64).cos().float(), **F32)
        torch.testing.assert_close(rotate_one(enc, g["x"], p), torch.tensor(rotated, dtype=torch.float32), **F32)


def test_rope_partial_golden():
    g = golden("rope-partial")
    for exponent in ("rotary_dim", "head_dim"):
        enc = rotary(g["head_dim"], base=g["base"], fraction=g["fraction"], partial_exponent=exponent)
        assert enc.rotary_dim == g["rotary_dim"]
        expected = g["exponents"][exponent]
        torch.testing.assert_close(enc.frequencies(1)[0], torch.tensor(expected["inv_freq"], dtype=torch.float64), **F64)
        torch.testing.assert_close(rotate_one(enc, g["x"], g["position"]), torch.tensor(expected["rotated"], dtype=torch.float32), **F32)


def test_rope_pi_golden():
    g = golden("rope-pi")
    enc = rotary(g["head_dim"], base=g["base"], scaling="pi")
    enc.set_scale(g["factor"])
    torch.testing.assert_close(enc.frequencies(1)[0], torch.tensor(g["inv_freq"], dtype=torch.float64), **F64)
    torch.testing.assert_close(rotate_one(enc, g["x"], g["position"]), torch.tensor(g["rotated"], dtype=torch.float32), **F32)


def test_rope_ntk_golden():
    for case in golden("rope-ntk")["cases"]:
        enc = rotary(case["head_dim"], base=case["base"], scaling="ntk")
        enc.set_scale(case["factor"])
        torch.testing.assert_close(enc.frequencies(1)[0], torch.tensor(case["inv_freq"], dtype=torch.float64), rtol=1e-10, atol=0)


def test_rope_dynamic_ntk_golden():
    g = golden("rope-dynamic-ntk")
    enc = rotary(g["head_dim"], train_len=g["train_len"], base=g["base"], scaling="dynamic_ntk")
    for case in g["cases"]:
        torch.testing.assert_close(enc.frequencies(case["seq_len"])[0], torch.tensor(case["inv_freq"], dtype=torch.float64),
                                   rtol=1e-10, atol=0)


def test_yarn_golden():
    g = golden("yarn")
    for case in g["cases"]:
        enc = rotary(case["head_dim"], train_len=case["train_len"], base=case["base"], scaling="yarn",
                     beta_fast=case["beta_fast"], beta_slow=case["beta_slow"])
        enc.set_scale(case["factor"])
        inv_freq, mscale = enc.frequencies(case["train_len"] * int(case["factor"]))
        torch.testing.assert_close(inv_freq, torch.tensor(case["inv_freq"], dtype=torch.float64), rtol=1e-10, atol=0)
        assert mscale == pytest.approx(case["mscale"], rel=1e-12)


def test_rope_llama3_golden():
    for case in golden("rope-llama3")["cases"]:
        enc = rotary(case["head_dim"], train_len=case["train_len"], base=case["base"], scaling="llama3",
                     low_freq_factor=case["low_freq_factor"], high_freq_factor=case["high_freq_factor"])
        enc.set_scale(case["factor"])
        torch.testing.assert_close(enc.frequencies(1)[0], torch.tensor(case["inv_freq"], dtype=torch.float64), rtol=1e-10, atol=0)
