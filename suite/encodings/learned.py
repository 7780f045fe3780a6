"""Learned absolute positions: a table of one trainable vector per position."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding, ScaleBehaviour


@dataclass(frozen=True)
class LearnedParams:
    max_positions: int | None = None  # rows of the table; None: the training length

    def __post_init__(self):
        if self.max_positions is not None and self.max_positions < 1:
            raise ValueError("max_positions must be >= 1")


@ENCODINGS.register("learned")
class Learned(PositionalEncoding):
    """Learned absolute position embeddings, added to the token embeddings: GPT-2
    (Radford et al. 2019; the ``wpe`` table of its code), as in GPT (2018) and GPT-3.

    h_0 = W_e[x] + W_p[pos]. The table has ``max_positions`` rows (by default the
    training length), initialised N(0, 0.01^2) as in GPT-2's code. A position past
    the table has no row, so the encoding is not applicable beyond ``max_length()``:
    the evaluator records such scales as ``not_applicable``, and :meth:`embed` raises
    rather than clamp if it is asked anyway.
    """

    Params = LearnedParams
    cacheable = True  # every hook of a token depends on its own position id alone

    def __init__(self, params: LearnedParams, dims: ModelDims):
        super().__init__(params, dims)
        rows = params.max_positions or dims.train_len
        # a bare Parameter (not nn.Embedding), so the model's init does not overwrite GPT-2's std
        # N(0, 0.01^2), bit-identical to randn * 0.01 (and skipped when only shapes are wanted)
        self.table = nn.Parameter(nn.init.normal_(torch.empty(rows, dims.d_model), std=0.01))  # [P, D]

    @property
    def scale_behaviour(self) -> ScaleBehaviour:
        return ScaleBehaviour.NOT_APPLICABLE

    def max_length(self) -> int:
        return self.table.shape[0]

    def embed(self, x, pos):
        if int(pos.max()) >= self.table.shape[0]:
            raise ValueError(f"learned positions: position {int(pos.max())} is past the table of "
                             f"{self.table.shape[0]} rows (max_length); this length is not applicable")
        return x + self.table[pos].to(x.dtype)  # [B, T, D]
