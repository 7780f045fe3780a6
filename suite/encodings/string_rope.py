"""STRING: shifted rotary positions, training-free, on ReRoPE's two-matrix machinery."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from suite.encodings.base import ENCODINGS
from suite.encodings.rerope import rotate_by
from suite.encodings.rope_remap import RemappedRope


@dataclass(frozen=True)
class StringParams:
    base: float = 10000.0  # RoPE's base
    shifted_ratio: float = 0.33  # S = int(ratio x the evaluation length): the authors' shifted_offset = int(0.33 L)
    local_value: int = 4  # W: the authors' small_local_value (128 at 128K; here about L/16 of the quick grids' L)
    shifted_offset: int | None = None  # S in tokens, overriding the ratio (the golden tests set it)
    # the authors' constant, "similar with YaRN" (0.1 ln s + 1 at s = 2): it multiplies the rotary
    # tables, so every logit is scaled by its square (1.143); 1.0 gives the bare remapping
    attention_factor: float = 0.1 * math.log(2) + 1

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")
        if not 0 < self.shifted_ratio < 1:
            raise ValueError(f"shifted_ratio must be in (0, 1), got {self.shifted_ratio}")
        if self.local_value < 0:
            raise ValueError(f"local_value must be >= 0, got {self.local_value}")
        if self.shifted_offset is not None and self.shifted_offset < 1:
            raise ValueError("shifted_offset must be >= 1")
        if self.attention_factor <= 0:
            raise ValueError(f"attention_factor must be > 0, got {self.attention_factor}")


@ENCODINGS.register("string")
class StringRope(RemappedRope):
    """STRING (An et al., ICLR 2025, "Why Does the Effective Context Length of LLMs Fall
    Short?", Sec. 4, Eq. 4; reference code HKUNLP/STRING@216cc2f, ``string_for_llama.py``):
    the relative positions a model saw rarely in training (the largest) are dropped and the
    well-trained ones shifted over them. With S the shifted offset and W the local value,
    the logit of query i over key j at distance d = i - j uses relative position

        d                 for d <= S   (the authors' sliding-window call, keys [i - S, i])
        d - S + W         for d >= S   (their shifted call: the query re-rotated to i - S + W)

    and the key at exactly d = S belongs to both of the authors' calls, whose outputs are
    merged by their log-sum-exps: it enters the softmax twice, once at each relative
    position. Here that is ``logaddexp`` of its two logits, which gives the same weights.
    The authors multiply their cos/sin tables by ``attention_factor = 0.1 ln 2 + 1``
    (``replace_with_string`` and ``_set_cos_sin_cache``, lines 739 and 308-309) to sharpen
    the attention STRING smooths, so queries and keys are both scaled by it and every
    logit, near or far, by its square; ``rotate`` does the same.

    Exact through the contract as ReRoPE is (``suite.encodings.rerope``): ``rotate``
    applies plain RoPE, ``score`` replaces the far logits by those of the query rotated on
    by W - S (``rerope.rotate_by``). S = int(ratio x T) for the evaluation length T = s x L,
    as the authors set ``shifted_offset = int(0.33 * max_test_length)``; the README
    suggests 0.25-0.4 and W of 128-512 for 128K contexts. Training-free: the model trains
    as RoPE, and STRING reads every evaluation, 1x included.
    Scale behaviour: training-free adjustment (S follows the evaluation length).
    """

    Params = StringParams

    def shifted_offset(self) -> int:
        if self.params.shifted_offset is not None:
            return self.params.shifted_offset
        return max(1, int(self.params.shifted_ratio * round(self.scale * self.dims.train_len)))

    def rotate(self, q, k, q_pos, k_pos):
        q, k = super().rotate(q, k, q_pos, k_pos)
        factor = self.params.attention_factor
        return q * factor, k * factor

    def score(self, q, k, scores, q_pos, k_pos):
        S, W = self.shifted_offset(), self.params.local_value
        distance = q_pos[:, None] - k_pos[None, :]  # [Tq, Tk]
        if not bool((distance >= S).any()):
            return scores
        shift = torch.full_like(q_pos, W - S, dtype=torch.float64)
        q_shifted = rotate_by(q, shift, self.inv_freq)  # the query at i - S + W
        shifted = (q_shifted @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])  # [B, H, Tq, Tk]
        both = torch.logaddexp(scores, shifted)  # d == S: in both of the authors' calls
        return torch.where(distance > S, shifted, torch.where(distance == S, both, scores))
