"""FoPE: Fourier position embedding, RoPE with each dimension a Fourier series."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding
from suite.encodings.rotary import turns_a_whole_period


@dataclass(frozen=True)
class FopeParams:
    base: float = 10000.0  # RoPE's base for the frequencies the series are built on
    init_gain: float = 0.3  # fourier_init_norm_gain: the xavier-normal gain of the off-diagonal coefficients
    learnable: bool = False  # fourier_learnable: the coefficients are fixed at their random init by default

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")
        if self.init_gain < 0:
            raise ValueError(f"init_gain must be >= 0, got {self.init_gain}")


def fope_inv_freq(head_dim: int, base: float, train_len: int) -> torch.Tensor:
    """RoPE's frequencies with the under-trained ones removed: those below 2 pi / L (a
    period longer than the training length) are clamped to zero and dropped
    (``rope_clamp_floor_freq``, ``rope_clamp_floor_to_zero``, ``fourier_ignore_zero``)."""
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float, device="cpu") / head_dim))
    # selected on the CPU, by value (a model built on the meta device has no values to select by)
    return inv_freq[turns_a_whole_period(inv_freq, train_len)]


@ENCODINGS.register("fope")
class Fope(PositionalEncoding):
    """FoPE (Hua et al. 2024, "Fourier Position Embedding: Enhancing Attention's Periodic
    Extension for Length Generalization", Sec. 4, Eqs. 8-10), as the authors' OLMo code
    runs it (TsinghuaC3I/Fourier-Position-Embedding@bd94b20, ``FourierEmbedding`` with the
    paper's config: floor frequencies clamped to zero and ignored, separate sine and cosine
    bases per head, ``eye_xavier_norm`` init with gain 0.3, not learnable).

    Each rotary dimension is a Fourier series over the kept frequencies instead of one
    frequency: with the kept frequencies omega [D'] (RoPE's, minus those whose period
    exceeds L), the angle tables sin(t omega), cos(t omega) [T, D'] are mixed per head by
    coefficient matrices [H, D', d] (d = min(D', Dh/4)): ``sin_coef`` and ``cos_coef``,
    each the identity (or a strided one) plus xavier-normal noise, so each output
    dimension carries its own frequency plus a little of the others. The d series are
    padded to Dh/2 with ones (the authors' ``F.pad(..., value=1)``, for the dimensions whose
    frequency was dropped) and applied as RoPE applies cos and sin (half-split pairs).
    The coefficients differ per layer (the authors build one per attention block), so
    the encoding is per layer; they are fixed buffers (saved with the checkpoint) unless
    ``learnable``.
    Scale behaviour: extrapolates as it is.
    """

    Params = FopeParams
    per_layer = True  # the authors' blocks each hold their own coefficients

    def __init__(self, params: FopeParams, dims: ModelDims):
        super().__init__(params, dims)
        inv_freq = fope_inv_freq(dims.head_dim, params.base, dims.train_len)
        self.register_buffer("inv_freq", torch.tensor(inv_freq.tolist()), persistent=False)
        n_in = len(inv_freq)
        if n_in == 0:
            raise ValueError(f"fope: no RoPE frequency of head dim {dims.head_dim} completes a period within "
                             f"the training length {dims.train_len}")
        self.output_dim = min(n_in, dims.head_dim // 4)
        size = (dims.n_heads, n_in, self.output_dim)
        for name in ("sin_coef", "cos_coef"):
            coef = nn.init.xavier_normal_(torch.empty(size), gain=params.init_gain) + step_eye(n_in, self.output_dim)
            if params.learnable:
                self.register_parameter(name, nn.Parameter(coef))
            else:  # fixed, as the authors' default; saved with the checkpoint (they are random)
                self.register_buffer(name, coef)

    def rotate(self, q, k, q_pos, k_pos):
        return self.apply_series(q, q_pos), self.apply_series(k, k_pos)

    def apply_series(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """x [B, H, T, Dh] at position ids pos [T]."""
        angles = pos.to(torch.float)[:, None] * self.inv_freq[None, :]  # [T, D']
        half = x.shape[-1] // 2
        tables = []
        for table, coef in ((angles.sin(), self.sin_coef), (angles.cos(), self.cos_coef)):
            series = torch.einsum("tD,hDd->htd", table, coef)  # [H, T, d]
            series = F.pad(series, (0, half - series.shape[-1]), value=1.0)  # [H, T, Dh/2]
            tables.append(torch.cat((series, series), dim=-1).to(x.dtype))  # [H, T, Dh]
        sin, cos = tables
        x1, x2 = x[..., :half], x[..., half:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    @property
    def cacheable(self) -> bool:
        return True  # each token's rotation depends on its own id alone


def step_eye(n_in: int, n_out: int) -> torch.Tensor:
    """The identity when square, else ones at (i x ceil(n_in / n_out), i): the authors' ``get_step_eye``."""
    eye = torch.zeros(n_in, n_out)
    step = math.ceil(n_in / n_out)
    for i in range(n_out):
        if i * step < n_in:
            eye[i * step, i] = 1.0
    return eye
