"""The transformer: attention paths are exact, and the model is causal."""

from __future__ import annotations

import pytest
import torch

from suite.encodings import ENCODINGS
from suite.encodings.rotary import RotaryParams
from suite.encodings.base import NoParams
from suite.model import AttentionPath, ModelConfig, Transformer

CFG = ModelConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, train_len=16)


def model_with(impl: str, params=None) -> Transformer:
    torch.manual_seed(0)
    cls = ENCODINGS.get(impl)
    return Transformer(CFG, lambda: cls(params or cls.Params(), CFG.dims)).eval()


@pytest.mark.parametrize("impl, path", [("none", AttentionPath.FUSED), ("sinusoidal", AttentionPath.FUSED),
                                        ("rotary", AttentionPath.FUSED), ("alibi", AttentionPath.FLOAT_MASK)])
def test_attention_path_follows_hooks(impl, path):
    assert model_with(impl).path is path


@pytest.mark.parametrize("impl", ["none", "rotary", "alibi"])
def test_every_attention_path_computes_the_same_function(impl):
    """The fused and float-mask kernels equal softmax(q k^T / sqrt(Dh) + bias) written out."""
    model = model_with(impl)
    idx = torch.randint(0, 256, (2, 24))
    fast = model(idx)
    model.path = AttentionPath.EXPLICIT  # same weights, explicit attention
    torch.testing.assert_close(model(idx), fast, rtol=1e-4, atol=1e-5)


def test_alibi_bias_is_computed_once_per_forward():
    model = model_with("alibi")
    calls = []
    enc = model.encodings[0]
    original = enc.bias
    enc.bias = lambda q, k: calls.append(1) or original(q, k)
    model(torch.randint(0, 256, (1, 8)))
    assert len(calls) == 1 and len(model.encodings) == 1


def test_weights_are_tied_and_counted_once():
    model = model_with("rotary", RotaryParams())
    assert model.head.weight is model.tok.weight
    assert model.num_params() == sum(p.numel() for p in set(model.parameters()))


def test_bad_config_is_refused():
    with pytest.raises(ValueError, match="divisible"):
        ModelConfig(d_model=30, n_heads=4)
    with pytest.raises(TypeError, match="expects"):
        ENCODINGS.get("rotary")(NoParams(), CFG.dims)
