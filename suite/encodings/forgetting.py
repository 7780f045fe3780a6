"""The Forgetting Transformer (FoX): data-dependent decay through the ``decay`` hook."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding


@dataclass(frozen=True)
class ForgettingParams:
    init_std: float = 0.02  # the authors' initializer_range for the gate's weight (bias: zeros)

    def __post_init__(self):
        if not self.init_std > 0:
            raise ValueError(f"init_std must be > 0, got {self.init_std}")


@ENCODINGS.register("forgetting")
class Forgetting(PositionalEncoding):
    """Lin et al. 2025, "Forgetting Transformer: Softmax Attention with a Forget Gate"
    (ICLR 2025), Eqs. 4-5: each layer has a scalar forget gate per head and token,
    ``f_t = sigmoid(w_f^T x_t + b_f)``, and the logit of query i over key j gets
    ``D_ij = sum_{l=j+1..i} log f_l``, so attention decays with distance at a rate the
    data sets. No other position information: FoX runs on NoPE (the authors' "LLaMA"
    FoX, ``use_rope: False``; the "Pro" variant's output gate, QK-norm and key shift are
    architecture changes outside this benchmark's single pluggable part).

    As the authors' ``ForgettingAttentionLayer`` (zhixuan-lin/forgetting-transformer,
    ``fgate_type: full``): ``fgate_proj = nn.Linear(d_model, n_heads, bias=True)`` on the
    layer's (normalised) input, ``log_fgate = logsigmoid(fgate_proj(x))`` in float32, the
    weight drawn N(0, 0.02) and the bias zero, as their ``_init_weights``. The model adds
    the bias through the ``decay`` hook (``suite.encodings.base``): the difference of the
    cumulative sums, as the authors' reference attention does.
    Scale behaviour: extrapolates as it is (the gates are computed for any length).
    """

    Params = ForgettingParams
    per_layer = True  # each layer its own gate
    # Exact with a key/value cache: the cache also holds the keys' cumulative log forget
    # values, and a new token's continue them (suite.modeling.model.KVCache.append_decay).
    cacheable = True

    def __init__(self, params: ForgettingParams, dims: ModelDims):
        super().__init__(params, dims)
        self.fgate_proj = nn.Linear(dims.d_model, dims.n_heads, bias=True)
        nn.init.normal_(self.fgate_proj.weight, std=params.init_std)
        nn.init.zeros_(self.fgate_proj.bias)

    def decay(self, x: torch.Tensor) -> torch.Tensor:
        logit = self.fgate_proj(x).transpose(1, 2)  # [B, H, T]
        return F.logsigmoid(logit.float()).to(x.dtype)
