"""Encodings without learnable parts: NoPE, sinusoidal, ALiBi, Sandwich."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .base import ModelDims, NoParams, PositionalEncoding, toeplitz_bias


class NoPE(PositionalEncoding):
    """No positional encoding: the causal mask is the only source of order.

    Kazemnejad et al. 2023, "The Impact of Positional Encoding on Length
    Generalization in Transformers": a causal decoder can infer positions without
    any encoding. Every hook keeps its do-nothing default.
    """


@dataclass(frozen=True)
class SinusoidalParams:
    base: float = 10000.0  # the wavelength base of Vaswani et al.

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")


def sinusoidal_table(pos: torch.Tensor, dim: int, base: float) -> torch.Tensor:
    """Vaswani et al. 2017, Sec. 3.5: PE(p, 2i) = sin(p / base^(2i/d)), PE(p, 2i+1) = cos(...).

    Interleaved sin/cos, exactly the paper's layout. Returns [T, dim] in float32.
    """
    inv_freq = base ** (-torch.arange(0, dim, 2, dtype=torch.float64, device=pos.device) / dim)
    angles = pos.to(torch.float64)[:, None] * inv_freq[None, :]  # [T, dim/2]
    table = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)  # [T, dim] interleaved
    return table[:, :dim].to(torch.float32)


class Sinusoidal(PositionalEncoding):
    """Fixed sinusoidal absolute positions (Vaswani et al. 2017, "Attention Is All You
    Need", Sec. 3.5), added to the token embeddings, which are first multiplied by
    sqrt(d_model) as in the paper (Sec. 3.4) so the two have comparable scale."""

    Params = SinusoidalParams

    def embed(self, x, pos):
        table = sinusoidal_table(pos, self.dims.d_model, self.params.base).to(x.dtype)  # [T, D]
        return x * math.sqrt(self.dims.d_model) + table


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """Press et al. 2022, "Train Short, Test Long" (ALiBi), Sec. 3 and their code.

    For n a power of two the slopes are the geometric sequence 2^(-8/n), 2^(-16/n),
    ..., 2^(-8). Otherwise the paper takes the slopes of the closest smaller power of
    two, 2^floor(log2 n), and fills the rest with every other slope of the sequence
    for twice that power.
    """

    def power_of_two_slopes(n: int) -> list[float]:
        start = 2 ** (-8 / n)
        return [start ** (i + 1) for i in range(n)]

    if n_heads & (n_heads - 1) == 0:
        slopes = power_of_two_slopes(n_heads)
    else:
        closest = 2 ** math.floor(math.log2(n_heads))
        slopes = power_of_two_slopes(closest) + power_of_two_slopes(2 * closest)[0::2][: n_heads - closest]
    return torch.tensor(slopes, dtype=torch.float32)


class ALiBi(PositionalEncoding):
    """Attention with linear biases (Press et al. 2022, Eq. in Sec. 3):
    softmax(q_i K^T + m * [-(i-1), ..., -1, 0]), one slope m per head, no position
    embeddings. The bias -m (i - j) depends only on i - j, so it is shared by all
    layers and computed once per forward."""

    Params = NoParams

    def __init__(self, params, dims: ModelDims):
        super().__init__(params, dims)
        self.register_buffer("slopes", alibi_slopes(dims.n_heads), persistent=False)

    def bias(self, q_pos, k_pos):
        distance = (q_pos[:, None] - k_pos[None, :]).to(self.slopes.dtype)  # [Tq, Tk]
        return -self.slopes[:, None, None] * distance  # [H, Tq, Tk]


@dataclass(frozen=True)
class SandwichParams:
    dim: int = 128  # d', the dimension of the sinusoidal embeddings whose inner product is the bias
    base: float = 10000.0  # the sinusoidal wavelength base

    def __post_init__(self):
        if self.dim < 2 or self.dim % 2:
            raise ValueError("dim must be an even number >= 2")
        if self.base <= 1:
            raise ValueError("base must be > 1")


def sandwich_kernel(distance: torch.Tensor, dim: int, base: float) -> torch.Tensor:
    """p_m . p_n - d'/2 = sum_i cos((m - n) theta_i) - d'/2, theta_i = base^(-2i/d'), i < d'/2.

    The inner product of two sinusoidal embeddings depends on m - n only; shifted by
    d'/2 it is 0 at distance 0 and <= 0 elsewhere. Evaluated once per distinct
    distance (float64), not per query-key pair."""
    values, inverse = torch.unique(distance, return_inverse=True)
    inv_freq = base ** (-torch.arange(0, dim, 2, dtype=torch.float64, device=distance.device) / dim)  # [d'/2]
    kernel = torch.cos(values.to(torch.float64)[:, None] * inv_freq[None, :]).sum(-1) - dim / 2  # [U]
    return kernel[inverse].float()


class Sandwich(PositionalEncoding):
    """Sandwich (Chi et al. 2023, "Dissecting Transformer Length Extrapolation via the
    Lens of Receptive Field Analysis", its Sandwich): the vanilla sinusoidal encoding with
    the cross terms of (x + p)^T W_q^T W_k (x + p) dropped and only p_m . p_n kept, as
    a parameter-free bias on the logits, divided per head by ALiBi-style compression
    ratios 8h/H (h = 1 .. H):

        b_h(m, n) = (sum_{i < d'/2} cos((m - n) theta_i) - d'/2) / (8h / H).

    Convention: the d'/2 frequencies are Vaswani's, theta_i = base^(-2i/d') from
    i = 0. The bias depends on m - n only, so it is shared by all layers and the
    encoding extrapolates as it is.
    """

    Params = SandwichParams

    def __init__(self, params: SandwichParams, dims: ModelDims):
        super().__init__(params, dims)
        ratios = 8 * torch.arange(1, dims.n_heads + 1, dtype=torch.float32) / dims.n_heads  # [H]
        self.register_buffer("ratios", ratios, persistent=False)

    def bias(self, q_pos, k_pos):
        def per_distance(d):  # [V] -> [H, V]
            return sandwich_kernel(d, self.params.dim, self.params.base)[None, :] / self.ratios[:, None]

        return toeplitz_bias(per_distance, q_pos, k_pos)  # [H, Tq, Tk]
