"""KERPLE: kernelized relative positional biases with learnable shape."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding, toeplitz_bias

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


@ENCODINGS.register("kerple")
class Kerple(PositionalEncoding):
    """KERPLE (Chi et al. 2022, "KERPLE: Kernelized Relative Positional Embedding for
    Length Extrapolation", its power and logarithmic kernels), in the exact form of
    the authors' ``ParallelKerplePower``/``ParallelKerpleLog`` (chijames/KERPLE
    ``megatron/mpu/layers.py``, commit 25be3d7): a conditionally positive definite kernel of
    the distance, added to the logits after their 1/sqrt(Dh) scaling, with per-head
    learnable r1, r2:

    * ``kernel: log``:   b(m, n) = -r1 log(1 + r2 |m - n|)   (their bias_p, bias_a)
    * ``kernel: power``: b(m, n) = -r1 |m - n|^r2, r2 <= 2   (their bias_a, bias_p)

    One instance is shared by all layers, as in the authors' ``GPT2ModelPipe``
    (``megatron/model/gpt2_model.py``), which builds one ``rpe_emb`` before the layer loop
    and hands it to every layer; so the bias is computed once per forward. The
    constraints r1, r2 >= eps = 0.01 (and r2 <= 2) are kept as the authors keep them: each
    forward first clamps the parameters themselves in place, so a parameter that an
    optimizer step pushed out of the box restarts from its bound. Initialisation follows
    their code: uniform in (0, 2) for the log kernel's r1 and the power kernel's exponent
    r2, uniform in (0, 1) for the other (their forward clamps before first use, as here).
    The bias depends on m - n only, so the encoding extrapolates as it is.
    """

    Params = KerpleParams
    cacheable = True  # the bias of a (query, key) pair depends on their ids alone

    def __init__(self, params: KerpleParams, dims: ModelDims):
        super().__init__(params, dims)
        r1_scale, r2_scale = (2.0, 1.0) if params.kernel == "log" else (1.0, 2.0)
        self.r1 = nn.Parameter(torch.rand(dims.n_heads) * r1_scale)  # [H]
        self.r2 = nn.Parameter(torch.rand(dims.n_heads) * r2_scale)  # [H]

    def project(self) -> None:
        """Clamp r1, r2 into their box in place, as the authors' forward does (``param.data.clamp``).

        Through ``.data``, as theirs: that leaves the parameters' autograd version alone. The
        FlexAttention path asks for the bias once per layer (the float-mask path once per
        forward), so a clamp that bumped the version would break the backward of the layers
        before it: on an H200, the power kernel's r2, saved by ``pow``, stopped its training
        ("modified by an inplace operation"). After a forward's first clamp the later ones
        change no value, so every layer sees the same r1, r2."""
        self.r1.data.clamp_(min=EPS)
        self.r2.data.clamp_(EPS, 2.0 if self.params.kernel == "power" else None)

    def relative_bias(self, distance):  # [V] -> [H, V]
        self.project()
        kernel = kerple_log_bias if self.params.kernel == "log" else kerple_power_bias
        return kernel(distance.to(self.r1.dtype)[None, :], self.r1[:, None], self.r2[:, None])

    def bias(self, q_pos, k_pos):
        # the kernel depends on m - n only: once per distinct distance, then gathered
        return toeplitz_bias(self.relative_bias, q_pos, k_pos)  # [H, Tq, Tk]
