"""RoPE with learned per-head frequencies: the 1-D restriction of RoPE-Mixed.

Heo et al. 2024, "Rotary Position Embedding for Vision Transformer" (ECCV 2024, arXiv
2403.13298), Sec. 3.3, RoPE-Mixed: every layer learns a frequency per head h and rotated pair i
for each image axis, and token n at (t_x(n), t_y(n)) turns pair i of head h by

    angle(h, i, n) = t_x(n) f_x[h, i] + t_y(n) f_y[h, i].

A sequence is an image of one row: t_x(n) = n, t_y(n) = 0, so f_y drops out and each layer's
head h turns pair i by n f[h, i], RoPE's rotation (Su et al. 2021, Eq. 34) with frequencies
learned per layer, head and pair. q_m . k_n still depends on m - n alone.

What follows the authors' code (naver-ai/rope-vit@ce85c2e, ``models/vit_rope.py``:
``rope_vit_models`` with ``rope_mixed=True``, ``compute_mixed_cis``, ``apply_rotary_emb``):

* the parameter is the frequency itself (no log or other reparametrisation), one row
  [H * d/2] per layer (their ``freqs`` [2, depth, H * d/2], head-major: head h's pairs are
  ``h * d/2 .. (h + 1) * d/2 - 1``);
* it takes no weight decay (their ``no_weight_decay`` returns ``freqs``): held flat, one
  dimension, which the trainer's rule leaves undecayed (suite/training/module.py decays
  weights of two dimensions and more);
* the angles are computed outside reduced precision (their ``autocast(enabled=False)``, in
  float32): here in float64, as PosBench's RoPE tables.

What does not:

* initialisation: theirs is 2-D (``init_random_2d_freqs``: magnitudes 10^(-4j/d) for j < d/4,
  each head's pair directions turned by a random angle). Here every head of every layer
  starts at RoPE's own spectrum f[h, i] = base^(-2i/d), base 10000, so at the start the
  model is RoPE (``rope``), up to the float32 rounding of the frequencies (relative 6e-8),
  and learns away from it.
* pairing: theirs turns adjacent dimensions (2i, 2i + 1) (``view_as_complex`` of
  ``reshape(..., -1, 2)``); ours turns half-split pairs (i, i + d/2), as PosBench's ``rope``,
  so that the model at initialisation is ``rope``'s with the same weights. The two differ by
  a fixed permutation of each head's query and key dimensions, which W_q and W_k absorb
  (tests/encodings/test_rope_mixed.py checks it against their functions through that
  permutation).

Each layer has its own instance (``per_layer``). A token's rotation depends on its own
position id alone, so a key/value cache is exact, and the rotation takes real-valued ids.
Scale behaviour: extrapolates as it is (positions past the training length are turned by
the learned frequencies, nothing is adjusted).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding
from suite.encodings.rotary import default_inv_freq, rotate_half_split


@dataclass(frozen=True)
class RopeMixedParams:
    base: float = 10000.0  # RoPE's base: every head of every layer starts at base^(-2i/d)

    def __post_init__(self):
        if not self.base > 1:
            raise ValueError(f"base must be > 1, got {self.base}")


def mixed_angles(pos: torch.Tensor, freqs: torch.Tensor, n_heads: int) -> torch.Tensor:
    """t(n) f[h, i] [H, T, d/2] in float64 of position ids ``pos`` [T] and one layer's frequencies
    ``freqs`` [H * d/2] (head-major, as the authors' row of ``freqs``): their compute_mixed_cis
    with t_y = 0."""
    return pos.to(torch.float64)[:, None] * freqs.to(torch.float64).view(n_heads, 1, -1)


@ENCODINGS.register("rope_mixed")
class RopeMixed(PositionalEncoding):
    """RoPE whose frequencies each layer learns per head and pair (module docstring)."""

    Params = RopeMixedParams
    per_layer = True  # one row of the authors' freqs per layer
    cacheable = True  # a token's rotation depends on its own position id alone
    continuous_positions = True  # the angle t f takes any real t

    def __init__(self, params: RopeMixedParams, dims: ModelDims):
        super().__init__(params, dims)
        if dims.head_dim % 2:
            raise ValueError(f"rope_mixed rotates pairs of dimensions: head_dim must be even, got {dims.head_dim}")
        spectrum = default_inv_freq(dims.head_dim, params.base).float()  # [d/2]: RoPE's frequencies
        # flat [H * d/2]: one dimension, so the trainer does not decay it (the authors' no_weight_decay)
        self.freqs = nn.Parameter(spectrum.repeat(dims.n_heads))

    def no_weight_decay(self) -> frozenset[str]:
        return frozenset({"freqs"})  # the authors' no_weight_decay; flat, so the trainer's rule agrees

    def turn(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """x [..., H, T, d] with each head's pairs (i, i + d/2) turned by the angles of ``pos`` [T]."""
        angles = mixed_angles(pos, self.freqs, self.dims.n_heads)  # [H, T, d/2]
        return rotate_half_split(x, angles.cos().to(x.dtype), angles.sin().to(x.dtype))

    def rotate(self, q, k, q_pos, k_pos):
        if q_pos is k_pos and q.shape == k.shape:  # self-attention: one set of angles, one rotation of both
            qk = self.turn(torch.stack((q, k)), q_pos)
            return qk[0], qk[1]
        return self.turn(q, q_pos), self.turn(k, k_pos)
