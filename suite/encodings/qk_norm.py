"""NoPE with QK normalization: DroPE's ``qk_norm_nope`` attention."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding


@dataclass(frozen=True)
class QKNormParams:
    # the model's rms_norm_eps, which the authors' norms take (1e-5 in SmolLM-360M, SmolLM-1.7B,
    # SmolLM2-1.7B and Llama-2-7B, the models they ship configs for)
    eps: float = 1e-5

    def __post_init__(self):
        if not self.eps > 0:
            raise ValueError(f"eps must be > 0, got {self.eps}")


@ENCODINGS.register("qk_norm_nope")
class QKNormNoPE(PositionalEncoding):
    """No positional encoding, with the queries and keys RMS-normalised: the attention that
    DroPE (Gelberg et al. 2025, "Extending the Context of Pretrained LLMs by Dropping Their
    Positional Embeddings", arXiv 2512.12167) offers as its QK-norm variant, shipped with
    a config for every model it recalibrates (SakanaAI/DroPE@260a8bb,
    ``cfgs/run_cfg/*_drope_qk_norm.yaml``: ``attention_type: qk_norm_nope``).

    As the authors' ``llama_qk_norm_nope_attn_forward`` (``custom_models/attention.py``)
    computes it: q = RMSNorm_q(W_q x), k = RMSNorm_k(W_k x), each an ``nn.RMSNorm`` over the
    whole projection (all heads at once, width H x Dh, not per head), with a learned gain
    that starts at ones and the model's ``rms_norm_eps``, before the heads are split; then
    attention with no rotation (their cos 1, sin 0) and the usual 1 / sqrt(Dh). Each layer
    has its own two norms (per layer).

    DroPE itself is a procedure, not this encoding: a RoPE model's positional embedding
    dropped and the model recalibrated at its training length (a grid's ``extensions``
    child of a RoPE parent, as nope-drope is NoPE's); the authors load the RoPE weights with
    the norms left at their ones (``from_source``, ``load_state_dict(strict=False)``).
    Trained from scratch, it is NoPE with QK-norm. Scale behaviour: extrapolates as it is.
    """

    Params = QKNormParams
    per_layer = True  # the authors' q_norm and k_norm belong to each attention layer
    # a DroPE child of a RoPE parent adds these, at their initial ones, as the authors load the
    # RoPE weights with strict=False (suite.training.fit.start_from_parent)
    added_state: ClassVar[tuple[str, ...]] = ("q_norm.weight", "k_norm.weight")
    cacheable = True  # a per-token map: the same for every id at every scale

    def __init__(self, params: QKNormParams, dims: ModelDims):
        super().__init__(params, dims)
        width = dims.n_heads * dims.head_dim
        self.q_norm = nn.RMSNorm(width, eps=params.eps)
        self.k_norm = nn.RMSNorm(width, eps=params.eps)

    @staticmethod
    def _normalised(x: torch.Tensor, norm: nn.RMSNorm) -> torch.Tensor:
        """x [B, H, T, Dh] normalised over its heads together, as the projection was before the
        split into heads (the authors norm q_proj's output, then view it as heads)."""
        B, H, T, Dh = x.shape
        return norm(x.transpose(1, 2).reshape(B, T, H * Dh)).view(B, T, H, Dh).transpose(1, 2)

    def rotate(self, q, k, q_pos, k_pos):
        return self._normalised(q, self.q_norm), self._normalised(k, self.k_norm)
