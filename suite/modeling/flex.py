"""Attention through FlexAttention: an encoding's relative bias as a ``score_mod`` table lookup.
The path a model takes for it is decided in :mod:`suite.modeling.model` (``AttentionPath.FLEX``)."""

from __future__ import annotations

import torch

from suite.encodings import PositionalEncoding

_FLEX = {}  # device type -> flex_attention (compiled on CUDA, where its fused kernel lives)


def flex_attend(q, k, v, encoding: PositionalEncoding, q_pos, k_pos, q0: int = 0, k0: int = 0) -> torch.Tensor:
    """Causal attention with the encoding's relative bias added by FlexAttention's
    ``score_mod`` (Dong et al. 2024, "Flex Attention: A Programming Model for Generating
    Optimized Attention Kernels"): the bias of each distinct distance is computed once,
    [H, V], and each logit looks its own up, so no [H, Tq, Tk] bias is ever built. The
    same numbers as :func:`attend` on the float-mask path (tests/modeling/test_flex.py); on a CPU
    FlexAttention runs its unfused reference, so this path is for GPUs."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    device = q.device.type
    if device not in _FLEX:
        _FLEX[device] = torch.compile(flex_attention, dynamic=False) if device == "cuda" else flex_attention
    lo = int(q_pos.min() - k_pos.max())
    table = encoding.relative_bias(torch.arange(lo, int(q_pos.max() - k_pos.min()) + 1, device=q.device))  # [H, V]

    def score_mod(score, b, h, q_idx, kv_idx):
        return score + table[h, q_pos[q_idx] - k_pos[kv_idx] - lo].to(score.dtype)

    def causal(b, h, q_idx, kv_idx):
        return q_idx + q0 >= kv_idx + k0

    block_mask = create_block_mask(causal, None, None, q.shape[2], k.shape[2], device=q.device)
    return _FLEX[device](q, k, v, score_mod=score_mod, block_mask=block_mask)
