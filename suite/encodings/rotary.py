"""The rotary family: RoPE and its length-scaling variants, as one encoding.

Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding",
Eq. (34): pairs of query/key dimensions are rotated by angle m * theta_i with
theta_i = base^(-2i/d), so <R_m q, R_n k> depends on m - n only.

Convention: **half-split pairs** (dimension i is paired with i + r/2, as in GPT-NeoX
and Llama's Hugging Face port), not the paper's interleaved pairs (2i, 2i+1). The two
differ by a fixed permutation of head dimensions, which the learned projections
absorb, and half-split needs no reshape.

The scaling variants are parameters, each a small pure function over the default
frequencies (``scaling:``):

* ``pi``  position interpolation, Chen et al. 2023 Eq. (3): theta_i / s.
* ``ntk`` NTK-aware base change (bloc97 2023; YaRN paper Eq. 16): base * s^(d/(d-2)).
* ``dynamic_ntk`` the NTK base change with s = max(1, current length / L)
  (emozilla 2023; YaRN paper Sec. 3.3), so it equals RoPE within the training length.
* ``yarn`` Peng et al. 2023, "YaRN", Eqs. (17)-(23): NTK-by-parts with the ramp
  gamma(r) over r = L / lambda_i (rotations per *original* training length L; the
  paper's convention, not the extended length), plus the attention temperature
  sqrt(1/t) = 0.1 ln s + 1 applied to both q and k. The ramp is linear in r as in
  the paper's Eq. (18); the authors' reference code instead ramps linearly over the
  dimension index between floor/ceil-rounded correction dimensions, which agrees at
  both ends of the ramp and differs slightly inside it.
* ``llama3`` Meta's Llama 3.1 rule: wavelengths shorter than L/high_freq_factor are
  kept, longer than L/low_freq_factor divided by s, smooth in between.

Partial rotary (``fraction`` < 1, GPT-NeoX/Pythia): only the first r = fraction * Dh
dimensions rotate. Two exponents exist in the literature: theta_i = base^(-2i/r)
(GPT-NeoX, ``partial_exponent: rotary_dim``) and base^(-2i/Dh) (the frequencies full
RoPE would give those dimensions, ``partial_exponent: head_dim``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch

from .base import ModelDims, PositionalEncoding, ScaleBehaviour

Scaling = Literal["none", "pi", "ntk", "dynamic_ntk", "yarn", "llama3"]


@dataclass(frozen=True)
class RotaryParams:
    base: float = 10000.0  # RoFormer's base
    fraction: float = 1.0  # share of each head's dimensions that rotate
    partial_exponent: Literal["rotary_dim", "head_dim"] = "rotary_dim"
    scaling: Scaling = "none"  # what happens at eval scale s > 1
    beta_fast: float = 32.0  # YaRN: frequencies doing > beta_fast rotations in L are kept
    beta_slow: float = 1.0  # YaRN: frequencies doing < beta_slow rotations in L are interpolated
    low_freq_factor: float = 1.0  # Llama 3 (Meta's defaults)
    high_freq_factor: float = 4.0

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")
        if not 0 < self.fraction <= 1:
            raise ValueError("fraction must be in (0, 1]")
        if self.beta_fast <= self.beta_slow:
            raise ValueError("beta_fast must be greater than beta_slow")
        if self.high_freq_factor <= self.low_freq_factor:
            raise ValueError("high_freq_factor must be greater than low_freq_factor")


# -- frequencies: small pure functions that build on one another ---------------


def default_inv_freq(rotary_dim: int, base: float, exponent_dim: int | None = None) -> torch.Tensor:
    """theta_i = base^(-2i / exponent_dim), i = 0 .. rotary_dim/2 - 1 (float64)."""
    exponent_dim = exponent_dim or rotary_dim
    return base ** (-torch.arange(0, rotary_dim, 2, dtype=torch.float64) / exponent_dim)


def interpolated_inv_freq(inv_freq: torch.Tensor, factor: float) -> torch.Tensor:
    """Position interpolation: position p gets the angles of p / factor."""
    return inv_freq / factor


def ntk_base(base: float, factor: float, exponent_dim: int) -> float:
    """NTK-aware base: the lowest frequency is interpolated by ``factor``, the highest kept.

    With a single rotating pair (exponent_dim 2) the only frequency is base^0 = 1, which
    no base change moves, so the base is returned as it is."""
    if exponent_dim <= 2:
        return base
    return base * factor ** (exponent_dim / (exponent_dim - 2))


def yarn_ramp(inv_freq: torch.Tensor, train_len: int, beta_fast: float, beta_slow: float) -> torch.Tensor:
    """gamma(r) of YaRN Eq. (18), r = L / lambda = L * theta / (2 pi): 0 below beta_slow, 1 above beta_fast."""
    rotations = train_len * inv_freq / (2 * math.pi)
    return ((rotations - beta_slow) / (beta_fast - beta_slow)).clamp(0.0, 1.0)


def yarn_inv_freq(inv_freq, factor, train_len, beta_fast, beta_slow) -> torch.Tensor:
    """YaRN Eq. (19): h(theta) = (1 - gamma) theta / s + gamma theta."""
    gamma = yarn_ramp(inv_freq, train_len, beta_fast, beta_slow)
    return (1 - gamma) * interpolated_inv_freq(inv_freq, factor) + gamma * inv_freq


def yarn_mscale(factor: float) -> float:
    """YaRN Eq. (22): sqrt(1/t) = 0.1 ln(s) + 1, multiplied into q and k (so logits by 1/t)."""
    return 1.0 if factor <= 1 else 0.1 * math.log(factor) + 1.0


def llama3_inv_freq(inv_freq, factor, train_len, low_freq_factor, high_freq_factor) -> torch.Tensor:
    """Llama 3.1's rule over wavelengths lambda = 2 pi / theta, with L the original length."""
    wavelen = 2 * math.pi / inv_freq
    smooth = (train_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * interpolated_inv_freq(inv_freq, factor) + smooth * inv_freq
    out = torch.where(wavelen > train_len / low_freq_factor, inv_freq / factor, smoothed)
    return torch.where(wavelen < train_len / high_freq_factor, inv_freq, out)


def rotate_half_split(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate pairs (i, i + r/2) of the first r = 2 * cos.shape[-1] dims of x [..., T, Dh]."""
    half = cos.shape[-1]
    x1, x2, rest = x[..., :half], x[..., half : 2 * half], x[..., 2 * half :]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest), dim=-1)


class Rotary(PositionalEncoding):
    """RoPE with optional partial rotation and length scaling (see the module docstring)."""

    Params = RotaryParams

    def __init__(self, params: RotaryParams, dims: ModelDims):
        super().__init__(params, dims)
        self.rotary_dim = 2 * max(1, round(params.fraction * dims.head_dim / 2))
        self.exponent_dim = self.rotary_dim if params.partial_exponent == "rotary_dim" else dims.head_dim
        self._tables: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}

    @property
    def scale_behaviour(self) -> ScaleBehaviour:
        return ScaleBehaviour.EXTRAPOLATE if self.params.scaling == "none" else ScaleBehaviour.ADJUST

    def frequencies(self, seq_len: int) -> tuple[torch.Tensor, float]:
        """(inverse frequencies [r/2] in float64, q/k magnitude factor) for the current scale."""
        p, s, L = self.params, self.scale, self.dims.train_len
        inv_freq = default_inv_freq(self.rotary_dim, p.base, self.exponent_dim)
        if p.scaling == "pi":
            return interpolated_inv_freq(inv_freq, s), 1.0
        if p.scaling == "ntk":
            return default_inv_freq(self.rotary_dim, ntk_base(p.base, s, self.exponent_dim), self.exponent_dim), 1.0
        if p.scaling == "dynamic_ntk":
            factor = max(1.0, seq_len / L)
            return default_inv_freq(self.rotary_dim, ntk_base(p.base, factor, self.exponent_dim), self.exponent_dim), 1.0
        if p.scaling == "yarn":
            return yarn_inv_freq(inv_freq, s, L, p.beta_fast, p.beta_slow), yarn_mscale(s)
        if p.scaling == "llama3":
            return llama3_inv_freq(inv_freq, s, L, p.low_freq_factor, p.high_freq_factor), 1.0
        return inv_freq, 1.0

    def cos_sin(self, seq_len: int, device) -> tuple[torch.Tensor, torch.Tensor]:
        """Cached [n >= seq_len, r/2] tables, grown lazily to the next power of two."""
        dynamic = self.params.scaling == "dynamic_ntk"
        key = (self.scale, seq_len if dynamic and seq_len > self.dims.train_len else None, str(device))
        cached = self._tables.get(key)
        if cached is None or cached[0].shape[0] < seq_len:
            n = max(seq_len, 1 << (seq_len - 1).bit_length())
            inv_freq, mscale = self.frequencies(seq_len)
            angles = torch.arange(n, dtype=torch.float64)[:, None] * inv_freq[None, :]  # [n, r/2]
            cached = ((angles.cos() * mscale).float().to(device), (angles.sin() * mscale).float().to(device))
            self._tables[key] = cached
        return cached

    def rotate(self, q, k, q_pos, k_pos):
        cos, sin = self.cos_sin(int(torch.maximum(q_pos.max(), k_pos.max())) + 1, q.device)
        q = rotate_half_split(q, cos[q_pos].to(q.dtype), sin[q_pos].to(q.dtype))
        k = rotate_half_split(k, cos[k_pos].to(k.dtype), sin[k_pos].to(k.dtype))
        return q, k
