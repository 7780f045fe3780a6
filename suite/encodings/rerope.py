"""ReRoPE and leaky ReRoPE: RoPE with relative positions capped beyond a window."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding, ScaleBehaviour
from suite.encodings.rotary import Rotary, RotaryParams, default_inv_freq, rotate_half_split


@dataclass(frozen=True)
class ReropeParams:
    base: float = 10000.0  # RoPE's base
    window: int | None = None  # w: exact RoPE for distances below it; None: train_len // 2
    leaky_k: float | None = None  # None: ReRoPE (distance w beyond the window); k > 1: leaky, slope 1/k
    train_as: Literal["rope", "rerope"] = "rope"  # "rope": Su's protocol, ReRoPE only at evaluation
    logn: bool = True  # queries past the training length scaled by log(n+1)/log(L), as both of Su's patches do

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")
        if self.window is not None and self.window < 1:
            raise ValueError("window must be >= 1")
        if self.leaky_k is not None and self.leaky_k <= 1:
            raise ValueError("leaky_k must be > 1 (k = 1 is plain RoPE)")


def logn_scale(pos: torch.Tensor, train_len: int) -> torch.Tensor:
    """max(1, log(n + 1) / log(L)) per query position n [T] (float64): 1 inside the
    training length, growing slowly past it (bojone/rerope's ``query_states *= ...``)."""
    return ((pos.to(torch.float64) + 1).log() / math.log(train_len)).clamp(min=1)


def rotate_by(x: torch.Tensor, shift: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    """Rotate x [B, H, T, Dh] by the (possibly fractional) positions ``shift`` [T]."""
    angles = shift.to(torch.float64)[:, None] * inv_freq[None, :]  # [T, Dh/2]
    return rotate_half_split(x, angles.cos().to(x.dtype), angles.sin().to(x.dtype))


def far_logits_replaced(q, k, scores, q_pos, k_pos, q_target, k_target, window: int, inv_freq):
    """``scores`` with the logits at distances >= ``window`` replaced by those of q and k
    re-rotated to the (possibly fractional) positions ``q_target`` [Tq] and ``k_target``
    [Tk]: q and k arrive rotated to their own positions, and a rotation composes, so each
    is rotated on by the difference. ReRoPE and Self-Extend differ only in the targets."""
    q_far = rotate_by(q, q_target - q_pos.double(), inv_freq)
    k_far = rotate_by(k, k_target - k_pos.double(), inv_freq)
    far_logits = (q_far @ k_far.transpose(-2, -1)) / math.sqrt(q.shape[-1])  # [B, H, Tq, Tk]
    far = (q_pos[:, None] - k_pos[None, :]) >= window  # [Tq, Tk]; never a future key: positions increase
    return torch.where(far, far_logits, scores)


@ENCODINGS.register("rerope")
class Rerope(PositionalEncoding):
    """ReRoPE (Su 2023, "Rectified Rotary Position Embeddings", kexue.fm/archives/9708;
    reference code bojone/rerope@acfe788, ``rerope_patch.py`` and
    ``leaky_rerope_patch.py``, patches of transformers 4.31.0's Llama attention):
    attention logits use RoPE's relative position i - j while it is below the window
    w, and the constant w beyond it, and queries past the training length L are
    scaled by log(n + 1) / log(L) ("logn"):

        logit(i, j) = lambda(n_i) q_i^T R(min(i - j, w)) k_j / sqrt(Dh),
        lambda(n) = max(1, log(n + 1) / log(L)),

    or, leaky ReRoPE, w + (i - j - w)/k beyond the window (same lambda).

    The log scaling is the reference's ``query_states *= ((position_ids + 1).log() /
    np.log(training_length)).clip(1)``, applied to the query before either rotation:
    every logit of the query at position id n, near (exact RoPE) and far (rectified)
    alike, in ReRoPE and in leaky ReRoPE alike; keys are not scaled. n is the query's
    position id (the reference indexes its tables by ``position_ids``), L the model's
    training length (``training_length``, 4096 for Llama 2). Inside the training
    length lambda = 1, so it changes nothing at scale 1. ``logn: false`` drops it
    (the reading this encoding had before, without the authors' scaling).

    Exact through the contract: ``rotate`` applies plain RoPE (so the model's logits
    are exact inside the window) and ``score`` replaces the logits at distances >= w
    by those of a second, re-rotated pair, as in the reference's two matrices
    (``attn_weights1``/``attn_weights2``, chosen by ``|i - j| < window``): the query
    rotated to position w + (i - w)/k and the key to j/k (ReRoPE: k -> inf, w and 0),
    whose relative position is the capped one; then it multiplies each query's row of
    logits by lambda (the same as scaling the query, since the causal mask is -inf).
    That needs the explicit attention path; it is exact for any position ids.

    Window and k are hyperparameters the reference leaves to its user: its patches set
    w = 512 (L/8) and k = 16 for L = 4096, its README reports w = 1024; the default
    here is w = L/2 and the specs set k.

    ``train_as: rope`` (default) is Su's protocol: ReRoPE is a training-free change
    for a model trained with RoPE, so training uses plain RoPE and evaluation (at
    every scale, 1 included) ReRoPE: a training-free adjustment (it does not depend
    on s). ``train_as: rerope`` trains with it too; then the model never sees a
    distance past w and extrapolates as it is. Convention: half-split pairs and
    theta_i = base^(-2i/Dh), as in :mod:`suite.encodings.rotary` and in the
    reference (transformers' Llama ``rotate_half``): no permutation between them.
    """

    Params = ReropeParams

    def __init__(self, params: ReropeParams, dims: ModelDims):
        super().__init__(params, dims)
        if params.logn and dims.train_len < 2:
            raise ValueError("rerope: logn scaling needs train_len >= 2 (it divides by log L)")
        self.window = params.window or max(1, dims.train_len // 2)
        self.rope = Rotary(RotaryParams(base=params.base), dims)
        self.register_buffer("inv_freq", default_inv_freq(dims.head_dim, params.base), persistent=False)

    @property
    def scale_behaviour(self) -> ScaleBehaviour:
        return ScaleBehaviour.ADJUST if self.params.train_as == "rope" else ScaleBehaviour.EXTRAPOLATE

    def active(self) -> bool:
        return not (self.training and self.params.train_as == "rope")

    def rotate(self, q, k, q_pos, k_pos):
        return self.rope.rotate(q, k, q_pos, k_pos)

    def score(self, q, k, scores, q_pos, k_pos):
        if not self.active():
            return scores
        w, leak = self.window, self.params.leaky_k
        q_target = torch.full_like(q_pos, w, dtype=torch.float64) if leak is None else w + (q_pos.double() - w) / leak
        k_target = torch.zeros_like(k_pos, dtype=torch.float64) if leak is None else k_pos.double() / leak
        logits = far_logits_replaced(q, k, scores, q_pos, k_pos, q_target, k_target, w, self.inv_freq)
        if self.params.logn:  # lambda = 1 (exactly) inside the training length; no test for it: a device sync
            logits = logits * logn_scale(q_pos, self.dims.train_len).to(logits.dtype)[:, None]  # [Tq, 1]: per query
        return logits
