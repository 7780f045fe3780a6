"""StreamingLLM: RoPE attending to a few initial "sink" tokens and a recent window, with
positions taken in the cache."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from suite.encodings.base import ENCODINGS, ModelDims
from suite.encodings.rerope import rotate_by
from suite.encodings.rope_remap import RemappedRope


@dataclass(frozen=True)
class StreamingParams:
    base: float = 10000.0  # RoPE's base
    sinks: int = 4  # S, the reference's start_size: the paper keeps four initial tokens
    recent: int | None = None  # R, the reference's recent_size; None: train_len - sinks - 1 (cache = L)

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")
        if self.sinks < 0:
            raise ValueError("sinks must be >= 0")
        if self.recent is not None and self.recent < 1:
            raise ValueError("recent must be >= 1")


@ENCODINGS.register("streaming_llm")
class StreamingLLM(RemappedRope):
    """StreamingLLM (Xiao et al. 2024, "Efficient Streaming Language Models with Attention
    Sinks", ICLR; reference code mit-han-lab/streaming-llm@2e50426,
    ``streaming_llm/kv_cache.py`` ``StartRecentKVCache`` and
    ``streaming_llm/pos_shift/modify_llama.py`` ``llama_pos_shift_attention_forward``): a
    training-free change of a RoPE model. Decoding token by token, the cache keeps the first
    S tokens (the attention sinks) and the R most recent ones, evicting the middle, and RoPE
    is applied by position *in the cache*, not in the text. So the query at index i sees key
    j only if j < S or j >= i - R (R recent keys and itself), and the logits are

        logit(i, j) = q_i^T R(i - j) k_j / sqrt(Dh)                   if j >= i - R (window),
                      q_i^T R(min(i, S + R) - j) k_j / sqrt(Dh)       if j < S (sinks),

    since the query sits at cache index min(i, S + R) and a window key at that minus its
    distance (relative positions unchanged), while sink j stays at index j. No relative
    position exceeds S + R, so with the default R = L - S - 1 the model sees only distances
    it was trained on; at 1x (T <= L) nothing is evicted and this is RoPE.

    Exact through the contract, as Self-Extend is: ``rotate`` applies plain RoPE; ``score``
    replaces the sink logits by those of the query re-rotated to min(i, S + R) and masks the
    evicted keys. This is the reference's per-token decoding computed for every query of a
    sequence at once (the golden test runs the reference's decoding loop and cache).
    Training-free: ``trains_as: rope``; during training ``score`` is the identity.
    Convention: half-split pairs, theta_i = base^(-2i/Dh), as in :mod:`suite.encodings.rotary`.
    """

    Params = StreamingParams

    def __init__(self, params: StreamingParams, dims: ModelDims):
        super().__init__(params, dims)
        self.recent = params.recent or max(1, dims.train_len - params.sinks - 1)

    def score(self, q, k, scores, q_pos, k_pos):
        if self.training:  # trained as RoPE: the cache policy is the evaluation-time change
            return scores
        S, R = self.params.sinks, self.recent
        if not bool((q_pos > S + R).any()):  # no query past the full cache: nothing evicted or shifted (1x)
            return scores
        q_cache = q_pos.clamp(max=S + R)  # the query's index in the cache
        q_sink = rotate_by(q, (q_cache - q_pos).double(), self.inv_freq)
        sink_logits = (q_sink @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])  # [B, H, Tq, Tk]
        is_sink = (k_pos < S)[None, :]  # [1, Tk]
        shifted = is_sink & (q_pos > S + R)[:, None]  # [Tq, Tk]: sinks of queries past the full cache
        evicted = ~is_sink & (k_pos[None, :] < q_pos[:, None] - R)
        return torch.where(shifted, sink_logits, scores).masked_fill(evicted, float("-inf"))
