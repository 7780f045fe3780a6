"""Multi-head Latent Attention's decoupled RoPE (DeepSeek-V2, DeepSeek-V3), through the ``logits`` hook.

DeepSeek-AI 2024, "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language
Model" (arXiv 2405.04434), Sec. 2.1.3, Eqs. 14-19; kept in DeepSeek-V3 (arXiv 2412.19437,
Sec. 2.1.1). MLA compresses keys and values into a low-rank latent c_t = W^DKV h_t, from which
every head's key and value are read (k^C = W^UK c_t, v^C = W^UV c_t, Eqs. 9-11). RoPE cannot
act on that latent (a rotation between W^UK and the query would stop W^UK from being absorbed
into W^Q at inference), so position travels in a separate, small part of each head:

    q^R_t = RoPE(W^QR h_t)   one d^R-dim rotary query per head                  (14)
    k^R_t = RoPE(W^KR h_t)   one d^R-dim rotary key shared by every head,
                             from the hidden state, not from the latent         (15)
    q_{t,i} = [q^C_{t,i}; q^R_{t,i}],   k_{t,i} = [k^C_{t,i}; k^R_t]            (16, 17)
    o_{t,i} = sum_j softmax_j(q_{t,i}^T k_{j,i} / sqrt(d_h + d^R)) v^C_{j,i}    (18)

(Eq. 19, the output projection, is the model's.) The "nope" parts q^C, k^C carry no position.

What is reproduced: Eqs. 14-18 on the model's own queries, keys and values as the nope parts
(q^C = the model's q, k^C its k, v^C its v, d_h its head dim), with the rotary query
projection W^QR per head, the one rotary key projection W^KR shared by the heads, RoPE on
pairs of adjacent dimensions (DeepSeek-V3's ``rope_interleave``) and the softmax scale of the
concatenated head, 1/sqrt(d_h + d^R). The logits hook returns
(q^C k^C + q^R k^R) sqrt(d_h / (d_h + d^R)), which the model's 1/sqrt(d_h) turns into Eq. 18.

What is not: the low-rank key/value latent and its RMSNorm (``kv_a_layernorm``), and the query
latent (``q_lora_rank``; DeepSeek-V2-Lite has none): here k^C, v^C and q^C are the model's
full-rank projections of h_t. They carry no position; they set the capacity of the nope parts
and the size of the key/value cache, which is what MLA was designed for. The latent's
absorption into W^Q and W^O is an inference-time rewriting of the same computation.

Reference: transformers==5.23.0, ``models/deepseek_v3/modeling_deepseek_v3.py``,
``DeepseekV3Attention`` (``q_proj``'s rows per head [nope; rope], ``kv_a_proj_with_mqa``'s last
``qk_rope_head_dim`` rows the shared key, ``apply_rotary_pos_emb_interleave``, ``scaling =
qk_head_dim ** -0.5``), executed by scripts/golden/mla.py. Its interleaved rotation turns pairs
(2i, 2i + 1) by p theta_i, theta_i = base^(-2i/d^R), and lays the result out half-split; a
fixed permutation of the rope dims of q and k alike, which leaves q^R . k^R unchanged.

Positions are the token indices (the hook's q0, k0), as in GRAPE's contextual variants: a
training position transform (PoSE, randomized ids) does not reach the rope part. The hook reads
the layer's input of every key, so the encoding is not cacheable (its own streaming would keep
k^R beside the model's keys, as DeepSeek's cache keeps it beside the latent).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding
from suite.encodings.rotary import cos_sin_tables, default_inv_freq, rotate_half_split


@dataclass(frozen=True)
class MLAParams:
    base: float = 10000.0  # DeepSeek-V2's and V3's rope_theta
    # d^R / d_h: the rotary part per head beside the nope part (the model's head dim), DeepSeek-V2's
    # and V3's qk_rope_head_dim 64 beside qk_nope_head_dim 128 (and v_head_dim 128): a third of the
    # concatenated 192-dim query and key. At tiny's head dim 16: 8 rotary dims, 24 in all.
    rope_ratio: float = 0.5
    interleave: bool = True  # RoPE on adjacent pairs (2i, 2i+1): DeepSeek-V3's rope_interleave; False: half-split
    init_std: float = 0.02  # W^QR and W^KR start N(0, init_std^2): DeepSeek-V3's initializer_range

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError(f"base must be > 1, got {self.base}")
        if not self.rope_ratio > 0:
            raise ValueError(f"rope_ratio must be > 0, got {self.rope_ratio}")
        if not self.init_std > 0:
            raise ValueError(f"init_std must be > 0, got {self.init_std}")


def rope_head_dim(rope_ratio: float, head_dim: int) -> int:
    """d^R = rope_ratio x d_h, which must be a whole, even number of dims (RoPE turns pairs)."""
    dim = rope_ratio * head_dim
    if dim != round(dim) or round(dim) < 2 or round(dim) % 2:
        raise ValueError(f"rope_ratio {rope_ratio} x head_dim {head_dim} = {dim}: the rotary part must be a "
                         "whole, even number of dims >= 2")
    return round(dim)


def rotate_interleaved(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Pairs (2i, 2i + 1) of x [..., T, r] turned by the angles of cos, sin [T, r/2], laid out
    half-split as transformers' ``apply_rotary_pos_emb_interleave`` returns them."""
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


