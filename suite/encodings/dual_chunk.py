"""Dual Chunk Attention (ChunkLlama): RoPE positions remapped within, across and between chunks."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from suite.encodings.base import ENCODINGS, ModelDims
from suite.encodings.rerope import rotate_by
from suite.encodings.rope_remap import RemappedRope


@dataclass(frozen=True)
class DualChunkParams:
    base: float = 10000.0  # RoPE's base
    chunk_size: int | None = None  # the reference's chunk_size; None: 3 L // 4 (pretraining_length * 3 // 4)
    local_window: int | None = None  # the reference's local_window; None: L // 8

    def __post_init__(self):
        if self.base <= 1:
            raise ValueError("base must be > 1")
        if self.chunk_size is not None and self.chunk_size < 2:
            raise ValueError("chunk_size must be >= 2")
        if self.local_window is not None and self.local_window < 0:
            raise ValueError("local_window must be >= 0")


def mscale(scale: float) -> float:
    """The reference's ``get_mscale``: 0.05 ln(s) + 1 past the pre-training length, else 1."""
    return 1.0 if scale <= 1 else 0.05 * math.log(scale) + 1.0


@ENCODINGS.register("dual_chunk")
class DualChunk(RemappedRope):
    """Dual Chunk Attention (An et al. 2024, "Training-Free Long-Context Scaling of Large
    Language Models", ICML; reference code HKUNLP/ChunkLlama@2add4d7,
    ``chunkllama_attn_replace.py``: ``ChunkLlamaRotaryEmbedding`` and ``forward``): a
    training-free change of a RoPE model. The sequence is cut into chunks of
    c = chunk_size - local_window tokens; every key sits at position j mod c, and the query
    at i takes one of three positions by where the key lies (Sec. 3):

        intra-chunk   (j in i's chunk):            i mod c                      -> distance i - j,
        successive    (j in the chunk before):     min(i mod c + c, chunk_size),
        inter-chunk   (j in any earlier chunk):    min(2c - 1, chunk_size),

    so no distance exceeds chunk_size < L, and neighbours across a chunk boundary keep their
    order. The reference's defaults (``replace_with_chunkllama``): chunk_size = 3L // 4,
    local_window = L // 8. Its rotary tables (queries' and keys' alike) are multiplied by
    ``get_mscale`` of the length over L, 0.05 ln(s) + 1, so past L every logit is scaled
    by its square; the reference takes s from the forward's length, here the evaluation
    scale (the length of every window the evaluators read at s).

    The reference runs the three parts as separate flash-attention calls merged by their
    log-sum-exp (prefill) or concatenates their logits into one softmax (decoding); both
    are one softmax over these logits, which ``score`` computes: ``rotate`` applies plain
    RoPE (the intra-chunk logits), and the successive and inter-chunk logits are those of
    q and k re-rotated to the positions above. Training-free: ``trains_as: rope``; during
    training ``score`` is the identity. Convention: half-split pairs,
    theta_i = base^(-2i/Dh), as in :mod:`suite.encodings.rotary`.
    """

    Params = DualChunkParams

    def __init__(self, params: DualChunkParams, dims: ModelDims):
        super().__init__(params, dims)
        L = dims.train_len
        self.chunk_size = params.chunk_size or L * 3 // 4
        self.local_window = params.local_window if params.local_window is not None else L // 8
        self.chunk_len = self.chunk_size - self.local_window  # c
        if self.chunk_len < 1:
            raise ValueError(f"chunk_size ({self.chunk_size}) must exceed local_window ({self.local_window})")

    def score(self, q, k, scores, q_pos, k_pos):
        if self.training:  # trained as RoPE: the remapping is the evaluation-time change
            return scores
        c, size = self.chunk_len, self.chunk_size
        k_chunked = rotate_by(k, (k_pos % c - k_pos).double(), self.inv_freq)  # keys at j mod c
        q_succ = rotate_by(q, ((q_pos % c + c).clamp(max=size) - q_pos).double(), self.inv_freq)
        q_inter = rotate_by(q, (min(2 * c - 1, size) - q_pos).double(), self.inv_freq)
        root = math.sqrt(q.shape[-1])
        succ_logits = (q_succ @ k_chunked.transpose(-2, -1)) / root  # [B, H, Tq, Tk]
        inter_logits = (q_inter @ k_chunked.transpose(-2, -1)) / root
        gap = q_pos[:, None] // c - k_pos[None, :] // c  # [Tq, Tk]: chunks between query and key
        logits = torch.where(gap == 1, succ_logits, torch.where(gap >= 2, inter_logits, scores))
        return logits * mscale(self.scale) ** 2
