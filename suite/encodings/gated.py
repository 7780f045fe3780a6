"""Gated attention: a sigmoid gate on each head's attention output, wrapped around any encoding.

Qiu et al. 2025, "Gated Attention for Large Language Models: Non-linearity, Sparsity, and
Attention-Sink-Free" (NeurIPS 2025, arXiv 2505.06708): the gate at position G1,
after scaled dot-product attention and before the output projection,

    Y' = Y * sigmoid(X W_theta),

X the layer's input after its norm, Y the output of the heads. Their best variant is
head-specific and elementwise (a gate per head and channel: W_theta [D, H * Dh]); the headwise
one has a scalar per head (W_theta [D, H]). The authors report that it adds a non-linearity
between the value and output projections, makes the attention output sparse and
query-dependent, removes the attention sink on the first token, and extrapolates better.

Reference: qiuzh20/gated_attention at 49645df63aafe9e680bc44a9c0ca280d4aefa8e9,
``modeling_qwen3.py``, ``Qwen3Attention``: the gate's projection is part of ``q_proj``
(per key/value group, the queries then the gate scores), ``attn_output * torch.sigmoid(gate_score)``
on [B, T, H, Dh] before ``o_proj``, no bias (Qwen3's attention has none), weights drawn
N(0, initializer_range = 0.02) by ``_init_weights``. Here the gate has a projection of its
own, the same numbers (scripts/golden/gated_attention.py maps one onto the other).

The gate is not a positional encoding: it is orthogonal to positions, and the authors train it
with RoPE. A spec wraps the encoding it gates (``inner``), so RoPE with the gate and NoPE with
the gate are rows beside RoPE and NoPE.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from torch import nn

from suite.encodings.base import ENCODINGS, AttentionWindow, ModelDims, PositionalEncoding, ScaleBehaviour
from suite.encodings.wrapper import checked_inner, inner_class, wrapper_class

Kind = Literal["elementwise", "headwise"]


@dataclass(frozen=True)
class GatedParams:
    inner: str = "rotary"  # the gated encoding's impl (part of the run id, with its params)
    inner_params: dict[str, Any] = field(default_factory=dict)
    kind: Kind = "elementwise"  # elementwise: a gate per head and channel (the authors' best); headwise: per head
    init_std: float = 0.02  # the authors' initializer_range for the gate's weight

    def __post_init__(self):
        checked_inner(self.inner, self.inner_params, Gated)
        if self.kind not in ("elementwise", "headwise"):
            raise ValueError(f"kind must be 'elementwise' or 'headwise', got {self.kind!r}")
        if not self.init_std > 0:
            raise ValueError(f"init_std must be > 0, got {self.init_std}")


@ENCODINGS.register("gated")
class Gated(PositionalEncoding):
    """The encoding ``inner`` (with ``inner_params``) and a sigmoid gate on each head's
    attention output (module docstring; Qiu et al. 2025, gate G1, Y' = Y * sigmoid(X W_theta)
    at G1). Every hook of the inner encoding is delegated; the instance is of a subclass made
    per inner class that overrides exactly its hooks plus ``gate``, so the model takes the inner
    encoding's attention path. The gate's weights are per layer, so is the encoding.
    Scale behaviour: the inner encoding's (the gate reads a token's own input, never its position).
    """

    Params = GatedParams
    per_layer = True

    def __new__(cls, params=None, dims=None):
        if cls is Gated and params is not None:
            cls = gated_class(inner_class(params.inner))
        return super().__new__(cls)

    def __init__(self, params: GatedParams, dims: ModelDims):
        super().__init__(params, dims)
        inner_cls = inner_class(params.inner)
        self.inner = inner_cls(inner_cls.Params(**params.inner_params), dims)
        if "gate" in self.inner.active_hooks():  # this gate would replace the inner one, not follow it
            raise ValueError(f"inner: {params.inner!r} with these inner_params acts at the gate hook itself "
                             "(stick-breaking's learned bias and norm); a gated encoding cannot wrap it")
        width = dims.n_heads * (dims.head_dim if params.kind == "elementwise" else 1)
        self.gate_proj = nn.Linear(dims.d_model, width, bias=False)
        nn.init.normal_(self.gate_proj.weight, std=params.init_std)

    @property
    def scale_behaviour(self) -> ScaleBehaviour:
        return self.inner.scale_behaviour

    @property
    def cacheable(self) -> bool:
        return self.inner.cacheable  # a token's gate reads its own input alone

    @property
    def attention_window(self) -> AttentionWindow | None:
        return self.inner.attention_window

    def active_hooks(self) -> frozenset[str]:
        return self.inner.active_hooks() | {"gate"}

    def max_length(self) -> int | None:
        return self.inner.max_length()

    def set_scale(self, scale: float) -> None:
        super().set_scale(scale)
        self.inner.set_scale(scale)

    def gate(self, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """y [B, H, T, Dh] times sigmoid(x W_theta), x [B, T, D]: per head and channel
        (elementwise) or per head (headwise), as the authors' ``attn_output * torch.sigmoid(gate_score)``."""
        B, H, T, _ = y.shape
        scores = self.gate_proj(x).view(B, T, H, -1).transpose(1, 2)  # [B, H, T, Dh | 1]
        return y * torch.sigmoid(scores)


@functools.cache
def gated_class(inner_cls: type[PositionalEncoding]) -> type[Gated]:
    """Gated, overriding exactly the hooks ``inner_cls`` overrides (and ``gate``)."""
    return wrapper_class(Gated, inner_cls, "gate")
