"""Additive-bias encodings (ALiBi, T5, KERPLE, FIRE, Sandwich) against their papers
(golden values from scripts/golden/bias.py) and their properties."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.encodings.fire import fire_normalized_distance, fire_psi
from suite.encodings.kerple import kerple_log_bias, kerple_power_bias
from suite.encodings.simple import alibi_slopes, sandwich_kernel
from suite.encodings.t5 import t5_causal_bucket

from .helpers import dims, encoding, golden

TRANSLATION_INVARIANT = ["alibi", "t5", "kerple-log", "kerple-power", "sandwich"]


@pytest.mark.parametrize("name", TRANSLATION_INVARIANT)
@settings(max_examples=15, deadline=None)
@given(shift=st.integers(1, 10_000))
def test_bias_is_translation_invariant(name, shift):
    enc = encoding(name, dims(head_dim=8, n_heads=4))
    q_pos = torch.arange(40)
    k_pos = torch.arange(40)
    torch.testing.assert_close(enc.bias(q_pos + shift, k_pos + shift), enc.bias(q_pos, k_pos), rtol=1e-5, atol=1e-5)


def test_fire_is_not_translation_invariant_but_normalizes_by_the_query_position():
    """Below the threshold the bias depends on i - j only; beyond it the first key is always
    at normalized distance 1, whatever the query position."""
    enc = encoding("fire", dims(head_dim=8, n_heads=4, train_len=64))  # threshold L = 16
    pos = torch.arange(200)
    bias = enc.bias(pos, pos)  # [H, T, T]
    torch.testing.assert_close(bias[:, 10, 4], bias[:, 15, 9])  # i < L: relative
    assert not torch.allclose(bias[:, 50, 44], bias[:, 150, 144])  # i > L: not
    first_key = bias[:, 16:, 0]  # i >= L: psi(i) / psi(i) = 1
    torch.testing.assert_close(first_key, first_key[:, :1].expand_as(first_key), rtol=1e-4, atol=1e-5)
    u = fire_normalized_distance(pos, pos, enc.c, enc.threshold())
    assert u.tril().max() <= 1.0 and u.tril().min() >= 0.0


# -- ALiBi --------------------------------------------------------------------------------


@pytest.mark.parametrize("n_heads", ["8", "6", "12"])
def test_alibi_slopes_golden(n_heads):
    torch.testing.assert_close(alibi_slopes(int(n_heads)), torch.tensor(golden("alibi")[n_heads]), rtol=1e-6, atol=0)


def test_alibi_slopes_for_8_heads_are_one_over_powers_of_two():
    assert alibi_slopes(8).tolist() == [2.0 ** -i for i in range(1, 9)]


# -- T5 -----------------------------------------------------------------------------------


def test_t5_buckets_golden():
    g = golden("t5")
    distance = -torch.tensor(g["relative_positions"])  # n = i - j = -(j - i)
    for case in g["cases"]:
        buckets = t5_causal_bucket(distance, case["num_buckets"], case["max_distance"])
        assert buckets.tolist() == case["buckets"]


def test_t5_future_keys_share_bucket_0_and_long_distances_the_last():
    buckets = t5_causal_bucket(torch.tensor([-5, -1, 0, 127, 128, 10_000]), 32, 128)
    assert buckets.tolist()[:3] == [0, 0, 0] and buckets.tolist()[-2:] == [31, 31]


def test_t5_bias_looks_up_one_value_per_head_and_bucket():
    enc = encoding("t5", dims(head_dim=8, n_heads=4))
    with torch.no_grad():
        enc.values.copy_(torch.randn_like(enc.values))
    pos = torch.arange(300)
    bias = enc.bias(pos, pos)
    buckets = t5_causal_bucket(pos[:, None] - pos[None, :], 32, 128)
    for h in range(4):
        assert torch.equal(bias[h], enc.values[buckets, h])


# -- KERPLE -------------------------------------------------------------------------------


def test_kerple_golden():
    g = golden("kerple")
    d = torch.tensor(g["distances"], dtype=torch.float64)
    for variant, fn, r2 in (("log", kerple_log_bias, g["r2_log"]), ("power", kerple_power_bias, g["r2_power"])):
        out = fn(d, torch.tensor(g["r1"], dtype=torch.float64)[:, None], torch.tensor(r2, dtype=torch.float64)[:, None])
        torch.testing.assert_close(out, torch.tensor(g[variant], dtype=torch.float64), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["kerple-log", "kerple-power"])
def test_kerple_module_uses_the_kernel_with_its_parameters(name):
    g = golden("kerple")
    enc = encoding(name, dims(head_dim=8, n_heads=2))
    variant = name.split("-")[1]
    with torch.no_grad():
        enc.r1.copy_(torch.tensor(g["r1"]))
        enc.r2.copy_(torch.tensor(g["r2_" + variant]))
    pos = torch.tensor(g["distances"])
    bias = enc.bias(pos, torch.zeros(1, dtype=torch.long))[:, :, 0]  # query at d, key at 0
    torch.testing.assert_close(bias, torch.tensor(g[variant], dtype=torch.float32), rtol=1e-5, atol=1e-5)


def test_kerple_keeps_its_constraints_and_still_learns_when_clamped():
    enc = encoding("kerple-power", dims(head_dim=8, n_heads=2))
    with torch.no_grad():
        enc.r1.copy_(torch.tensor([-1.0, 0.5]))  # r1 must stay >= eps
        enc.r2.copy_(torch.tensor([1.0, 3.0]))  # r2 must stay <= 2
    pos = torch.arange(6)
    bias = enc.bias(pos, pos)
    d = torch.tensor(5.0)
    torch.testing.assert_close(bias[0, 5, 0], -0.01 * d ** 1.0)
    torch.testing.assert_close(bias[1, 5, 0], -0.5 * d ** 2.0)
    bias.sum().backward()
    assert enc.r1.grad[0] != 0 and enc.r2.grad[1] != 0


# -- FIRE ---------------------------------------------------------------------------------


def test_fire_golden():
    g = golden("fire")
    c, threshold = torch.tensor(g["c"], dtype=torch.float64), torch.tensor(g["threshold"], dtype=torch.float64)
    pos = torch.tensor(g["positions"])
    torch.testing.assert_close(fire_psi(pos.double(), c), torch.tensor(g["psi"], dtype=torch.float64), rtol=1e-12, atol=0)
    u = fire_normalized_distance(pos, pos, c, threshold)
    for i, row in enumerate(g["normalized"]):
        expected = torch.tensor(row[: i + 1], dtype=torch.float64)
        torch.testing.assert_close(u[i, : i + 1], expected, rtol=1e-12, atol=1e-15)


def test_fire_module_applies_its_mlp_to_the_golden_distances():
    g = golden("fire")
    enc = encoding("fire", dims(head_dim=8, n_heads=4), init_c=g["c"], init_threshold=g["threshold"])
    pos = torch.tensor(g["positions"])
    u = torch.tensor([[x if x is not None else 0.0 for x in row] for row in g["normalized"]])
    expected = enc.mlp(u[..., None]).permute(2, 0, 1)
    torch.testing.assert_close(enc.bias(pos, pos).tril(), expected.tril(), rtol=1e-5, atol=1e-6)


# -- Sandwich -----------------------------------------------------------------------------


def test_sandwich_golden():
    g = golden("sandwich")
    enc = encoding("sandwich", dims(head_dim=8, n_heads=g["n_heads"]), dim=g["dim"], base=g["base"])
    d = torch.tensor(g["distances"])
    bias = enc.bias(d, torch.zeros(1, dtype=torch.long))[:, :, 0]
    torch.testing.assert_close(bias, torch.tensor(g["bias"], dtype=torch.float32), rtol=1e-5, atol=1e-5)
    kernel = sandwich_kernel(d, g["dim"], g["base"])
    assert kernel[0] == 0 and torch.all(kernel[1:] < 0)
