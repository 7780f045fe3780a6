"""Stick-breaking attention: no positional encoding; recency from how the weights are allotted."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from suite.encodings.base import ENCODINGS, PositionalEncoding


@ENCODINGS.register("stick_breaking")
class StickBreaking(PositionalEncoding):
    """Tan et al. 2025, "Scaling Stick-Breaking Attention: An Efficient Implementation and
    In-depth Study" (ICLR 2025, arXiv 2410.17980), Eq. 2: in place of the softmax, query i
    breaks a stick from its nearest earlier key back. Key j takes the share
    ``beta_ij = sigmoid(z_ij)`` of what the keys between them left:

        A_ij = beta_ij * prod_{j < k < i} (1 - beta_ik),    z_ij = q_i . k_j / sqrt(Dh),

    computed in log space, ``log A_ij = logsigmoid(z_ij) + sum_{j<k<i} logsigmoid(-z_ik)``.
    What is left of the stick, ``prod_{k<i} (1 - beta_ik)``, goes to the query's own value,
    as the authors' reference does (shawntan/stickbreaking-attention@3147a38,
    ``stickbreaking_attention/sb_ref.py`` with ``tests/test_attn.py``'s ``ref_fwd``:
    ``o + rem * v``, ``attend_current=False``). There is no other position information: a
    key's weight depends on the keys nearer the query, so the allotment favours recent keys
    without a distance in it (the paper's point: no positional embedding, and length
    extrapolation without one).

    Keys a window hides (their logit is -inf) take nothing and leave the stick whole. The
    weights of query i depend only on its logits over keys up to i, so a key/value cache is
    exact. Scale behaviour: extrapolates as it is.
    """

    cacheable = True

    def normalize(self, scores: torch.Tensor, q0: int, k0: int) -> torch.Tensor:
        Tq, Tk = scores.shape[-2:]
        q_idx = torch.arange(q0, q0 + Tq, device=scores.device)[:, None]
        k_idx = torch.arange(k0, k0 + Tk, device=scores.device)[None, :]
        # in float32 as the reference (its logits.float()); the own key and later ones leave the stick
        z = scores.float().masked_fill(k_idx >= q_idx, float("-inf"))
        log_beta, log_rest = F.logsigmoid(z), F.logsigmoid(-z)  # -inf and 0 where a key is hidden
        # sum over k in (j, i) of log(1 - beta_ik): the suffix sums of log_rest from j + 1
        after = log_rest.flip(-1).cumsum(-1).flip(-1) - log_rest
        weights = (log_beta + after).exp()
        left = log_rest.sum(-1, keepdim=True).exp()  # prod_{k<i} (1 - beta_ik)
        weights = weights + left * (k_idx == q_idx)
        return weights.to(scores.dtype)
