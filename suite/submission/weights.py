"""The weight rule of a positional encoding: its model's weights within 1% of the same model
without positions (NoPE).

A row ranked among positional encodings must differ from the others only in how position
enters. An encoding that adds a gate, a convolution or a latent projection also adds capacity,
and a lead bought with capacity is in-distribution quality, not position (Canon layers lead ALiBi
by the same 0.58 bits per byte at 1x as at 16x). The rule counts weights at one reference shape,
GPT-2 small's (12 layers of width 768, 12 heads, 1,024 tokens), where a position table, a
per-head slope or a probe is what it is in the papers' models; at the tiny sizes trained here a
learned table of 64 positions is already 1.3% of the model, by a width the rule is not about.
Counted on torch's meta device: no memory, no time.
"""

from __future__ import annotations

import torch

from suite.modeling.build import build_model
from suite.modeling.model import ModelConfig
from suite.specs import EncodingSpec

REFERENCE = ModelConfig(d_model=768, n_layers=12, n_heads=12, d_ff=3072, train_len=1024)
TOLERANCE = 0.01
NOPE = EncodingSpec(name="nope", display_name="NoPE", family="none", paper="the model without positions", impl="none")


def parameter_count(spec: EncodingSpec, cfg: ModelConfig = REFERENCE) -> int:
    with torch.device("meta"):
        model = build_model(spec, cfg)
    return sum(p.numel() for p in model.parameters())


def extra_weights(spec: EncodingSpec, cfg: ModelConfig = REFERENCE) -> float:
    """The share of weights ``spec``'s model has beyond the same model with no positions."""
    return parameter_count(spec, cfg) / parameter_count(NOPE, cfg) - 1


def weight_problem(spec: EncodingSpec) -> str | None:
    """Why ``spec`` breaks the weight rule, or None. Only an encoding declared positional that
    trains a model of its own is held to it (an architecture change may add weights; a
    training-free variant is its checkpoint's encoding)."""
    if spec.kind != "positional" or spec.trains_as is not None:
        return None
    extra = extra_weights(spec)
    if abs(extra) <= TOLERANCE:
        return None
    return (f"declared positional, but its model has {extra:+.2%} weights against NoPE's at GPT-2 small's shape "
            f"(the rule: within {TOLERANCE:.0%}): declare kind: architecture with the base it is compared beside")
