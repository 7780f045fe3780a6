"""KERPLE: kernelized relative positional biases with learnable shape."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from .base import ModelDims, PositionalEncoding, toeplitz_bias

EPS = 1e-2  # the floor of r1 and r2, as in the authors' code


@dataclass(frozen=True)
class KerpleParams:
    kernel: Literal["log", "power"] = "log"


def kerple_log_bias(distance: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor) -> torch.Tensor:
    """KERPLE's logarithmic variant: -r1 log(1 + r2 |m - n|)."""
    return -r1 * torch.log1p(r2 * distance.abs())


def kerple_power_bias(distance: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor) -> torch.Tensor:
    """KERPLE's power variant: -r1 |m - n|^r2 (0 < r2 <= 2).

    Written so that d/dr2 of 0^r2 is 0 rather than 0 * log(0) = nan."""
    d = distance.abs().to(r2.dtype)
    return -r1 * torch.where(d > 0, d.clamp(min=1) ** r2, torch.zeros_like(d))


def clamp_straight_through(x: torch.Tensor, low: float, high: float | None = None) -> torch.Tensor:
    """The value of clamp(x), the gradient of x: the constraint holds in every forward
    while a parameter that left the box still gets the gradient that brings it back
    (the authors clamp ``param.data`` in place before each forward, to the same effect)."""
    return x + (x.clamp(low, high) - x).detach()


class Kerple(PositionalEncoding):
    """KERPLE (Chi et al. 2022, "KERPLE: Kernelized Relative Positional Embedding for
    Length Extrapolation", its power and logarithmic kernels, in the exact
    form of the authors' ``ParallelKerplePower``/``ParallelKerpleLog``): a
    conditionally positive definite kernel of the distance, added to the logits, with
    per-head learnable r1, r2 > 0:

    * ``kernel: log``:   b(m, n) = -r1 log(1 + r2 |m - n|)
    * ``kernel: power``: b(m, n) = -r1 |m - n|^r2, with r2 <= 2

    Every layer has its own parameters (as in the authors' GPT-NeoX code). The
    constraints are kept by a straight-through clamp at eps = 0.01 (see
    :func:`clamp_straight_through`); initialisation follows the authors' code:
    uniform in (0, 2) for the log kernel's r1 and the power kernel's exponent r2,
    uniform in (0, 1) for the other, floored at eps. The bias depends on m - n only, so the encoding
    extrapolates as it is.
    """

    Params = KerpleParams
    per_layer = True

    def __init__(self, params: KerpleParams, dims: ModelDims):
        super().__init__(params, dims)
        r1_scale, r2_scale = (2.0, 1.0) if params.kernel == "log" else (1.0, 2.0)
        self.r1 = nn.Parameter((torch.rand(dims.n_heads) * r1_scale).clamp(min=EPS))  # [H]
        self.r2 = nn.Parameter((torch.rand(dims.n_heads) * r2_scale).clamp(EPS, 2.0))  # [H]

    def bias(self, q_pos, k_pos):
        r1 = clamp_straight_through(self.r1, EPS)[:, None]  # [H, 1]
        if self.params.kernel == "log":
            r2 = clamp_straight_through(self.r2, EPS)[:, None]
            kernel = kerple_log_bias
        else:
            r2 = clamp_straight_through(self.r2, EPS, 2.0)[:, None]
            kernel = kerple_power_bias
        # the kernel depends on m - n only: once per distinct distance, then gathered
        return toeplitz_bias(lambda d: kernel(d.to(self.r1.dtype)[None, :], r1, r2), q_pos, k_pos)  # [H, Tq, Tk]
