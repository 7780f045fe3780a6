"""Gated DeltaNet as a layer's token mixer: the linear-attention layers of Qwen3-Next.

Qwen3-Next (Qwen team 2025; transformers' ``qwen3_next``) is a hybrid: three of every four
layers are Gated DeltaNet (Yang, Kautz and Hatamizadeh 2025, "Gated Delta Networks:
Improving Mamba2 with Delta Rule", ICLR 2025, arXiv 2412.06464), the fourth is gated softmax
attention with RoPE on a quarter of each head. A Gated DeltaNet layer has no positional
encoding at all: order reaches it through its short causal convolution and its decaying
recurrent state, so the layout's positional question is how well that recurrence carries a
model past its training length beside a few attention layers.

The layer, as transformers==5.23.0's ``Qwen3NextGatedDeltaNet`` computes it (the reference;
scripts/golden/gated_deltanet.py runs it on this module's weights):

1. ``in_proj_qkvz`` and ``in_proj_ba`` project the layer's normalised input, grouped per key
   head: its query and key (Dk each), then the value and output-gate channels of the r value
   heads it serves (r = value heads per key head; Qwen3-Next's 32 value heads over 16 key heads: 2),
   and per value head b and a;
2. a depthwise causal convolution of width 4 (no bias) over the queries, keys and values side
   by side, then SiLU;
3. beta = sigmoid(b), the log decay g = -exp(A_log) softplus(a + dt_bias) (Mamba2's
   discretisation), and the gated delta rule (suite.encodings.delta_rule) with q and k
   L2-normalised, each key head shared by its r value heads;
4. per value head an RMSNorm with a learned gain (eps 1e-6), times SiLU(z), then ``out_proj``.

Initialisation as Qwen3-Next's ``_init_weights``: every linear and the convolution N(0, 0.02),
dt_bias ones, A_log = log U(0.01, 16), the norm's gain ones. The head widths here are the
model's head dimension (Qwen3-Next: 128 for keys and values, 256 for attention heads).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding
from suite.encodings.delta_rule import chunked_gated_delta_rule


@dataclass(frozen=True)
class GatedDeltaNetParams:
    value_heads_per_key_head: int = 2  # Qwen3-Next: linear_num_value_heads 32 / linear_num_key_heads 16
    conv_kernel: int = 4  # linear_conv_kernel_dim
    init_std: float = 0.02  # initializer_range
    norm_eps: float = 1e-6  # rms_norm_eps
    chunk: int = 64  # tokens per chunk of the delta rule (the reference's chunk_size)

    def __post_init__(self):
        for name in ("value_heads_per_key_head", "conv_kernel", "chunk"):
            if not (isinstance(getattr(self, name), int) and getattr(self, name) >= 1):
                raise ValueError(f"{name} must be an integer >= 1, got {getattr(self, name)!r}")
        if not self.init_std > 0 or not self.norm_eps > 0:
            raise ValueError(f"init_std and norm_eps must be > 0, got {self.init_std} and {self.norm_eps}")


@ENCODINGS.register("gated_deltanet")
class GatedDeltaNet(PositionalEncoding):
    """A Gated DeltaNet layer in place of the layer's attention (the ``mixer`` hook; module
    docstring). Value heads: the model's heads; key heads: that over ``value_heads_per_key_head``.
    Per layer (its own weights); not cacheable (its state is not a key/value cache: decoding
    re-reads the window). Scale behaviour: extrapolates as it is (no position is read)."""

    Params = GatedDeltaNetParams
    per_layer = True

    def __init__(self, params: GatedDeltaNetParams, dims: ModelDims):
        super().__init__(params, dims)
        r = params.value_heads_per_key_head
        if dims.n_heads % r:
            raise ValueError(f"value_heads_per_key_head ({r}) must divide the model's heads ({dims.n_heads})")
        self.value_heads, self.key_heads, self.head_dim = dims.n_heads, dims.n_heads // r, dims.head_dim
        key_dim, value_dim = self.key_heads * self.head_dim, self.value_heads * self.head_dim
        self.conv_dim = 2 * key_dim + value_dim
        self.in_proj_qkvz = nn.Linear(dims.d_model, 2 * key_dim + 2 * value_dim, bias=False)
        self.in_proj_ba = nn.Linear(dims.d_model, 2 * self.value_heads, bias=False)
        self.conv1d = nn.Conv1d(self.conv_dim, self.conv_dim, params.conv_kernel, groups=self.conv_dim, bias=False)
        self.dt_bias = nn.Parameter(torch.ones(self.value_heads))
        self.A_log = nn.Parameter(torch.empty(self.value_heads).uniform_(0.01, 16).log())
        self.norm = nn.RMSNorm(self.head_dim, eps=params.norm_eps)
        self.out_proj = nn.Linear(value_dim, dims.d_model, bias=False)
        for module in (self.in_proj_qkvz, self.in_proj_ba, self.conv1d, self.out_proj):
            nn.init.normal_(module.weight, std=params.init_std)

    def mixer(self, x: torch.Tensor) -> torch.Tensor:
        """The layer's output [B, T, D] for its normalised input x [B, T, D]."""
        B, T, _ = x.shape
        Hk, r, Dh = self.key_heads, self.params.value_heads_per_key_head, self.head_dim
        qkvz = self.in_proj_qkvz(x).view(B, T, Hk, 2 * Dh + 2 * r * Dh)
        q, k, v, z = qkvz.split([Dh, Dh, r * Dh, r * Dh], dim=-1)
        b, a = self.in_proj_ba(x).view(B, T, Hk, 2 * r).split([r, r], dim=-1)
        mixed = torch.cat([t.reshape(B, T, -1) for t in (q, k, v)], dim=-1).transpose(1, 2)  # [B, conv_dim, T]
        mixed = F.silu(self.conv1d(F.pad(mixed, (self.params.conv_kernel - 1, 0))))  # causal: pad the past only
        q, k, v = mixed.transpose(1, 2).split([Hk * Dh, Hk * Dh, Hk * r * Dh], dim=-1)
        q, k = (t.reshape(B, T, Hk, Dh).repeat_interleave(r, dim=2) for t in (q, k))  # a key head per r value heads
        v = v.reshape(B, T, Hk * r, Dh)
        beta = b.reshape(B, T, -1).sigmoid()
        g = -self.A_log.float().exp() * F.softplus(a.reshape(B, T, -1).float() + self.dt_bias)
        q, k, v, g, beta = (t.transpose(1, 2).float() for t in (q, k, v, g, beta))  # heads first, float32
        y = chunked_gated_delta_rule(q, k, v, g, beta, self.params.chunk).transpose(1, 2)  # [B, T, Hv, Dh]
        y = self.norm(y) * F.silu(z.reshape(B, T, -1, Dh).float())
        return self.out_proj(y.reshape(B, T, -1).to(x.dtype))
