"""Gated DeltaNet (Qwen3-Next's linear-attention layers) against transformers' layer, the chunked
delta rule against its recurrence, and the Qwen3-Next layout as the model builds it."""

from __future__ import annotations

import pytest
import torch

from suite.encodings.delta_rule import chunked_gated_delta_rule, recurrent_gated_delta_rule
from suite.modeling.build import build_model
from suite.modeling.model import AttentionPath, ModelConfig

from tests.encodings.helpers import dims, encoding, golden, spec


def test_layer_is_transformers_qwen3_next_gated_deltanet():
    """suite.encodings.gated_deltanet on the golden's weights (scripts/golden/gated_deltanet.py:
    transformers 5.23.0's Qwen3NextGatedDeltaNet, 2 key and 4 value heads, 150 tokens, three
    chunks) gives the reference's output; the weights load by the reference's own names."""
    g = golden("gated-deltanet")
    layer = encoding("qwen3-next", dims(head_dim=g["head_dim"], n_heads=g["value_heads"])).inner
    assert (layer.key_heads, layer.value_heads, layer.params.conv_kernel) == (g["key_heads"], g["value_heads"],
                                                                              g["conv_kernel"])
    layer.load_state_dict({name: torch.tensor(w) for name, w in g["weights"].items()})  # strict: the same names
    with torch.no_grad():
        y = layer.mixer(torch.tensor(g["x"])[None])
    torch.testing.assert_close(y[0], torch.tensor(g["y"]), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_chunked_delta_rule_is_its_recurrence(chunk):
    """The chunked form (a triangular solve per chunk) gives Eq. 10 of Yang et al. 2025 computed
    token by token, whatever the chunk size, with a partial last chunk."""
    torch.manual_seed(0)
    B, H, T, D = 2, 3, 100, 8
    q, k, v = torch.randn(B, H, T, D), torch.randn(B, H, T, D), torch.randn(B, H, T, 5)
    g, beta = -3 * torch.rand(B, H, T), torch.rand(B, H, T)
    torch.testing.assert_close(chunked_gated_delta_rule(q, k, v, g, beta, chunk), recurrent_gated_delta_rule(q, k, v, g, beta),
                               atol=1e-5, rtol=1e-5)


def test_layer_is_causal():
    torch.manual_seed(0)
    layer = encoding("qwen3-next", dims(head_dim=8, n_heads=4)).inner
    x = torch.randn(1, 80, 32)
    changed = x.clone()
    changed[:, 50:] = torch.randn(1, 30, 32)
    with torch.no_grad():
        torch.testing.assert_close(layer.mixer(x)[:, :50], layer.mixer(changed)[:, :50], atol=0, rtol=0)


def test_qwen3_next_layout_is_transformers_layer_types():
    """encodings/qwen3-next.yaml: Gated DeltaNet where transformers' Qwen3NextConfig says
    linear_attention (tests/golden/qwen3-next.json: every layer but 3, 7, 11), gated attention
    with Qwen3-Next's partial rotary where it says full_attention; the model builds no attention
    for a Gated DeltaNet layer and says so in its path names."""
    types = golden("qwen3-next")["layer_types"]
    rotary = golden("qwen3-next")["rope_parameters"]
    model = build_model(spec("qwen3-next"), ModelConfig(d_model=64, n_layers=len(types), n_heads=4))
    for i, kind in enumerate(types):
        enc, block = model.encoding_for(i), model.blocks[i]
        if kind == "linear_attention":
            assert enc.active_hooks() == {"mixer"} and block.attn is None and model.paths[i] is AttentionPath.MIXER, i
        else:
            assert enc.active_hooks() == {"rotate", "gate"} and block.attn is not None, i
            assert enc.inner.params.kind == "elementwise"
            assert enc.inner.inner.params.fraction == rotary["partial_rotary_factor"]
            assert enc.inner.inner.params.base == rotary["rope_theta"]
    assert model.path_name == "fused+mixer"
    model.path = AttentionPath.EXPLICIT  # the diagnostics force the explicit path: the mixers stay
    assert model.paths[:4] == [AttentionPath.MIXER] * 3 + [AttentionPath.EXPLICIT]
    with torch.no_grad():
        assert torch.isfinite(model(torch.randint(0, 256, (2, 100)))).all()
