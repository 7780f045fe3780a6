"""Encodings without learnable parts: NoPE, sinusoidal, ALiBi, Sandwich."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import torch
import torch.nn.functional as F

from suite.encodings.base import ENCODINGS, ModelDims, NoParams, PositionalEncoding, toeplitz_bias


@ENCODINGS.register("none")
class NoPE(PositionalEncoding):
    """No positional encoding: the causal mask is the only source of order.

    Kazemnejad et al. 2023, "The Impact of Positional Encoding on Length
    Generalization in Transformers": a causal decoder can infer positions without
    any encoding. Every hook keeps its do-nothing default.
    """

    cacheable = True  # nothing depends on positions at all


@dataclass(frozen=True)
class SinusoidalParams:
    base: float = 10000.0  # the wavelength base of Vaswani et al.
    convention: Literal["paper", "tensor2tensor"] = "paper"  # see sinusoidal_table
    # What the token embeddings are multiplied by before the table is added: "sqrt_d", the
    # paper's sqrt(d_model) (Sec. 3.4); "unit", 1 / (their initial std), so they start at unit
    # std whatever the size's init, as the paper's sqrt(d) does for its N(0, 1/d) embedding.
    # not hashed at its default: the runs published before it existed keep their ids
    token_scale: Literal["sqrt_d", "unit"] = field(default="sqrt_d", metadata={"hash_default": False})

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")


def sinusoidal_table(pos: torch.Tensor, dim: int, base: float, convention: str = "paper") -> torch.Tensor:
    """[T, dim] float32 table of absolute positions, in one of two conventions:

    * ``paper``: Vaswani et al. 2017, Sec. 3.5, PE(p, 2i) = sin(p / base^(2i/d)),
      PE(p, 2i+1) = cos(p / base^(2i/d)): interleaved, as transformers'
      ``_create_sinusoidal_embeddings`` (DistilBERT) writes it.
    * ``tensor2tensor``: the code the paper's experiments ran (tensor2tensor's
      ``get_timing_signal_1d``, and fairseq's ``get_embedding``, which copies it): all the
      sines, then all the cosines, with inverse frequencies base^(-i / (d/2 - 1)), so
      the longest wavelength is exactly 2 pi base.

    Computed in float64, so long positions keep their phase.
    """
    pos = pos.to(torch.float64)[:, None]
    if convention == "paper":
        inv_freq = base ** (-torch.arange(0, dim, 2, dtype=torch.float64, device=pos.device) / dim)  # [ceil(d/2)]
        angles = pos * inv_freq[None, :]
        return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)[:, :dim].to(torch.float32)  # interleaved
    half = dim // 2
    inv_freq = base ** (-torch.arange(half, dtype=torch.float64, device=pos.device) / max(half - 1, 1))  # [d/2]
    angles = pos * inv_freq[None, :]
    table = torch.cat((angles.sin(), angles.cos()), dim=-1)  # [T, 2 (d/2)]: the sines, then the cosines
    return F.pad(table, (0, dim - 2 * half)).to(torch.float32)  # an odd d gets a zero last column, as fairseq's


@ENCODINGS.register("sinusoidal")
class Sinusoidal(PositionalEncoding):
    """Fixed sinusoidal absolute positions (Vaswani et al. 2017, "Attention Is All You
    Need", Sec. 3.5), added to the token embeddings, which are first multiplied by
    sqrt(d_model) as in the paper (Sec. 3.4) so the two have comparable scale.

    By default the paper's formula (interleaved sin/cos, exponent 2i/d), checked against
    transformers' ``_create_sinusoidal_embeddings``; ``convention: tensor2tensor`` is the
    layout of the authors' tensor2tensor code (spec ``sinusoidal-t2t``), checked against
    fairseq's copy of it. For a model trained from scratch the two layouts differ by a
    fixed permutation of the model dimensions, which an i.i.d. initialisation cannot
    see; what differs is the frequency spacing.

    The sqrt(d) factor assumes the authors' initialisation: tensor2tensor and fairseq start
    the token embedding at N(0, 1/d), so the scaled tokens have unit std beside a table of
    std 1/sqrt(2). Under PyTorch's own N(0, 1) embedding (``init: pytorch``) the same factor
    makes the tokens sqrt(d) = 8 times the table at width 64, and the positions all but
    vanish. ``token_scale: unit`` keeps the paper's ratio under any init: it multiplies by
    1 / (the embedding's initial std), which is sqrt(d) for the authors' N(0, 1/d), 1 for
    PyTorch's and 50 for GPT-2's 0.02 (spec ``sinusoidal-unit``; docs/concepts/tasks.md, "Task recipes and learning curves")."""

    Params = SinusoidalParams
    cacheable = True  # every hook of a token depends on its own position id alone
    continuous_positions = True  # the table is sin/cos of the id: any real id has one (CAPE)

    def embed(self, x, pos):
        table = sinusoidal_table(pos, self.dims.d_model, self.params.base, self.params.convention).to(x.dtype)  # [T, D]
        scale = math.sqrt(self.dims.d_model) if self.params.token_scale == "sqrt_d" else 1 / self.dims.token_embedding_std
        return x * scale + table


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


@ENCODINGS.register("alibi")
class ALiBi(PositionalEncoding):
    """Attention with linear biases (Press et al. 2022, Eq. in Sec. 3):
    softmax(q_i K^T + m * [-(i-1), ..., -1, 0]), one slope m per head, no position
    embeddings. The bias -m (i - j) depends only on i - j, so it is shared by all
    layers and computed once per forward.

    Checked against the authors' fairseq code (ofirpress/attention_with_linear_biases,
    commit 4b92f28: ``get_slopes`` and ``buffered_future_mask``), which adds m * j, the
    same in every row, to the causal mask: softmax cannot tell the two apart (they differ
    by m * i along each row), and -m (i - j) is 0 on the diagonal, so the keys near the
    query, which carry the attention, keep their precision in bfloat16 at any length."""

    Params = NoParams
    cacheable = True  # the bias of a (query, key) pair depends on their ids alone

    def __init__(self, params, dims: ModelDims):
        super().__init__(params, dims)
        self.register_buffer("slopes", alibi_slopes(dims.n_heads), persistent=False)

    def relative_bias(self, distance):  # [V] -> [H, V]
        return -self.slopes[:, None] * distance.to(self.slopes.dtype)[None, :]

    def bias(self, q_pos, k_pos):
        return toeplitz_bias(self.relative_bias, q_pos, k_pos)  # [H, Tq, Tk]


@dataclass(frozen=True)
class SandwichParams:
    dim: int | None = None  # d', the dimension of the sinusoidal embeddings; None: the head dimension, as NeMo
    base: float = 10000.0  # the sinusoidal wavelength base

    def __post_init__(self):
        if self.dim is not None and (self.dim < 2 or self.dim % 2):
            raise ValueError("dim must be an even number >= 2")
        if self.base <= 1:
            raise ValueError("base must be > 1")


def sandwich_kernel(distance: torch.Tensor, dim: int, base: float) -> torch.Tensor:
    """p_m . p_n - d'/2 = sum_{i=1}^{d'/2} cos((m - n) / base^(2i/d')) - d'/2.

    The inner product of two sinusoidal embeddings depends on m - n only; shifted by
    d'/2 it is 0 at distance 0 and < 0 elsewhere. The frequencies are i = 1 .. d'/2
    (1-based, so base^-1 is the lowest and 1 is not among them), as NeMo computes them.
    Evaluated once per distinct distance, in float64."""
    values, inverse = torch.unique(distance, return_inverse=True)
    i = torch.arange(1, dim // 2 + 1, dtype=torch.float64, device=distance.device)
    inv_freq = base ** (-2 * i / dim)  # [d'/2]
    kernel = torch.cos(values.to(torch.float64)[:, None] * inv_freq[None, :]).sum(-1) - dim / 2  # [U]
    return kernel[inverse].float()


@ENCODINGS.register("sandwich")
class Sandwich(PositionalEncoding):
    """Sandwich (Chi et al. 2023, "Dissecting Transformer Length Extrapolation via the
    Lens of Receptive Field Analysis", its Sandwich): the vanilla sinusoidal encoding with
    the cross terms of (x + p)^T W_q^T W_k (x + p) dropped and only p_m . p_n kept, as
    a parameter-free bias on the logits, divided per head by ALiBi-style compression
    ratios 8h/H (h = 1 .. H):

        b_h(m, n) = (sum_{i=1}^{d'/2} cos((m - n) / base^(2i/d')) - d'/2) / (8h / H).

    The authors released no code; this is NVIDIA NeMo's
    ``SandwichRelativePositionEmbedding`` (commit 8cfedd7, the golden reference), which
    sums i = 1 .. d'/2 and takes d' = the head dimension. The paper makes d' a
    hyperparameter of its own; ``dim`` sets it (spec ``sandwich-d128``: d' = 128). The
    bias depends on m - n only, so it is shared by all layers and the encoding
    extrapolates as it is.
    """

    Params = SandwichParams
    cacheable = True  # the bias of a (query, key) pair depends on their ids alone

    def __init__(self, params: SandwichParams, dims: ModelDims):
        super().__init__(params, dims)
        self.dim = params.dim or dims.head_dim
        if self.dim % 2:
            raise ValueError(f"sandwich: d' = {self.dim} (the head dimension) must be even; set params.dim")
        ratios = 8 * torch.arange(1, dims.n_heads + 1, dtype=torch.float32) / dims.n_heads  # [H]
        self.register_buffer("ratios", ratios, persistent=False)

    def relative_bias(self, distance):  # [V] -> [H, V]
        return sandwich_kernel(distance, self.dim, self.params.base)[None, :] / self.ratios[:, None]

    def bias(self, q_pos, k_pos):
        return toeplitz_bias(self.relative_bias, q_pos, k_pos)  # [H, Tq, Tk]
