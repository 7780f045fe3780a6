"""RoPE with its frequencies changed: Resonance RoPE's integer wavelengths, p-RoPE's
and HoPE's removed low frequencies. Each is :class:`~suite.encodings.rotary.Rotary`
(every scaling, partial rotation and the exact fast paths) with one more step on the
inverse frequencies, after the scaling's."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from suite.encodings.base import ENCODINGS
from suite.encodings.rotary import Frequencies, Rotary, RotaryParams, turns_a_whole_period


def resonance_inv_freq(inv_freq: torch.Tensor) -> torch.Tensor:
    """theta_i -> 2 pi / round(2 pi / theta_i): every wavelength a whole number of tokens
    (Resonance RoPE, ``r_inv_freq = 2 * math.pi / torch.round(2 * math.pi / inv_freq)``)."""
    return 2 * math.pi / torch.round(2 * math.pi / inv_freq)


@dataclass(frozen=True)
class ResonanceParams(RotaryParams):
    pass


@ENCODINGS.register("resonance_rotary")
class ResonanceRotary(Rotary):
    """Resonance RoPE (Wang et al. 2024, "Resonance RoPE: Improving Context Length
    Generalization of Large Language Models", Sec. 3, Eq. 5; reference code
    sheryc/resonance_rope@4a7f5a7, ``ResonanceRotaryEmbedding``): each rotary frequency's
    wavelength is rounded to the nearest integer, so the angle of every pair repeats
    exactly every lambda_i tokens and a position beyond the training length reuses the
    features of one inside it (for the pairs whose wavelength is at most L). The
    reference's table, built by repeating one period, is the same as t x the rounded
    frequency. Combines with the scalings (``scaling: yarn`` is the paper's Resonance
    YaRN: rounding after YaRN's change of frequencies).
    Scale behaviour: as its scaling (none: extrapolates as it is)."""

    Params = ResonanceParams

    def frequencies(self, factor: float | None = None) -> Frequencies:
        inv_freq, attention_factor = super().frequencies(factor)
        return resonance_inv_freq(inv_freq), attention_factor


@dataclass(frozen=True)
class PRopeParams(RotaryParams):
    p: float = 0.75  # the fraction of pairs that keep their frequency (the highest ones)

    def __post_init__(self):
        super().__post_init__()
        if not 0 <= self.p <= 1:
            raise ValueError(f"p must be in [0, 1], got {self.p}")


@ENCODINGS.register("p_rope")
class PRope(Rotary):
    """p-RoPE (Barbero et al., ICLR 2025, "Round and Round We Go! What makes Rotary
    Positional Encodings useful?", Sec. 5): RoPE with the lowest frequencies removed, the
    fraction 1 - p of the pairs with the smallest theta_i set to frequency 0, so those
    pairs are never rotated and carry semantic matching free of position; p = 1 is RoPE,
    p = 0 is NoPE. Unlike partial RoPE (``fraction``), every dimension keeps its place and
    the kept pairs keep their own frequencies. The paper's best setting: p = 0.75.

    The number kept is floor(p x r/2), as the paper's pseudocode and transformers'
    ``proportional`` RoPE (``_compute_proportional_rope_parameters``, Gemma 4's global
    layers; ``int(partial_rotary_factor * head_dim // 2)`` rotated pairs, the rest at
    frequency 0) both take it; rounding instead would keep one more pair wherever
    p x r/2 has a fractional part of one half or more (8 of 10 at head size 20, p = 0.75).
    Scale behaviour: as its scaling (none: extrapolates as it is)."""

    Params = PRopeParams

    def frequencies(self, factor: float | None = None) -> Frequencies:
        inv_freq, attention_factor = super().frequencies(factor)
        kept = int(self.params.p * self.rotary_dim // 2)  # floor(p r / 2), written as transformers writes it
        order = torch.argsort(inv_freq, descending=True)
        removed = order[kept:]  # the lowest frequencies
        return inv_freq.index_fill(0, removed, 0.0), attention_factor


@dataclass(frozen=True)
class HopeParams(RotaryParams):
    pass


@ENCODINGS.register("hope")
class Hope(Rotary):
    """HoPE, High-frequency rotary Position Encoding (Chen et al., ACL 2025, "HoPE: A Novel
    Positional Encoding Without Long-Term Decay for Enhanced Context Awareness and
    Extrapolation", arXiv 2410.21216, Sec. 4): RoPE keeping only the pairs whose
    rotation completes at least one whole period within the training length L
    (theta_i >= 2 pi / L); every lower-frequency pair is made position-independent (the
    identity rotation, theta = 0). The paper finds those low-frequency pairs, which turn
    through less than a period in training, are what forms the U-shaped attention and
    the shortcut that limits extrapolation. Unlike p-RoPE, the cut is set by L, not by a
    fraction: at L = 64 and head_dim 16, 3 of 8 pairs keep rotating.

    The pairs to zero are chosen on the unscaled frequencies, so a scaling changes the
    kept frequencies but never which pairs rotate. No reference code was found (no
    repository of the authors' could be had here); the cut at one whole period within L
    is the paper's rule as its description states it.
    Scale behaviour: as its scaling (none: extrapolates as it is)."""

    Params = HopeParams

    def frequencies(self, factor: float | None = None) -> Frequencies:
        inv_freq, attention_factor = super().frequencies(factor)
        unscaled, _ = super().frequencies(1.0)
        return inv_freq.masked_fill(~turns_a_whole_period(unscaled, self.dims.train_len), 0.0), attention_factor
