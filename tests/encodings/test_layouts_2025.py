"""The hybrid layouts 2025's models shipped, each against its reference (golden values from
scripts/golden/<name>.py): SmolLM3's NoPE-every-fourth-layer schedule, SWAN-GPT's global NoPE
with windowed RoPE, and the rotary of Qwen3-Next's full-attention layers (its only positional
part: its other layers are Gated DeltaNet, tested in tests/encodings/test_gated_deltanet.py)."""

from __future__ import annotations

import math

import torch

from suite.encodings import ModelDims
from suite.modeling.model import attention_mask

from tests.encodings.helpers import golden, spec


def layer_encoding(name: str, layer: int, head_dim: int, n_layers: int, train_len: int = 64):
    s = spec(name)
    return s.implementation()(s.resolved_params(), ModelDims(head_dim, 1, head_dim, n_layers, train_len, layer=layer))


def attention_weights(enc, q: torch.Tensor, k: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T / sqrt(Dh) + mask) [T, T] of one head at position ids ``pos``, q and k
    rotated by the layer's encoding when it rotates, the mask our model builds for it."""
    if "rotate" in enc.active_hooks():
        q, k = enc.rotate(q, k, pos, pos)
    logits = (q @ k.transpose(-2, -1))[0, 0] / math.sqrt(q.shape[-1])
    index = torch.arange(len(pos))  # the causal mask is over sequence indices
    return (logits + attention_mask(enc, index, index)[0, 0]).softmax(-1)


def test_smollm3_schedule_is_transformers_smollm3_layer_by_layer():
    """encodings/smollm3.yaml against transformers' SmolLM3 (scripts/golden/smollm3.py): each of
    12 layers rotates exactly where SmolLM3Config's no_rope_layers says (NoPE at layers 3, 7,
    11), at the golden's RoPE base, with global attention; its attention weights are those of
    SmolLM3Attention's forward, and a RoPE layer rotates q and k as SmolLM3RotaryEmbedding's
    cos/sin do."""
    g = golden("smollm3")
    q, k = (torch.tensor(g[n])[None, None] for n in ("q", "k"))
    pos = torch.tensor(g["positions"])
    for layer, ref in enumerate(g["per_layer"]):
        enc = layer_encoding("smollm3", layer, g["head_dim"], g["layers"])
        assert enc.attention_window is None and ref["sliding_window"] is None, layer
        rotates = "rotate" in enc.active_hooks()
        assert rotates == bool(ref["use_rope"]) == bool(g["no_rope_layers"][layer]), layer
        if rotates:
            assert enc.inner.params.base == g["rope_theta"], layer
            q_rot, k_rot = enc.rotate(q.clone(), k.clone(), pos, pos)
            torch.testing.assert_close(q_rot[0, 0], torch.tensor(g["q_rotated"]), atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(k_rot[0, 0], torch.tensor(g["k_rotated"]), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(attention_weights(enc, q.clone(), k.clone(), pos), torch.tensor(ref["weights"]),
                                   atol=1e-5, rtol=1e-5, msg=f"layer {layer}")


def test_swan_gpt_schedule_is_the_papers_layout():
    """encodings/swan-gpt.yaml against SWAN-GPT's stated layout (scripts/golden/swan_gpt.py; the
    paper has no public code): global NoPE in layers 0, 4, 8, RoPE with a sliding window in
    the others, the window a quarter of the training length as the other hybrid specs'."""
    g = golden("swan-gpt")
    for layer, ref in enumerate(g["layers"]):
        enc = layer_encoding("swan-gpt", layer, 16, len(g["layers"]))
        if ref["encoding"] == "nope":
            assert not enc.active_hooks() and enc.attention_window is None, layer
        else:
            assert enc.active_hooks() == {"rotate"}, layer
            assert (enc.attention_window.size, enc.attention_window.kind) == (64 // 4, ref["window"]), layer


def test_rope_partial_is_qwen3_next_full_attention_rotary():
    """encodings/rope-partial.yaml rotates q and k exactly as Qwen3-Next's full-attention layers
    do (scripts/golden/qwen3_next.py: transformers' Qwen3NextRotaryEmbedding at its default
    partial_rotary_factor 0.25 and rope_theta 10^4, through apply_rotary_pos_emb), the layers
    transformers' Qwen3NextConfig makes full attention being every fourth (3, 7, 11)."""
    from tests.encodings.helpers import dims, encoding

    g = golden("qwen3-next")
    assert [i for i, t in enumerate(g["layer_types"]) if t == "full_attention"] == [3, 7, 11]
    enc = encoding("rope-partial", dims(head_dim=g["head_dim"]))
    assert enc.params.fraction == g["rope_parameters"]["partial_rotary_factor"]
    assert enc.params.base == g["rope_parameters"]["rope_theta"]
    q, k = (torch.tensor(g[n])[None, None] for n in ("q", "k"))
    pos = torch.tensor(g["positions"])
    q_rot, k_rot = enc.rotate(q.clone(), k.clone(), pos, pos)
    for got, name in ((q_rot, "q_rotated"), (k_rot, "k_rotated"), (q_rot @ k_rot.transpose(-2, -1), "logits")):
        torch.testing.assert_close(got[0, 0], torch.tensor(g[name]), atol=1e-5, rtol=1e-5, msg=name)
    rotary_dim = g["rotary_dim"]
    assert torch.equal(q_rot[..., rotary_dim:], q[..., rotary_dim:])  # the other 3/4 carry no position
