"""PoPE: polar coordinate position embeddings."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding


@dataclass(frozen=True)
class PopeParams:
    base: float = 10000.0  # theta: frequency c of d is base^(-c/d), c = 0 .. d-1
    bias_init: Literal["zeros", "uniform"] = "zeros"  # key phase bias: zeros (the reference's default) or U(-2 pi, 0)

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")


@ENCODINGS.register("pope")
class Pope(PositionalEncoding):
    """PoPE (Gopalakrishnan et al. 2025, "Decoupling the 'What' and 'Where' With Polar Coordinate
    Positional Embeddings", arXiv 2509.10534), as lucidrains/PoPE-pytorch runs it
    (PoPE-pytorch==0.0.15, git ee11cab: ``PoPE`` and ``apply_pope_to_qk``, the path of
    ``flash_attn_with_pope`` without the Triton kernel).

    Each of the d = Dh dimensions c of a query or key is one complex number: its magnitude
    softplus(x_c) (what a token is, independent of where), its phase t theta_c with
    theta_c = base^(-c/d) (where it is; d frequencies, not RoPE's d/2 pairs). Keys add a
    learned phase bias delta_{h,c} per head and frequency, clamped to [-2 pi, 0]. The logit
    is the real part of sum_c q_c conj(k_c):

        a_ts = sum_c softplus(q_tc) softplus(k_sc) cos((t - s) theta_c - delta_c),

    so it depends on t - s alone. ``rotate`` returns q and k as 2d real coordinates (the
    reference's ``(d two)`` layout: cos and sin of each dimension side by side), so the
    model's q.k is that sum. The reference divides by sqrt(d), the head dimension before
    the doubling; the model divides by the sqrt of q's last dimension, 2d, so q is multiplied
    by sqrt(2) to keep the reference's scale. Values keep their d dimensions.

    Every attention layer has its own delta (each attention module of the reference holds its
    own ``PoPE``), so the encoding is per layer. Scale behaviour: extrapolates as it is.
    """

    Params = PopeParams
    per_layer = True
    continuous_positions = True  # the phases t theta_c take any real t
    cacheable = True  # a token's coordinates depend on its own id alone

    def __init__(self, params: PopeParams, dims: ModelDims):
        super().__init__(params, dims)
        d = dims.head_dim
        inv_freq = params.base ** -(torch.arange(d, dtype=torch.float, device="cpu") / d)
        self.register_buffer("inv_freq", torch.tensor(inv_freq.tolist()), persistent=False)  # [d]
        bias = torch.zeros(dims.n_heads, d)
        if params.bias_init == "uniform":
            bias.uniform_(-2 * math.pi, 0.0)
        self.delta = nn.Parameter(bias)  # [H, d]

    def polar(self, x: torch.Tensor, phase: torch.Tensor) -> torch.Tensor:
        """softplus(x) at angle phase as interleaved (cos, sin) coordinates: x [B, H, T, d],
        phase [T, d] or [H, T, d] -> [B, H, T, 2d]."""
        magnitude = F.softplus(x.float())
        return torch.stack((magnitude * phase.cos(), magnitude * phase.sin()), dim=-1).flatten(-2)

    def rotate(self, q, k, q_pos, k_pos):
        q_phase = q_pos.to(torch.float)[:, None] * self.inv_freq[None, :]  # [Tq, d]
        k_phase = k_pos.to(torch.float)[:, None] * self.inv_freq[None, :]  # [Tk, d]
        delta = self.delta.float().clamp(-2 * math.pi, 0.0)[:, None, :]  # [H, 1, d]
        q2 = self.polar(q, q_phase) * math.sqrt(2.0)  # the reference's 1/sqrt(d) under the model's 1/sqrt(2d)
        k2 = self.polar(k, k_phase[None] + delta)  # [B, H, Tk, 2d]
        return q2.to(q.dtype), k2.to(k.dtype)
