"""Stick-breaking attention: no positional encoding; recency from how the weights are allotted.

Two variants of what becomes of the stick's remainder (what the keys before a query leave):

- ``remainder: learned_bias, group_norm: true``: the layer the authors train and released
  (IBM/dolomite-engine@a250945f, ``dolomite_engine/hf_models/modeling_utils/sequence_mixer_blocks/
  stickbreaking_attention.py``, ``SBAttention``): the remainder weighs a learned per-head vector
  ``head_bias`` [H, Dh], zeros at the start (line 76; without weight decay), ``o + rem * head_bias``
  (line 106), and each head's output is normalised by ``GroupNorm(H, H * Dh)`` (line 77: eps 1e-5,
  a weight and a bias per channel) before the output projection (lines 108-113);
- ``remainder: query_value, group_norm: false``: the kernel's test harness
  (shawntan/stickbreaking-attention@3147a38, ``tests/test_attn.py``'s ``ref_fwd``: ``o + rem * v``,
  the remainder to the query's own value), no normalisation.

Both leave the query's own key out of the stick (``attend_current=False``, the kernel's default
in ``stickbreaking_attention/sb_attn/__init__.py``, which ``SBAttention.forward`` does not change)
and scale the logits by 1/sqrt(Dh) (``inv_temp`` None there, ``attention_multiplier`` None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding

Remainder = Literal["learned_bias", "query_value"]


@dataclass(frozen=True)
class StickBreakingParams:
    # where what is left of the stick goes: a learned per-head vector (the authors' trained layer)
    # or the query's own value (the kernel's test harness). Both fields are in the run id (issue 36:
    # the runs recorded before them, as params {}, have other ids); their defaults are what those
    # runs computed, so a record's {} still reads as the layer it trained.
    remainder: Remainder = "query_value"
    group_norm: bool = False  # each head's output normalised (GroupNorm, H groups) before the output projection

    def __post_init__(self):
        if self.remainder not in ("learned_bias", "query_value"):
            raise ValueError(f"remainder must be 'learned_bias' or 'query_value', got {self.remainder!r}")


@ENCODINGS.register("stick_breaking")
class StickBreaking(PositionalEncoding):
    """Tan et al. 2025, "Scaling Stick-Breaking Attention: An Efficient Implementation and
    In-depth Study" (ICLR 2025, arXiv 2410.17980), Eq. 2: in place of the softmax, query i
    breaks a stick from its nearest earlier key back. Key j takes the share
    ``beta_ij = sigmoid(z_ij)`` of what the keys between them left:

        A_ij = beta_ij * prod_{j < k < i} (1 - beta_ik),    z_ij = q_i . k_j / sqrt(Dh),

    computed in log space, ``log A_ij = logsigmoid(z_ij) + sum_{j<k<i} logsigmoid(-z_ik)``.
    What is left, ``r_i = prod_{k<i} (1 - beta_ik)``, goes where ``remainder`` says (module
    docstring): ``o_i = sum_j A_ij v_j + r_i b_h`` with a learned ``b_h`` per head, or
    ``+ r_i v_i``; ``group_norm`` then normalises each head's ``o_i`` over its Dh channels.
    There is no other position information: a key's weight depends on the keys nearer the
    query, so the allotment favours recent keys without a distance in it (the paper's point:
    no positional embedding, and length extrapolation without one).

    The remainder is known where the weights are made (the normalize hook) and is used after
    they met the values (the gate hook, before the output projection): normalize keeps each
    chunk's r for the layer's gate, which takes them in order. The model calls the gate of a
    layer after all of that layer's chunks, before the next layer; each layer has its own
    instance (``per_layer``: its own bias and norm, as each ``SBAttention`` has).

    Keys a window hides (their logit is -inf) take nothing and leave the stick whole. The
    weights and remainder of query i depend only on its logits over keys up to i, and the
    bias and norm act on each token's own output, so a key/value cache is exact. Scale
    behaviour: extrapolates as it is.
    """

    Params = StickBreakingParams
    per_layer = True
    cacheable = True

    def __init__(self, params: StickBreakingParams, dims: ModelDims):
        super().__init__(params, dims)
        H, Dh = dims.n_heads, dims.head_dim
        if params.remainder == "learned_bias":
            # SBAttention's head_bias [H, Dh], zeros at the start; held flat so that the trainer, which
            # decays the weights of 2 dims and more (suite/training/module.py), leaves it undecayed as the
            # authors' optimizer does (dolomite_engine/optimization/params_group.py: names ending in "bias")
            self.head_bias = nn.Parameter(torch.zeros(H * Dh))
        if params.group_norm:
            self.norm = nn.GroupNorm(H, H * Dh)  # SBAttention's norm: eps 1e-5, weight ones, bias zeros
        self._rest: list[torch.Tensor] = []  # the remainders [B, H, Tq] of this forward's chunks, for gate

    def active_hooks(self) -> frozenset[str]:
        hooks = type(self).hooks()
        return hooks if self.params.remainder == "learned_bias" or self.params.group_norm else hooks - {"gate"}

    def normalize(self, scores: torch.Tensor, q0: int, k0: int) -> torch.Tensor:
        Tq, Tk = scores.shape[-2:]
        q_idx = torch.arange(q0, q0 + Tq, device=scores.device)[:, None]
        k_idx = torch.arange(k0, k0 + Tk, device=scores.device)[None, :]
        # in float32 as the references (sb_ref's logits.float(), decoding_stickbreaking's q.float());
        # the own key and later ones leave the stick (attend_current=False)
        z = scores.float().masked_fill(k_idx >= q_idx, float("-inf"))
        log_beta, log_rest = F.logsigmoid(z), F.logsigmoid(-z)  # -inf and 0 where a key is hidden
        # sum over k in (j, i) of log(1 - beta_ik): the suffix sums of log_rest from j + 1
        after = log_rest.flip(-1).cumsum(-1).flip(-1) - log_rest
        weights = (log_beta + after).exp()
        left = log_rest.sum(-1).exp()  # r_i = prod_{k<i} (1 - beta_ik), [B, H, Tq]
        if self.params.remainder == "query_value":
            weights = weights + left[..., None] * (k_idx == q_idx)
        else:
            self._rest.append(left)
        return weights.to(scores.dtype)

    def gate(self, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``y + r * head_bias`` (SBAttention.forward, line 106), then each head's GroupNorm over
        the heads' outputs side by side [B * T, H * Dh] (lines 108-111); y [B, H, T, Dh]."""
        B, H, T, Dh = y.shape
        if self.params.remainder == "learned_bias":
            y = y + self._take_rest(y)[..., None] * self.head_bias.view(H, 1, Dh).to(y.dtype)
        if self.params.group_norm:
            y = self.norm(y.transpose(1, 2).reshape(B * T, H * Dh)).view(B, T, H, Dh).transpose(1, 2)
        return y

    def _take_rest(self, y: torch.Tensor) -> torch.Tensor:
        """The remainders [B, H, T] normalize kept for the tokens of y, taken (the next forward starts afresh)."""
        rest, self._rest = self._rest, []
        if not rest:
            raise RuntimeError("stick-breaking: the gate hook found no remainder; the model calls normalize first")
        rest = torch.cat(rest, dim=-1)  # the chunks of queries, in order
        if rest.shape != y.shape[:3]:
            raise RuntimeError(f"stick-breaking: remainders of shape {tuple(rest.shape)} for an output of shape "
                               f"{tuple(y.shape)}: each forward's normalize calls must be followed by its gate")
        return rest.to(y.dtype)
