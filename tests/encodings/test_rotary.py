"""The rotary family: RoPE, partial RoPE and the static scaling variants, against their
references (golden values from scripts/golden/rotary.py: transformers==5.23.0 and
jquesnelle/yarn) and their properties. Dynamic scalings: test_rotary_dynamic.py."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.encodings.rotary import Rotary, RotaryParams, default_inv_freq, llama3_inv_freq

from tests.encodings.helpers import dims, encoding, golden, logits_matrix

STATIC = ["rope", "rope-partial", "rope-pi", "rope-ntk", "yarn", "yarn-paper-ramp", "rope-llama3"]
ROTARY_SPECS = STATIC + ["rope-dynamic-ntk", "yarn-dynamic"]
ADJUSTING = ["rope-pi", "rope-ntk", "yarn", "yarn-paper-ramp", "rope-llama3"]
F64 = dict(rtol=1e-12, atol=0)  # frequencies: float64 on both sides
F32 = dict(rtol=1e-5, atol=1e-6)  # rotated vectors: float32 tables
REFERENCE = dict(rtol=1e-10, atol=0)  # the references run in float64 (scripts/golden/rotary.py)
GOLDEN = dict(rtol=1e-5, atol=1e-5)  # what the encoding applies: rotated q, k and q.k


def rotary(d, train_len=64, **params) -> Rotary:
    return Rotary(RotaryParams(**params), dims(head_dim=d, train_len=train_len))


def rotate_one(enc, x: list[float], position: int) -> torch.Tensor:
    q = torch.tensor(x, dtype=torch.float32)[None, None, None, :]  # [1, 1, 1, Dh]
    pos = torch.tensor([position])
    return enc.rotate(q, q.clone(), pos, pos)[0][0, 0, 0]


# -- properties ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, scale", [(n, 1) for n in ROTARY_SPECS] + [(n, 4) for n in ADJUSTING])
def test_logits_depend_only_on_the_distance(name, scale):
    """With the same q and k at every position, q_i . k_j is a function of i - j (a Toeplitz
    matrix). Dynamic scalings only at scale 1: beyond it each query has its own factor."""
    enc = encoding(name, dims(head_dim=16, train_len=32))
    enc.set_scale(scale)
    torch.manual_seed(0)
    T = 32 * scale
    logits = logits_matrix(enc, torch.randn(16), torch.randn(16), torch.arange(T)).double()
    for offset in range(-T + 1, T):
        diagonal = logits.diagonal(offset)
        torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", STATIC)
@settings(max_examples=20, deadline=None)
@given(position=st.integers(0, 5000), scale=st.sampled_from([1, 2, 8]))
def test_rotations_preserve_norms(name, position, scale):
    """Up to the attention factor (dynamic scalings: the score hook, test_rotary_dynamic.py)."""
    enc = encoding(name, dims(head_dim=16, train_len=64))
    enc.set_scale(scale)
    x = torch.randn(16, generator=torch.Generator().manual_seed(position))
    _, mscale = enc.frequencies()
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
    inv_freq, _ = enc.frequencies()
    torch.testing.assert_close(inv_freq, default_inv_freq(16, 10000 * 4 ** (16 / 14)), **F64)
    assert inv_freq[0] == 1.0  # the highest frequency is kept
    torch.testing.assert_close(inv_freq[-1], default_inv_freq(16, 10000)[-1] / 4, **F64)  # the lowest interpolated by s


def test_yarn_keeps_the_highest_frequency_and_divides_the_lowest_by_s():
    enc = rotary(64, train_len=2048, scaling="yarn")
    base = default_inv_freq(64, 10000)
    for s in (2, 8, 16):
        enc.set_scale(s)
        inv_freq, mscale = enc.frequencies()
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
    for scaling in ("pi", "ntk", "yarn", "yarn_paper_ramp", "llama3"):
        inv_freq, mscale = rotary(16, scaling=scaling).frequencies()
        torch.testing.assert_close(inv_freq, rope, **F64)
        assert mscale == 1.0


def test_yarn_ramps_over_the_pair_index_not_over_rotations():
    """The issue's shape (head dim 16, L = 64, s = 16): the authors' code keeps the first
    pairs x [1, 0.6875, 0.375] and divides the rest by 16; the paper's r-ramp interpolates
    the second pair already by a third."""
    base = default_inv_freq(16, 10000)
    ratios = {}
    for scaling in ("yarn", "yarn_paper_ramp"):
        enc = rotary(16, train_len=64, scaling=scaling)
        enc.set_scale(16)
        ratios[scaling] = enc.frequencies()[0] / base
    torch.testing.assert_close(ratios["yarn"], torch.tensor([1, 0.6875, 0.375] + [1 / 16] * 5, dtype=torch.float64), **F64)
    assert ratios["yarn_paper_ramp"][1] < 0.35


# -- golden values: what the encoding applies, against the references ------------------------


def check_applied(enc: Rotary, case: dict) -> None:
    """Frequencies, attention factor, rotated q and k at the golden positions, and their q.k."""
    inv_freq, attention_factor = enc.frequencies()
    torch.testing.assert_close(inv_freq, torch.tensor(case["inv_freq"], dtype=torch.float64), **REFERENCE)
    assert attention_factor == pytest.approx(case["attention_factor"], rel=1e-12)
    pos = torch.tensor(case["positions"])
    q, k = (torch.tensor(case[n], dtype=torch.float32)[None, None] for n in ("q", "k"))  # [1, 1, P, Dh]
    q_rot, k_rot = enc.rotate(q, k, pos, pos)
    for got, n in ((q_rot, "q_rotated"), (k_rot, "k_rotated"), (q_rot @ k_rot.transpose(-2, -1), "logits")):
        torch.testing.assert_close(got[0, 0].double(), torch.tensor(case[n], dtype=torch.float64), **GOLDEN)


def case_encoding(name: str, case: dict, **params) -> Rotary:
    enc = encoding(name, dims(head_dim=case["head_dim"], train_len=case["train_len"]), base=case["base"], **params)
    enc.set_scale(case.get("factor", 1.0))
    return enc


@pytest.mark.parametrize("name", ["rope", "rope-pi", "rope-ntk", "rope-llama3"])
def test_golden(name):
    for case in golden(name)["cases"]:
        check_applied(case_encoding(name, case), case)


def test_rope_partial_golden():
    """transformers' partial_rotary_factor (GPT-NeoX rotary_pct): theta_i = base^(-2i/r)."""
    for case in golden("rope-partial")["cases"]:
        enc = case_encoding("rope-partial", case, fraction=case["fraction"])
        assert enc.rotary_dim == len(case["inv_freq"]) * 2
        check_applied(enc, case)


