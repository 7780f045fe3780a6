"""AddRoPE: rotary phases added to the queries and keys instead of multiplied."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding
from suite.encodings.rotary import default_inv_freq


@dataclass(frozen=True)
class AddRopeParams:
    base: float = 10000.0  # RoPE's base for the frequencies theta_f
    weight_init: float | None = 1.0  # w at initialisation: the author's code sets ones; None: 1/sqrt(Dh)

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")


def additive_phasors(pos, inv_freq, weight, phase) -> torch.Tensor:
    """w * polar(1, theta_f * i + phi) as real vectors [H, T, Dh], half-split
    (real parts in the first half of the head dimensions, imaginary in the second).

    pos [T]; inv_freq [Dh/2]; weight, phase [H, Dh/2]. Angles in float64: at long
    lengths theta * i is large and float32 would lose the phase's low bits."""
    angles = pos.double()[None, :, None] * inv_freq.double()[None, None, :] + phase.double()[:, None, :]  # [H, T, Dh/2]
    w = weight[:, None, :]
    return torch.cat((w * angles.cos().to(w.dtype), w * angles.sin().to(w.dtype)), dim=-1)


@ENCODINGS.register("addrope")
class AddRope(PositionalEncoding):
    """Additive rotary embedding (Chang 2024, "Additive Rotary Embedding - A
    Competitive Alternative to RoPE", blog post; the author's code: cccntu/lingua,
    branch ``addrope``, commit af71c61, ``lingua/transformer.py``,
    ``AdditiveRotaryEmbedding`` and ``apply_additive_rotary_emb``): viewing each pair
    of head dimensions as a complex number,

        q_i <- q_i + w_q * polar(1, theta_f * i + phi_q),
        k_j <- k_j + w_k * polar(1, theta_f * j + phi_k),

    with theta_f = base^(-2f/Dh) and learnable weights w and phase offsets phi per
    layer (the reference builds one ``AdditiveRotaryEmbedding`` per block), head and
    frequency. q and k are only added to, never multiplied. The sinusoidal encoding
    is the special case w = 1, phi = 0 added once at the input.

    Initialisation, which the post does not state, is the reference's
    ``reset_parameters``: phi = 0 and w = 1 (``weight_init``). There the queries and
    keys start at about unit scale per component (lingua initialises wq with std
    dim^-0.5 after an RMSNorm); ours start near 0.02 sqrt(D) (0.16 at D = 64), so
    w = 1 weighs the phasors several times more at the start than in the reference.
    ``weight_init: null`` gives w = 1/sqrt(Dh) (phasor norm 1/sqrt(2) per head; this
    encoding's default before it followed the reference), kept as the spec
    ``addrope-small-init``. Convention: pairs are
    half-split (f, f + Dh/2) as in :mod:`suite.encodings.rotary`; the reference pairs
    adjacent dimensions (2f, 2f + 1) (``reshape(..., -1, 2)``), a fixed permutation of
    the head dimensions that the projections absorb; the golden test applies it
    explicitly. The reference computes the angles in float32 and asserts positions
    below its ``max_seqlen``; here they are float64 and unbounded. The encoding
    extrapolates as it is.
    """

    Params = AddRopeParams
    per_layer = True
    cacheable = True  # every hook of a token depends on its own position id alone

    def __init__(self, params: AddRopeParams, dims: ModelDims):
        super().__init__(params, dims)
        H, half = dims.n_heads, dims.head_dim // 2
        self.register_buffer("inv_freq", default_inv_freq(2 * half, params.base), persistent=False)  # float64
        w = params.weight_init if params.weight_init is not None else dims.head_dim ** -0.5
        self.weight_q = nn.Parameter(torch.full((H, half), w))
        self.weight_k = nn.Parameter(torch.full((H, half), w))
        self.phase_q = nn.Parameter(torch.zeros(H, half))
        self.phase_k = nn.Parameter(torch.zeros(H, half))

    def rotate(self, q, k, q_pos, k_pos):
        half = self.inv_freq.shape[0]
        add_q = additive_phasors(q_pos, self.inv_freq, self.weight_q, self.phase_q).to(q.dtype)  # [H, T, 2*half]
        add_k = additive_phasors(k_pos, self.inv_freq, self.weight_k, self.phase_k).to(k.dtype)
        q = torch.cat((q[..., : 2 * half] + add_q, q[..., 2 * half :]), dim=-1)  # odd Dh: the last dim is left alone
        k = torch.cat((k[..., : 2 * half] + add_k, k[..., 2 * half :]), dim=-1)
        return q, k
