"""Attention sinks as gpt-oss runs them: the model's attention against transformers' gpt-oss
(golden values: scripts/golden/gpt_oss_sinks.py, transformers==5.23.0), the schedule's layers,
and a trained sink."""

from __future__ import annotations

import torch

from suite.encodings import ModelDims
from suite.modeling.model import AttentionPath, attend

from tests.encodings.helpers import build_model, golden, spec


def gpt_oss_layer(layer: int, g: dict):
    s = spec("gpt-oss")
    return s.implementation()(s.resolved_params(), ModelDims(g["heads"] * g["head_dim"], g["heads"], g["head_dim"], 2, 64,
                                                             layer=layer))


def test_attention_with_sinks_is_gpt_oss_attention_in_either_layer():
    """Each layer type of GptOssConfig's alternation: the model's attention (explicit path,
    the layer's window) over the reference's q, k, v with its sinks gives the reference's
    output, to 1e-5."""
    g = golden("gpt-oss-sinks")
    q, k, v = (torch.tensor(g[n])[None] for n in ("q", "k", "v"))  # [1, H, T, Dh]
    pos = torch.arange(g["length"])
    for layer, layer_type in enumerate(g["layer_types"]):
        enc = gpt_oss_layer(layer, g)
        case = g["cases"][layer_type]
        assert (enc.attention_window.size if enc.attention_window else None) == (16 if case["window"] else None)
        with torch.no_grad():
            enc.inner.sinks.copy_(torch.tensor(g["sinks"]))
        if case["window"]:  # the reference's window, here (the spec's is 16 at L = 64)
            enc._window = type(enc.attention_window)(case["window"])
        out = attend(q, k, v, enc, AttentionPath.EXPLICIT, pos, pos)
        torch.testing.assert_close(out[0], torch.tensor(case["output"]), rtol=1e-5, atol=1e-5, msg=layer_type)


def test_a_sink_takes_a_share_and_is_trained():
    """A large sink logit leaves the attention output near zero (the head attends to nothing);
    the sinks are parameters of the model and get gradients."""
    model = build_model("gpt-oss")
    assert all(p == AttentionPath.EXPLICIT for p in model.paths)
    sinks = [n for n, _ in model.named_parameters() if n.endswith("sinks")]
    assert len(sinks) == model.cfg.n_layers
    idx = torch.randint(0, 256, (2, 16))
    model(idx).logsumexp(-1).mean().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for n, p in model.named_parameters() if n.endswith("sinks"))
    enc = model.encoding_for(1)
    q = k = v = torch.randn(1, model.cfg.n_heads, 8, 8)
    with torch.no_grad():
        enc.inner.sinks.fill_(30.0)
    assert attend(q, k, v, enc, AttentionPath.EXPLICIT, torch.arange(8), torch.arange(8)).abs().max() < 1e-6