@pytest.mark.parametrize("name", ["yarn", "yarn-paper-ramp"])
def test_yarn_golden(name):
    for case in golden(name)["cases"]:
        check_applied(case_encoding(name, case, beta_fast=case["beta_fast"], beta_slow=case["beta_slow"]), case)


def test_partial_head_dim_exponent_gives_the_frequencies_of_full_rope():
    """partial_exponent: head_dim (no reference library has it): the first r/2 frequencies of full RoPE."""
    enc = rotary(16, fraction=0.25, partial_exponent="head_dim")
    torch.testing.assert_close(enc.frequencies()[0], default_inv_freq(16, 10000)[:2], **F64)


@pytest.mark.parametrize("scale", [1, 2, 16])
def test_an_always_on_factor_applies_the_references_factor_at_every_length(scale):
    """yarn-static4 (Qwen's static rope_scaling): transformers' YaRN at factor 4 (tests/golden/yarn.json's
    factor-4 case) whatever the evaluation length, 1x included, where yarn follows the length."""
    (case,) = [c for c in golden("yarn")["cases"] if c["factor"] == 4.0]
    enc = encoding("yarn-static4", dims(head_dim=case["head_dim"], train_len=case["train_len"]), base=case["base"],
                   beta_fast=case["beta_fast"], beta_slow=case["beta_slow"])
    enc.set_scale(scale)
    check_applied(enc, case)
    plain = encoding("yarn", dims(head_dim=case["head_dim"], train_len=case["train_len"]), base=case["base"])
    plain.set_scale(scale)
    assert (plain.frequencies()[1] == 1.0) == (scale == 1)  # at 1x yarn applies nothing; the always-on one does


def test_a_fixed_factor_is_refused_where_it_means_nothing():
    for scaling in ("none", "dynamic_yarn"):
        with pytest.raises(ValueError, match="factor fixes"):
            RotaryParams(scaling=scaling, factor=4.0)


@pytest.mark.parametrize("name", ["rope", "yarn", "rope-partial", "rope-llama3"])
def test_compiled_rope_has_no_graph_break_and_rotates_as_eager(name):
    """Compiled (torch.compile, fullgraph: a graph break is an error), the rotation computes its
    angles per id instead of reading a table whose length depends on the ids' values; the
    result is the eager table's, bit for bit, for self-attention and for a query block over
    earlier keys (the KV cache's shape), at an evaluation scale that changes the frequencies."""
    enc = encoding(name, dims(head_dim=16, n_heads=2))
    enc.set_scale(4)
    torch.manual_seed(0)
    q, k = torch.randn(2, 2, 24, 16), torch.randn(2, 2, 24, 16)
    pos, q_pos, k_pos = torch.arange(5, 29), torch.arange(20, 24), torch.arange(0, 24)
    torch._dynamo.reset()
    compiled = torch.compile(enc.rotate, backend="eager", fullgraph=True)
    for args in ((q, k, pos, pos), (q[..., :4, :], k, q_pos, k_pos)):
        for got, expected in zip(compiled(*args), enc.rotate(*args)):
            assert torch.equal(got, expected)
