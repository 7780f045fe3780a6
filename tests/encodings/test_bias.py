"""Additive-bias encodings (ALiBi, T5, KERPLE, FIRE, Sandwich) against their reference
code, comparing the bias [H, Tq, Tk] each encoding hands the model (golden values from
scripts/golden/bias.py, which runs the references), and their properties."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.encodings.fire import fire_normalized_distance
from suite.encodings.simple import alibi_slopes, sandwich_kernel
from suite.encodings.t5 import t5_causal_bucket

from tests.encodings.helpers import build_model, dims, encoding, golden

TOL = dict(rtol=1e-5, atol=1e-5)  # every reference here ran in float64
TRANSLATION_INVARIANT = ["alibi", "t5", "kerple-log", "kerple-power", "sandwich", "sandwich-d128"]


def reference_lower(rows) -> torch.Tensor:
    """Nested lists with None above the diagonal (as the golden scripts store them) -> float64, nan there."""
    def fill(x):
        return [fill(v) for v in x] if isinstance(x, list) else (math.nan if x is None else x)

    return torch.tensor(fill(rows), dtype=torch.float64)


def assert_lower_close(actual: torch.Tensor, rows, **tol) -> None:
    """``actual`` [..., T, T] equals the reference on and below the diagonal, what the causal model applies."""
    expected = reference_lower(rows)
    keep = ~expected.isnan()
    T = expected.shape[-1]
    assert torch.equal(keep, torch.ones(T, T, dtype=torch.bool).tril().expand_as(keep))
    torch.testing.assert_close(actual.double()[keep], expected[keep], **(tol or TOL))


@pytest.mark.parametrize("name", TRANSLATION_INVARIANT)
@settings(max_examples=15, deadline=None)
@given(shift=st.integers(1, 10_000))
def test_bias_is_translation_invariant(name, shift):
    enc = encoding(name, dims(head_dim=8, n_heads=4))
    q_pos = torch.arange(40)
    k_pos = torch.arange(40)
    torch.testing.assert_close(enc.bias(q_pos + shift, k_pos + shift), enc.bias(q_pos, k_pos), rtol=1e-5, atol=1e-5)


# -- ALiBi: the authors' fairseq fork ---------------------------------------------------------------


@pytest.mark.parametrize("n_heads", ["2", "4", "6", "8", "12", "16"])
def test_alibi_slopes_golden(n_heads):
    torch.testing.assert_close(alibi_slopes(int(n_heads)), torch.tensor(golden("alibi")["slopes"][n_heads]), rtol=1e-6, atol=0)


@pytest.mark.parametrize("case", range(3))
def test_alibi_bias_is_the_references_mask_up_to_a_constant_per_row(case):
    """The reference adds m * j to every row; ours -m (i - j): the same row minus its diagonal,
    so the attention weights are the same."""
    g = golden("alibi")["cases"][case]
    reference = reference_lower(g["mask"])  # [H, T, T]
    pos = torch.arange(g["length"])
    bias = encoding("alibi", dims(head_dim=8, n_heads=g["n_heads"])).bias(pos, pos)
    assert_lower_close(bias, (reference - reference.diagonal(dim1=-2, dim2=-1)[..., None]).tolist())
    scores = torch.randn(g["n_heads"], len(pos), len(pos), dtype=torch.float64)
    future = torch.ones(len(pos), len(pos), dtype=torch.bool).triu(1)
    ours = (scores + bias.double()).masked_fill(future, -math.inf).softmax(-1)
    torch.testing.assert_close(ours, (scores + reference.nan_to_num(nan=-math.inf)).softmax(-1), **TOL)


# -- T5: transformers' T5Attention ------------------------------------------------------------------


@pytest.mark.parametrize("case", range(3))
def test_t5_buckets_golden(case):
    g = golden("t5")
    c = g["cases"][case]
    distance = -torch.tensor(g["relative_positions"])  # n = i - j = -(j - i)
    assert t5_causal_bucket(distance, c["num_buckets"], c["max_distance"]).tolist() == c["buckets"]


@pytest.mark.parametrize("case", range(3))
def test_t5_bias_is_compute_bias(case):
    g = golden("t5")
    c = g["cases"][case]
    enc = encoding("t5", dims(head_dim=8, n_heads=g["n_heads"]), num_buckets=c["num_buckets"],
                   max_distance=c["max_distance"])
    with torch.no_grad():
        enc.values.copy_(torch.tensor(c["values"]))
    pos = torch.arange(len(c["bias"][0]))
    assert_lower_close(enc.bias(pos, pos), c["bias"])
    far = c["far"]  # the last query of a long window, against a spread of keys
    bias = enc.bias(torch.tensor([far["length"] - 1]), torch.tensor(far["keys"]))[:, 0]
    torch.testing.assert_close(bias.double(), torch.tensor(far["bias"], dtype=torch.float64), **TOL)


def test_t5_future_keys_share_bucket_0_and_long_distances_the_last():
    buckets = t5_causal_bucket(torch.tensor([-5, -1, 0, 127, 128, 10_000]), 32, 128)
    assert buckets.tolist()[:3] == [0, 0, 0] and buckets.tolist()[-2:] == [31, 31]


# -- KERPLE: the authors' GPT-NeoX fork -------------------------------------------------------------


@pytest.mark.parametrize("kernel", ["log", "power"])
def test_kerple_bias_and_projection_golden(kernel):
    """Parameters partly outside their box: the bias uses them clamped, and (as the reference)
    the parameters themselves are clamped in place."""
    g = golden("kerple")
    c = g[kernel]
    enc = encoding(f"kerple-{kernel}", dims(head_dim=8, n_heads=g["n_heads"]))
    for pos_q, pos_k, expected in ((None, None, c["bias"]), ([c["far"]["length"] - 1], c["far"]["keys"], c["far"]["bias"])):
        with torch.no_grad():
            enc.r1.copy_(torch.tensor(c["r1"]))
            enc.r2.copy_(torch.tensor(c["r2"]))
        if pos_q is None:
            pos = torch.arange(len(c["bias"][0]))
            assert_lower_close(enc.bias(pos, pos), expected)
        else:
            bias = enc.bias(torch.tensor(pos_q), torch.tensor(pos_k))[:, 0]
            torch.testing.assert_close(bias.double(), torch.tensor(expected, dtype=torch.float64), **TOL)
        torch.testing.assert_close(enc.r1.double(), torch.tensor(c["r1_after"], dtype=torch.float64), **TOL)
        torch.testing.assert_close(enc.r2.double(), torch.tensor(c["r2_after"], dtype=torch.float64), **TOL)


@pytest.mark.parametrize("name", ["kerple-log", "kerple-power"])
def test_kerple_is_one_instance_shared_by_all_layers_as_the_authors(name):
    assert golden("kerple")["shared_across_layers"]
    model = build_model(name)
    assert len(model.encodings) == 1 and model.encoding_for(0) is model.encoding_for(model.cfg.n_layers - 1)


def test_kerple_still_learns_from_the_bound():
    enc = encoding("kerple-power", dims(head_dim=8, n_heads=2))
    with torch.no_grad():
        enc.r1.copy_(torch.tensor([-1.0, 0.5]))
        enc.r2.copy_(torch.tensor([1.0, 3.0]))
    pos = torch.arange(6)
    enc.bias(pos, pos).sum().backward()
    assert enc.r1.tolist() == pytest.approx([0.01, 0.5]) and enc.r2.tolist() == pytest.approx([1.0, 2.0])
    assert enc.r1.grad[0] != 0 and enc.r2.grad[1] != 0


RELATIVE_LEARNED = ["kerple-log", "kerple-power", "t5"]  # relative biases with trained parameters


@pytest.mark.parametrize("name", RELATIVE_LEARNED)
def test_a_relative_bias_asked_for_once_per_layer_still_has_a_backward(name):
    """FlexAttention's path (suite.modeling.flex) asks for the relative bias in every layer of one
    forward. An in-place change of a parameter between those calls broke the backward of KERPLE's
    power kernel on an H200 (tests/modeling/test_flex_gradients_cuda.py); this is that pattern on
    the CPU: three layers' tables in one graph, the gradient the sum of three single ones."""
    enc = encoding(name, dims(head_dim=8, n_heads=2))
    with torch.no_grad():
        for p in enc.parameters():
            p.add_(0.3 * torch.randn_like(p))
            p.abs_()  # inside KERPLE's box, so the clamps change nothing and one call's gradient is a third
    distance = torch.arange(0, 12)
    sum(enc.relative_bias(distance).square().sum() for _ in range(3)).backward()
    three = [p.grad.clone() for p in enc.parameters()]
    enc.zero_grad()
    enc.relative_bias(distance).square().sum().backward()
    for g3, g1 in zip(three, (p.grad for p in enc.parameters())):
        torch.testing.assert_close(g3, 3 * g1)


