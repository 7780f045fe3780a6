"""Canon layers: short causal depthwise convolutions at four points of every block.

Allen-Zhu 2025, "Physics of Language Models: Part 4.1, Architecture Design and the Magic of
Canon Layers" (NeurIPS 2025, arXiv 2512.17351): a Canon layer mixes each channel of
the hidden states with those of the few tokens before it,

    h'_t = h_t + sum_{i=0..K-1} w_i * h_{t-i}    (depthwise: one K-tap filter per channel),

a causal 1-D convolution of kernel K = 4 with a residual connection, no bias and no
activation (the authors' recommendation for Transformers), placed at

* A: the attention's normalised input,
* B: the queries, keys and values side by side, after their projections (before RoPE),
* C: the MLP's normalised input,
* D: the MLP's hidden pre-activation (the authors' gated MLP: its gate and up projections
  side by side; this project's GELU MLP has one up projection, so D mixes that),

"ABCD" being the full set the authors' model card and ``demo_newmodel.py`` use. They report
that with Canon layers NoPE matches RoPE, as the convolutions give every token its local order.

Reference: facebookresearch/PhysicsLM4 at 75806965208c55e9f7f2e2363d3793d2da75d2e4,
``huggingface/canon_helper.py``: ``ShortConvolution`` (an ``nn.Conv1d`` with ``groups = channels``,
``padding = K - 1`` and the first T outputs kept: causal), ``create_canon`` (``canon_kernel`` 4,
``canon_bias`` False, ``canon_activation`` False, ``canon_residual`` True by default) and
``apply_canon`` (``hidden_states + canon(hidden_states)``); ``modeling_llama_canon.py`` places them.
The weights start as nn.Conv1d's own (Kaiming uniform, std about 0.29 at K = 4), which the
authors insist on (``_init_weights`` calls ``reset_parameters``; ``demo_newmodel.py``: "Changing
it to 0.02 is not wise for Transformer models").

A spec wraps the encoding the blocks otherwise use (``inner``): ``none`` for the authors' NoPE
experiment. Not cacheable: a token's hidden states depend on the tokens before it, so a
decoder re-reads the window.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from suite.encodings.base import ENCODINGS, AttentionWindow, ModelDims, PositionalEncoding, ScaleBehaviour
from suite.encodings.wrapper import checked_inner, inner_class, wrapper_class

SITES = "ABCD"


@dataclass(frozen=True)
class CanonParams:
    inner: str = "none"  # the encoding the blocks otherwise use (part of the run id, with its params)
    inner_params: dict[str, Any] = field(default_factory=dict)
    sites: str = "ABCD"  # the authors' canon_set: which of A, B, C, D get a Canon layer
    kernel: int = 4  # canon_kernel
    residual: bool = True  # canon_residual: h + conv(h) (the authors': highly recommended for Transformers)
    activation: bool = False  # canon_activation: SiLU after the convolution (not recommended for Transformers)

    def __post_init__(self):
        checked_inner(self.inner, self.inner_params, Canon)
        if not self.sites or any(s not in SITES for s in self.sites) or len(set(self.sites)) != len(self.sites):
            raise ValueError(f"sites must be distinct letters of {SITES!r}, got {self.sites!r}")
        if self.kernel < 1:
            raise ValueError(f"kernel must be >= 1, got {self.kernel}")


@ENCODINGS.register("canon")
class Canon(PositionalEncoding):
    """Canon layers (module docstring; Allen-Zhu 2025) at ``sites`` of every block, around
    the encoding ``inner``, whose hooks are delegated (an instance is of a subclass made per inner
    class that overrides exactly its hooks plus ``canon``). Each site's convolution is an
    ``nn.Conv1d(C, C, kernel, groups=C, padding=kernel - 1, bias=False)`` per layer, as the authors'
    ``ShortConvolution``. Scale behaviour: the inner encoding's (a convolution of K taps reads
    the same K tokens at every length)."""

    Params = CanonParams
    per_layer = True

    def __new__(cls, params=None, dims=None):
        if cls is Canon and params is not None:
            cls = canon_class(inner_class(params.inner))
        return super().__new__(cls)

    def __init__(self, params: CanonParams, dims: ModelDims):
        super().__init__(params, dims)
        inner_cls = inner_class(params.inner)
        self.inner = inner_cls(inner_cls.Params(**params.inner_params), dims)
        if "D" in params.sites and dims.d_ff is None:
            raise ValueError("Canon-D needs the MLP's width: ModelDims.d_ff is None")
        width = {"A": dims.d_model, "B": 3 * dims.d_model, "C": dims.d_model, "D": dims.d_ff}
        self.convs = nn.ModuleDict({s: nn.Conv1d(width[s], width[s], params.kernel, groups=width[s],
                                                 padding=params.kernel - 1, bias=False) for s in params.sites})

    @property
    def scale_behaviour(self) -> ScaleBehaviour:
        return self.inner.scale_behaviour

    @property
    def attention_window(self) -> AttentionWindow | None:
        return self.inner.attention_window

    def active_hooks(self) -> frozenset[str]:
        return self.inner.active_hooks() | {"canon"}

    def max_length(self) -> int | None:
        return self.inner.max_length()

    def set_scale(self, scale: float) -> None:
        super().set_scale(scale)
        self.inner.set_scale(scale)

    def canon(self, site: str, h: torch.Tensor) -> torch.Tensor:
        """h [B, T, C] + conv(h) at a site that has a Canon layer (h itself elsewhere): the
        convolution pads K - 1 zeros on both sides and keeps the first T outputs, so output t
        reads inputs t - K + 1 .. t (ShortConvolution's naive path)."""
        conv = self.convs[site] if site in self.convs else None
        if conv is None:
            return h
        mixed = conv(h.transpose(1, 2))[..., : h.shape[1]]  # [B, C, T]
        if self.params.activation:
            mixed = F.silu(mixed)
        mixed = mixed.transpose(1, 2)  # [B, T, C]
        return h + mixed if self.params.residual else mixed


@functools.cache
def canon_class(inner_cls: type[PositionalEncoding]) -> type[Canon]:
    """Canon, overriding exactly the hooks ``inner_cls`` overrides (and ``canon``)."""
    return wrapper_class(Canon, inner_cls, "canon")
