"""Attention temperature: a family of its own, wrapped around any encoding.

Each member multiplies the logits of the query at position id i by a factor tau(i) (a
query temperature), through the ``rotate`` hook: the wrapped encoding rotates (or not),
then the query is scaled. A factor of the query's own position keeps every fast path
exact (the fused kernel, the key/value cache: :attr:`cacheable` is the wrapped one's).

=========  ===================================================================  ================================
kind       tau(i), i the query's position id, L the training length, s the scale  reference
=========  ===================================================================  ================================
logn       log(i + 1) / log(L) beyond L, else 1                                 Qwen's ``use_logn_attn``
ssmax      s_h log(i + 1): n = i + 1 keys, s_h learned per head and layer       Nakanishi 2025, Scalable-Softmax
llama4     1 + beta log(1 + floor((i + 1) / F)), F = floor_scale                Llama 4's ``attn_temperature_tuning``
mscale     (0.1 ln s + 1)^2 at scale s > 1 (both q and k carry 0.1 ln s + 1)    YaRN's attention factor, Eq. 22
=========  ===================================================================  ================================
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from torch import nn

from suite.encodings.base import ENCODINGS, HOOKS, AttentionWindow, ModelDims, PositionalEncoding, ScaleBehaviour
from suite.encodings.wrapper import checked_inner, delegate, inner_class

Kind = Literal["logn", "ssmax", "llama4", "mscale"]


@dataclass(frozen=True)
class TemperatureParams:
    inner: str = "rotary"  # the wrapped encoding's impl (part of the run id, with its params)
    inner_params: dict[str, Any] = field(default_factory=dict)
    kind: Kind = "logn"
    floor_scale: float | None = None  # llama4: F in tokens; None: the training length (Llama 4's 8192 of its 8K)
    attn_scale: float = 0.1  # llama4: beta (Llama 4's default)

    def __post_init__(self):
        checked_inner(self.inner, self.inner_params, Temperature)
        if self.floor_scale is not None and self.floor_scale <= 0:
            raise ValueError(f"floor_scale must be > 0, got {self.floor_scale}")
        if self.attn_scale < 0:
            raise ValueError(f"attn_scale must be >= 0, got {self.attn_scale}")


def logn_factor(pos: torch.Tensor, train_len: int) -> torch.Tensor:
    """Qwen's ``math.log(i, seq_length) if i > seq_length else 1`` for i = pos + 1 (float64)."""
    n = pos.to(torch.float64) + 1
    return torch.where(n > train_len, n.log() / math.log(train_len), torch.ones_like(n))


def llama4_factor(pos: torch.Tensor, floor_scale: float, attn_scale: float) -> torch.Tensor:
    """Llama 4's ``log1p(floor((positions + 1) / floor_scale)) * attn_scale + 1`` (float64)."""
    return torch.log1p(torch.floor((pos.to(torch.float64) + 1.0) / floor_scale)) * attn_scale + 1.0


def yarn_mscale(scale: float) -> float:
    """YaRN's attention factor (Peng et al. 2023, Eq. 22; transformers' ``get_mscale``)."""
    return 1.0 if scale <= 1 else 0.1 * math.log(scale) + 1.0


