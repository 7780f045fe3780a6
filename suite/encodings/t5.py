"""T5's relative position bias with log-spaced buckets."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding, toeplitz_bias


@dataclass(frozen=True)
class T5Params:
    num_buckets: int = 32  # T5's default
    max_distance: int = 128  # T5's default: distances from here on share the last bucket

    def __post_init__(self):
        if self.num_buckets < 2:
            raise ValueError("num_buckets must be >= 2")
        if self.max_distance <= self.num_buckets // 2:
            raise ValueError("max_distance must be greater than num_buckets // 2 (the exact range)")


def t5_causal_bucket(distance: torch.Tensor, num_buckets: int, max_distance: int) -> torch.Tensor:
    """Bucket of a query-key distance n = i - j, unidirectional (decoder) form.

    Raffel et al. 2020 ("Exploring the Limits of Transfer Learning", Sec. 2.1) and
    ``_relative_position_bucket`` of their Mesh TensorFlow code with
    ``bidirectional=False``, as transformers' ``T5Attention`` ports it (the golden
    reference, transformers==5.23.0): n < 0 (the future) goes to bucket 0; the first half of
    the buckets hold the exact distances 0 .. num_buckets/2 - 1; the second half are
    log-spaced up to ``max_distance``; every longer distance shares the last bucket.
    """
    n = distance.clamp(min=0)
    max_exact = num_buckets // 2
    # the log is only used where n >= max_exact; clamp keeps log(0) out of the graph
    log_ratio = torch.log(n.clamp(min=max_exact).float() / max_exact) / math.log(max_distance / max_exact)
    large = max_exact + (log_ratio * (num_buckets - max_exact)).long()  # truncation, as in T5
    large = large.clamp(max=num_buckets - 1)
    return torch.where(n < max_exact, n, large)


@ENCODINGS.register("t5")
class T5Bias(PositionalEncoding):
    """T5 relative position bias (Raffel et al. 2020, Sec. 2.1): a learned scalar per
    head and distance bucket, added to the logits: softmax(q k^T / sqrt(Dh) + b[bucket(i - j)]).

    Causal (unidirectional) buckets as in T5's decoder, and the table laid out as
    transformers' ``relative_attention_bias`` ([buckets, H]), whose ``compute_bias`` is
    the golden reference. Shared across layers as in T5, where only the first layer owns
    the table and passes its bias on (computed once per forward). Distances past
    ``max_distance`` share the last bucket, so the encoding extrapolates as it is. The
    table is initialised to zero,
    so a fresh model starts as NoPE (T5 folds its init into the unscaled logits,
    which this model does not use).
    """

    Params = T5Params
    cacheable = True  # the bias of a (query, key) pair depends on their ids alone

    def __init__(self, params: T5Params, dims: ModelDims):
        super().__init__(params, dims)
        self.values = nn.Parameter(torch.zeros(params.num_buckets, dims.n_heads))  # [buckets, H]

    def relative_bias(self, distance):  # [V] -> [H, V]
        return self.values[t5_causal_bucket(distance, self.params.num_buckets, self.params.max_distance)].T

    def bias(self, q_pos, k_pos):
        return toeplitz_bias(self.relative_bias, q_pos, k_pos)  # [H, Tq, Tk]
