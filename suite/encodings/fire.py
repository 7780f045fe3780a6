"""FIRE: functional interpolation of relative positions by a small learned MLP."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding

EPS = 1e-6  # keeps the normaliser away from 0, as in the paper's code


@dataclass(frozen=True)
class FireParams:
    mlp_width: int = 32  # the paper's hidden width
    init_c: float = 0.1  # the paper's initial c of psi(x) = log(c x + 1)
    init_threshold: float | None = None  # initial L; None: train_len / 4 (the paper's 512 at length 2048)

    def __post_init__(self):
        if self.mlp_width < 1:
            raise ValueError("mlp_width must be >= 1")
        if self.init_c <= 0:
            raise ValueError("init_c must be > 0")
        if self.init_threshold is not None and self.init_threshold <= 0:
            raise ValueError("init_threshold must be > 0")


def fire_psi(x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """psi(x) = log(|c x| + 1), the paper's log transform (|.| as in its code)."""
    return torch.log1p((c * x).abs())


def fire_normalized_distance(q_pos, k_pos, c, threshold) -> torch.Tensor:
    """psi(i - j) / psi(max(L, i)) [Tq, Tk]: distances progressively interpolated by the query position."""
    i = q_pos.to(c.dtype)
    distance = i[:, None] - k_pos.to(c.dtype)[None, :]  # [Tq, Tk]
    normaliser = fire_psi(torch.maximum(i, threshold), c) + EPS  # [Tq]
    return fire_psi(distance, c) / normaliser[:, None]


@ENCODINGS.register("fire")
class Fire(PositionalEncoding):
    """FIRE (Li et al. 2024, "Functional Interpolation for Relative Positions Improves
    Long Context Transformers", Sec. 3, the FIRE bias): an additive bias

        b(i, j) = f_theta( psi(i - j) / psi(max(L, i)) ),  psi(x) = log(c x + 1),

    where f_theta: R -> R^H is an MLP (1 -> ``mlp_width`` -> H, ReLU), c > 0 is
    learnable and the threshold L = |multiplier * L_0| is learnable through a
    multiplier initialised to 1, as in the PyTorch listing of the paper's appendix,
    eps = 1e-6 added to the normaliser included. The authors released no code; the
    golden reference is the FIRE of mcleish7/arithmetic (McLeish et al. 2024, commit
    86022a5), which follows that listing. Dividing by psi of the query position maps
    every distance into [0, 1], which is how FIRE generalizes to longer contexts; the
    bias is therefore not translation invariant once i > L. Every layer has its own
    FIRE; the MLP is built from bare parameters with PyTorch's default Linear init, so
    the model's own init does not touch it.
    The encoding extrapolates as it is (the normalisation is its length handling).
    """

    Params = FireParams
    per_layer = True
    cacheable = True  # b(i, j) depends on i and j alone (the normaliser on the query's i)

    def __init__(self, params: FireParams, dims: ModelDims):
        super().__init__(params, dims)
        width, H = params.mlp_width, dims.n_heads
        self.w1 = nn.Parameter(torch.empty(width, 1).uniform_(-1.0, 1.0))  # fan_in 1: U(-1, 1)
        self.b1 = nn.Parameter(torch.empty(width).uniform_(-1.0, 1.0))
        bound = 1 / math.sqrt(width)
        self.w2 = nn.Parameter(torch.empty(H, width).uniform_(-bound, bound))
        self.b2 = nn.Parameter(torch.empty(H).uniform_(-bound, bound))
        self.c = nn.Parameter(torch.tensor(params.init_c))
        self.threshold_multiplier = nn.Parameter(torch.tensor(1.0))
        init_threshold = params.init_threshold or dims.train_len / 4
        self.register_buffer("init_threshold", torch.tensor(float(init_threshold)), persistent=False)

    def threshold(self) -> torch.Tensor:
        return (self.threshold_multiplier * self.init_threshold).abs()

    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        """f_theta: [..., 1] -> [..., H]."""
        return F.linear(F.relu(F.linear(x, self.w1, self.b1)), self.w2, self.b2)

    def bias(self, q_pos, k_pos):
        u = fire_normalized_distance(q_pos, k_pos, self.c, self.threshold())  # [Tq, Tk]
        return self.mlp(u[..., None]).permute(2, 0, 1)  # [Tq, Tk, H] -> [H, Tq, Tk]