# -- FIRE: the paper's appendix listing, as mcleish7/arithmetic runs it ------------------------------


def test_fire_bias_golden():
    g = golden("fire")
    enc = encoding("fire", dims(head_dim=8, n_heads=g["n_heads"]), mlp_width=g["mlp_width"],
                   init_threshold=g["init_threshold"])
    with torch.no_grad():
        for ours, theirs in (("w1", "w1"), ("b1", "b1"), ("w2", "w2"), ("b2", "b2")):
            getattr(enc, ours).copy_(torch.tensor(g[theirs]))
        enc.c.fill_(g["c"])
        enc.threshold_multiplier.fill_(g["threshold_multiplier"])
    pos = torch.arange(g["length"])
    assert enc.threshold() < g["length"] - 1  # queries past the threshold are normalised by their own position
    assert_lower_close(enc.bias(pos, pos), g["bias"])


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


# -- Sandwich: NVIDIA NeMo --------------------------------------------------------------------------


@pytest.mark.parametrize("case", range(3))
def test_sandwich_bias_golden(case):
    c = golden("sandwich")["cases"][case]
    # the default takes d' = the head dimension (as NeMo); sandwich-d128 fixes d' = 128
    name, head_dim = ("sandwich-d128", 16) if c["dim"] == 128 else ("sandwich", c["dim"])
    enc = encoding(name, dims(head_dim=head_dim, n_heads=c["n_heads"]))
    pos = torch.arange(len(c["bias"][0]))
    assert_lower_close(enc.bias(pos, pos), c["bias"])
    far = c["far"]
    bias = enc.bias(torch.tensor([far["length"] - 1]), torch.tensor(far["keys"]))[:, 0]
    torch.testing.assert_close(bias.double(), torch.tensor(far["bias"], dtype=torch.float64), **TOL)


def test_sandwich_kernel_is_zero_at_distance_zero_and_negative_elsewhere():
    kernel = sandwich_kernel(torch.arange(0, 3000), 16, 10000.0)
    assert kernel[0] == 0 and torch.all(kernel[1:] < 0)
