"""Self-Extend: RoPE with grouped (floor-divided) positions beyond a neighbour window."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from suite.encodings.base import ENCODINGS, ModelDims
from suite.encodings.rerope import far_logits_replaced
from suite.encodings.rope_remap import RemappedRope


@dataclass(frozen=True)
class SelfExtendParams:
    base: float = 10000.0  # RoPE's base
    group_size: int = 8  # G, the reference's group_size_1
    window: int | None = None  # W, the reference's group_size_2 (neighbour window); None: train_len // 4

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")
        if self.group_size < 1:
            raise ValueError("group_size must be >= 1")
        if self.window is not None and self.window < 1:
            raise ValueError("window must be >= 1")


@ENCODINGS.register("self_extend")
class SelfExtend(RemappedRope):
    """Self-Extend (Jin et al. 2024, "LLM Maybe LongLM: Self-Extend LLM Context Window
    Without Tuning"; reference code datamllab/LongLM@cdbbb06,
    ``self_extend_patch/Llama.py``, ``self_extend_forward``): a training-free change of a
    RoPE model. A key closer to the query than the neighbour window W keeps RoPE's relative
    position i - j; a farther key is seen through grouped positions, the query at
    ``i // G + W - W / G`` and the key at ``j // G``, so distant relative positions are
    compressed G-fold and shifted to continue the neighbour window:

        logit(i, j) = q_i^T R(i - j) k_j / sqrt(Dh)                          if i - j < W,
                      q_i^T R(i // G + W - W / G - j // G) k_j / sqrt(Dh)   otherwise.

    The reference computes both matrices and picks per entry (``torch.where`` with its
    neighbour mask: rows i >= W, keys j <= i - W grouped); ``W / G`` is true division,
    so the shift is fractional when G does not divide W. Exact through the contract as
    ReRoPE is (:mod:`suite.encodings.rerope`): ``rotate`` applies plain RoPE and ``score``
    replaces the far logits by those of q and k rotated on to their grouped positions.
    With positions below L everywhere (the longest grouped query position is
    (T - 1) // G + W - W / G) the model sees only relative positions it was trained on:
    the authors' rule for choosing G is (L - W) * G + W >= the target length.

    Training-free: the model trains as plain RoPE (``trains_as: rope``) and Self-Extend
    applies at evaluation, at every scale (1 included: a key W or more back is grouped
    there too, as in the reference). Convention: half-split pairs, theta_i = base^(-2i/Dh),
    as in :mod:`suite.encodings.rotary` and transformers' Llama.
    """

    Params = SelfExtendParams

    def __init__(self, params: SelfExtendParams, dims: ModelDims):
        super().__init__(params, dims)
        self.window = params.window or max(1, dims.train_len // 4)

    def score(self, q, k, scores, q_pos, k_pos):
        if self.training:  # trained as RoPE: Self-Extend is the evaluation-time change
            return scores
        G, W = self.params.group_size, self.window
        q_target = torch.div(q_pos, G, rounding_mode="floor").double() + (W - W / G)
        k_target = torch.div(k_pos, G, rounding_mode="floor").double()
        return far_logits_replaced(q, k, scores, q_pos, k_pos, q_target, k_target, W, self.inv_freq)
