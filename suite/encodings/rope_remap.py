"""The base of RoPE models whose logits are remapped at evaluation and not in training."""

from __future__ import annotations

from suite.encodings.base import ModelDims, PositionalEncoding, ScaleBehaviour
from suite.encodings.rotary import Rotary, RotaryParams, default_inv_freq


class RemappedRope(PositionalEncoding):
    """A training-free change of a RoPE model (``trains_as: rope``): ``rotate`` is plain RoPE
    (half-split pairs, theta_i = base^(-2i/Dh), as in :mod:`suite.encodings.rotary`), and a
    subclass's ``score`` replaces or masks logits at evaluation, re-rotating q and k with
    ``self.inv_freq`` (:func:`suite.encodings.rerope.rotate_by`). Self-Extend, StreamingLLM,
    Dual Chunk Attention and STRING are such changes. ``params`` needs a ``base``."""

    cacheable = False  # the score hook rewrites entries of a row by the query's position; decoding re-reads the window

    def __init__(self, params, dims: ModelDims):
        super().__init__(params, dims)
        self.rope = Rotary(RotaryParams(base=params.base), dims)
        self.register_buffer("inv_freq", default_inv_freq(dims.head_dim, params.base), persistent=False)

    @property
    def scale_behaviour(self) -> ScaleBehaviour:
        return ScaleBehaviour.ADJUST

    def rotate(self, q, k, q_pos, k_pos):
        return self.rope.rotate(q, k, q_pos, k_pos)
