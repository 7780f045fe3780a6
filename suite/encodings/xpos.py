"""xPos: rotary embedding with an exponential decay of the relative distance."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding
from suite.encodings.rotary import default_inv_freq, rotate_half_split


@dataclass(frozen=True)
class XposParams:
    base: float = 10000.0  # RoPE's base
    gamma: float = 0.4  # the paper's gamma in zeta_i
    scale_base: float = 512.0  # the paper's scale base

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")
        if self.gamma <= 0:
            raise ValueError("gamma must be > 0")
        if self.scale_base <= 0:
            raise ValueError("scale_base must be > 0")


def xpos_zeta(head_dim: int, gamma: float) -> torch.Tensor:
    """zeta_i = (i / (d/2) + gamma) / (1 + gamma), i = 0 .. d/2 - 1 (float64): one per rotary pair."""
    i = torch.arange(head_dim // 2, dtype=torch.float64)
    return (i / (head_dim / 2) + gamma) / (1 + gamma)


def xpos_scales(pos: torch.Tensor, zeta: torch.Tensor, scale_base: float, center: float) -> torch.Tensor:
    """zeta^((n - center) / scale_base) [T, d/2]: the query's factor (the key takes its inverse)."""
    exponent = (pos.to(torch.float64) - center)[:, None] / scale_base
    return zeta[None, :] ** exponent


@ENCODINGS.register("xpos")
class Xpos(PositionalEncoding):
    """xPos (Sun et al. 2022, "A Length-Extrapolatable Transformer", Sec. 3.1, Eq. 4-5;
    reference code microsoft/torchscale@4d1e0e8, ``torchscale/component/
    xpos_relative_position.py``, class ``XPOS``): RoPE whose query at position n is
    also scaled by zeta^(n / scale_base) and whose key at m by zeta^(-m / scale_base),
    per rotary pair i, with zeta_i = (i/(d/2) + gamma) / (1 + gamma) (torchscale:
    ``(arange(0, d, 2) + 0.4 d) / (1.4 d)``), so that q_n . k_m carries the decay
    zeta^((n - m) / scale_base) <= 1 for a key in the past.

    Numerical range: zeta_0 = gamma / (1 + gamma) = 0.29, so the two factors alone
    reach 0.29^(+-T/512) and overflow float16 after a few thousand positions. Since
    only n - m reaches the logits, positions are centred before exponentiating, as
    torchscale does: it gives the T keys the exponents (j - ceil(T/2)) / scale_base,
    j = 0 .. T-1, and the queries the same centre (its ``offset`` for incremental
    decoding). Here the centre is the keys' lowest id + ceil(span/2), which is exactly
    torchscale's for consecutive ids, so ``rotate`` returns torchscale's queries and
    keys, not only its logits; for sparse ids any centre gives the same logits.

    Convention: half-split rotary pairs (i, i + d/2) and theta_i = base^(-2i/d), as in
    :mod:`suite.encodings.rotary`; torchscale pairs interleaved dimensions (2i, 2i + 1)
    (``rotate_every_two``, ``duplicate_interleave``). The two differ by a fixed
    permutation of the head dimensions, which the projections absorb; the golden test
    applies it explicitly. Blockwise causal attention, the paper's inference-time
    companion, is an attention pattern and not part of the encoding (torchscale's
    attention does not apply it either). The encoding extrapolates as it is.
    """

    Params = XposParams
    # not cacheable: the centre of the decay exponents follows the keys' span, so a token
    # read alone is scaled differently than in the whole window (same logits, other rounding)

    def __init__(self, params: XposParams, dims: ModelDims):
        super().__init__(params, dims)
        self.register_buffer("inv_freq", default_inv_freq(dims.head_dim, params.base), persistent=False)
        self.register_buffer("zeta", xpos_zeta(dims.head_dim, params.gamma), persistent=False)

    def rotate(self, q, k, q_pos, k_pos):
        lo, hi = int(k_pos.min()), int(k_pos.max())
        center = lo + (hi - lo + 2) // 2  # torchscale: min_pos = -(T + offset) // 2 = -ceil(T/2) for ids 0..T-1
        q = self._rotate_scaled(q, q_pos, xpos_scales(q_pos, self.zeta, self.params.scale_base, center))
        k = self._rotate_scaled(k, k_pos, xpos_scales(k_pos, self.zeta, self.params.scale_base, center).reciprocal())
        return q, k

    def _rotate_scaled(self, x, pos, scale):
        angles = pos.to(torch.float64)[:, None] * self.inv_freq[None, :]  # [T, Dh/2]
        cos, sin = (angles.cos() * scale).to(x.dtype), (angles.sin() * scale).to(x.dtype)
        return rotate_half_split(x, cos, sin)