@ENCODINGS.register("mla")
class MLA(PositionalEncoding):
    """MLA's decoupled RoPE beside the model's position-free queries and keys (module
    docstring; DeepSeek-V2 Eqs. 14-18). Extrapolates as it is."""

    Params = MLAParams
    per_layer = True  # each layer has its own W^QR and W^KR

    def __init__(self, params: MLAParams, dims: ModelDims):
        super().__init__(params, dims)
        self.rope_dim = rope_head_dim(params.rope_ratio, dims.head_dim)
        self.q_rope = nn.Linear(dims.d_model, dims.n_heads * self.rope_dim, bias=False)  # W^QR (Eq. 14)
        self.k_rope = nn.Linear(dims.d_model, self.rope_dim, bias=False)  # W^KR (Eq. 15), shared by the heads
        for proj in (self.q_rope, self.k_rope):
            nn.init.normal_(proj.weight, std=params.init_std)
        self.inv_freq = default_inv_freq(self.rope_dim, params.base)  # [d^R/2] float64: base^(-2i/d^R)
        self._tables: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}

    def cos_sin(self, end: int, device, dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """Cached cos, sin [n >= end, d^R/2] of p theta_i (computed in float64), grown to the
        next power of two."""
        key = (str(device), dtype)
        cached = self._tables.get(key)
        if cached is None or cached[0].shape[0] < end:
            cached = self._tables[key] = cos_sin_tables(self.inv_freq, end, device, dtype)
        return cached

    def turn(self, v: torch.Tensor, start: int) -> torch.Tensor:
        """RoPE(v) of rotary queries or keys v [..., T, d^R] at token indices start .. start + T - 1."""
        cos, sin = (t[start : start + v.shape[-2]] for t in self.cos_sin(start + v.shape[-2], v.device, v.dtype))
        if self.params.interleave:
            return rotate_interleaved(v, cos, sin)
        return rotate_half_split(v, cos, sin)

    def rope_parts(self, x: torch.Tensor, Tq: int, Tk: int, q0: int, k0: int) -> tuple[torch.Tensor, torch.Tensor]:
        """q^R [B, H, Tq, d^R] of the queries at q0 .. and k^R [B, 1, Tk, d^R] of the keys at k0 ..,
        rotated (Eqs. 14-15), from the layer's input x [B, T, D]."""
        B = x.shape[0]
        q = self.q_rope(x[:, q0 : q0 + Tq]).view(B, Tq, self.dims.n_heads, self.rope_dim).transpose(1, 2)
        k = self.k_rope(x[:, k0 : k0 + Tk])[:, None]  # one key for every head
        return self.turn(q, q0), self.turn(k, k0)

    def logits(self, q, k, x, q0, k0):
        q_rope, k_rope = self.rope_parts(x, q.shape[2], k.shape[2], q0, k0)
        raw = q @ k.transpose(-2, -1) + (q_rope @ k_rope.transpose(-2, -1)).to(q.dtype)  # Eqs. 16-17: [q^C; q^R].[k^C; k^R]
        # Eq. 18 scales by 1/sqrt(d_h + d^R); the model divides what this returns by sqrt(d_h)
        return raw * math.sqrt(q.shape[-1] / (q.shape[-1] + self.rope_dim))
