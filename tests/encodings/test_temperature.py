"""The attention temperature family against its references (golden values from
scripts/golden/temperature.py: transformers' Llama 4 temperature and YaRN attention factor,
Qwen's log-n expression) and its properties: the factor multiplies the wrapped encoding's
queries and nothing else, on the wrapped encoding's attention path."""

from __future__ import annotations

import math

import pytest
import torch

from suite.encodings import ENCODINGS
from suite.encodings.rerope import logn_scale
from suite.encodings.temperature import Temperature
from suite.modeling.model import AttentionPath, Transformer

from tests.encodings.helpers import CFG, build_model, dims, encoding, golden

POSITIONS = torch.tensor(golden("temperature")["positions"])


@pytest.mark.parametrize("case", range(2))
def test_logn_is_qwens(case):
    c = golden("temperature")["logn"]["cases"][case]
    enc = encoding("rope-logn", dims(train_len=c["train_len"]))
    torch.testing.assert_close(enc.factor(POSITIONS), torch.tensor(c["factors"], dtype=torch.float64), rtol=1e-12, atol=0)
    torch.testing.assert_close(enc.factor(POSITIONS), logn_scale(POSITIONS, c["train_len"]))  # bojone/rerope's, the same rule


@pytest.mark.parametrize("case", range(3))
def test_llama4_temperature_is_transformers(case):
    c = golden("temperature")["llama4"][case]
    enc = encoding("rope-llama4-temp", dims(), floor_scale=c["floor_scale"], attn_scale=c["attn_scale"])
    torch.testing.assert_close(enc.factor(POSITIONS), torch.tensor(c["scales"], dtype=torch.float64), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("scale", [2, 4, 8, 16])
def test_mscale_is_yarns_attention_factor_squared(scale):
    enc = encoding("yarn-mscale-only", dims())
    enc.set_scale(scale)
    factor = golden("temperature")["mscale"][str(scale)]
    assert enc.factor(POSITIONS)[0].item() == pytest.approx(factor**2, rel=1e-12)
    enc.set_scale(1)
    assert enc.factor(POSITIONS)[0].item() == 1.0


def test_the_factor_scales_the_wrapped_queries_only():
    rope, logn = encoding("rope", dims(train_len=16)), encoding("rope-logn", dims(train_len=16))
    q, k = torch.randn(1, 1, 40, 16), torch.randn(1, 1, 40, 16)
    pos = torch.arange(40)
    (q_r, k_r), (q_t, k_t) = rope.rotate(q, k, pos, pos), logn.rotate(q, k, pos, pos)
    torch.testing.assert_close(k_t, k_r)
    torch.testing.assert_close(q_t, q_r * logn_scale(pos, 16).float()[:, None])


def test_ssmax_is_s_log_n_and_one_at_the_training_length():
    enc = encoding("nope-ssmax", dims(n_heads=2, head_dim=8, train_len=64))
    tau = enc.factor(torch.arange(64))
    assert tau.shape == (2, 64) and tau[:, 0].abs().max() == 0  # one key: log 1 = 0
    torch.testing.assert_close(tau[:, 63], torch.ones(2))
    torch.testing.assert_close(tau[0, 9], torch.tensor(math.log(10) / math.log(64)))


@pytest.mark.parametrize("name, path", [("rope-logn", AttentionPath.FUSED), ("rope-ssmax", AttentionPath.FUSED),
                                        ("nope-ssmax", AttentionPath.FUSED)])
def test_the_wrapped_encodings_path(name, path):
    model = build_model(name)
    assert set(model.paths) == {path}
    assert model.per_layer == name.endswith("ssmax")  # its own s per layer


@pytest.mark.parametrize("inner, inner_params", [("path", {}), ("stick_breaking", {}),
                                                 ("rotary_sink", {"base": 10000.0})])
def test_a_temperature_delegates_every_hook_of_the_wrapped_encoding(inner, inner_params):
    """logn is 1 within the training length, so the wrapped model there is the inner model
    itself: the logits (PaTH), normalize (stick-breaking) and sink (gpt-oss) hooks reach it."""
    inner_impl = ENCODINGS[inner]
    wrapped = Temperature.Params(inner=inner, inner_params=inner_params, kind="logn")
    torch.manual_seed(0)
    plain = Transformer(CFG, lambda d: inner_impl(inner_impl.Params(**inner_params), d))
    model = Transformer(CFG, lambda d: Temperature(wrapped, d))
    assert model.encodings[0].hooks() == plain.encodings[0].hooks() | {"rotate"}
    state = {name.replace("encodings.0.", "encodings.0.inner.").replace("encodings.1.", "encodings.1.inner."): value
             for name, value in plain.state_dict().items()}
    model.load_state_dict(state)
    tokens = torch.randint(0, 256, (2, CFG.train_len))
    torch.testing.assert_close(model(tokens), plain(tokens))