@ENCODINGS.register("temperature")
class Temperature(PositionalEncoding):
    """A query temperature (module docstring) on any encoding, given in full by ``inner``
    and ``inner_params``. References, one per kind:

    * ``logn``: log-n attention scaling (Chiang and Cholak 2022, "Overcoming a Theoretical
      Limitation of Self-Attention", Sec. 5: scale logits by log n), as Qwen runs it
      (Qwen-7B ``modeling_qwen.py``, ``QWenAttention``: ``logn_list = [math.log(i,
      self.seq_length) if i > self.seq_length else 1 ...]``, queries multiplied at
      inference); the factor is 1 inside the training length, so it is training-free.
    * ``ssmax``: Scalable-Softmax (Nakanishi 2025, "Scalable-Softmax Is Superior for
      Attention", Eq. 3): softmax(s log(n) z), n the number of keys the query attends
      (i + 1 under the causal mask), s a learnable scalar per head and layer. Initialised
      at 1 / log(L), so tau = 1 at the training length; trains as itself.
    * ``llama4``: Llama 4's query temperature on its NoPE layers (transformers
      ``Llama4TextAttention``, ``attn_temperature_tuning``, citing Scalable-Softmax):
      floor_scale 8192 and attn_scale 0.1 there; floor_scale defaults to L here.
    * ``mscale``: YaRN's attention factor alone, the special case of a temperature that
      depends on the scale only: transformers multiplies cos and sin, so q and k, by
      ``get_mscale(s)``, and the logits by its square.

    Every hook of the wrapped encoding is delegated; the instance is of a subclass made
    per wrapped class that overrides exactly its hooks plus ``rotate``, so the model picks
    the wrapped encoding's attention path. ``ssmax`` has parameters of its own, so it is
    per layer; the others share what the wrapped encoding shares.
    Scale behaviour: ``ssmax`` extrapolates as it is; the others are training-free
    adjustments (1 within the training length, or at scale 1).
    """

    Params = TemperatureParams

    def __new__(cls, params=None, dims=None):
        if cls is Temperature and params is not None:
            cls = temperature_class(inner_class(params.inner), params.kind == "ssmax")
        return super().__new__(cls)

    def __init__(self, params: TemperatureParams, dims: ModelDims):
        super().__init__(params, dims)
        inner_cls = inner_class(params.inner)
        self.inner = inner_cls(inner_cls.Params(**params.inner_params), dims)
        if params.kind == "ssmax":
            self.s = nn.Parameter(torch.full((dims.n_heads,), 1.0 / math.log(max(2, dims.train_len))))  # [H]

    @property
    def scale_behaviour(self) -> ScaleBehaviour:
        if self.params.kind == "ssmax":
            return self.inner.scale_behaviour
        return ScaleBehaviour.ADJUST

    @property
    def cacheable(self) -> bool:
        return self.inner.cacheable

    @property
    def attention_window(self) -> AttentionWindow | None:
        return self.inner.attention_window

    def active_hooks(self) -> frozenset[str]:
        return self.inner.active_hooks() | {"rotate"}

    def max_length(self) -> int | None:
        return self.inner.max_length()

    def set_scale(self, scale: float) -> None:
        super().set_scale(scale)
        self.inner.set_scale(scale)

    def positions(self, length, device):
        return self.inner.positions(length, device)

    def factor(self, q_pos: torch.Tensor) -> torch.Tensor:
        """tau per query [Tq] (ssmax: [H, Tq])."""
        kind, L = self.params.kind, self.dims.train_len
        if kind == "logn":
            return logn_factor(q_pos, L)
        if kind == "llama4":
            return llama4_factor(q_pos, self.params.floor_scale or L, self.params.attn_scale)
        if kind == "mscale":
            return torch.full(q_pos.shape, yarn_mscale(self.scale) ** 2, dtype=torch.float64, device=q_pos.device)
        return self.s[:, None] * (q_pos.to(self.s.dtype) + 1).log()[None, :]  # ssmax

    def rotate(self, q, k, q_pos, k_pos):
        if "rotate" in self.inner.active_hooks():
            q, k = self.inner.rotate(q, k, q_pos, k_pos)
        tau = self.factor(q_pos).to(q.dtype)
        return q * (tau[:, :, None] if tau.dim() == 2 else tau[:, None]), k  # [H, Tq, 1] or [Tq, 1]


@functools.cache
def temperature_class(inner_cls: type[PositionalEncoding], own_parameters: bool) -> type[Temperature]:
    """Temperature, overriding exactly the hooks ``inner_cls`` overrides (and ``rotate``)."""
    namespace = {"per_layer": inner_cls.per_layer or own_parameters, "__module__": __name__,
                 **{hook: delegate(hook) for hook in inner_cls.hooks() if hook in HOOKS and hook != "rotate"}}
    if inner_cls.relative_bias is not None:
        namespace["relative_bias"] = delegate("relative_bias")
    return type(f"Temperature{inner_cls.__name__}", (Temperature,), namespace)
