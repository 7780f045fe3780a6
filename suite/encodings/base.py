"""The encoding plugin contract.

An encoding is a ``torch.nn.Module`` that may act at eleven places in the model (hooks), each
with a do-nothing default, so a subclass overrides only what it uses:

==========================================  ==============================  ========================
hook                                        acts on                         used by
==========================================  ==============================  ========================
``embed(x, pos)``                           token embeddings [B, T, D]      sinusoidal, learned
``rotate(q, k, q_pos, k_pos)``              queries/keys [B, H, T, Dh]      the rotary family
``bias(q_pos, k_pos)``                      additive bias [H, Tq, Tk]       ALiBi, T5, KERPLE, FIRE
``logits(q, k, x, q0, k0)``                 q.k replaced [B, H, Tq, Tk]     PaTH attention
``score(q, k, scores, q_pos, k_pos)``       the logits [B, H, Tq, Tk]       CoPE, ReRoPE
``decay(x)``                                log forget gates [B, H, T]      Forgetting Transformer
``sink()``                                  per-head sink logits [H]        gpt-oss attention sinks
``normalize(scores, q0, k0)``               logits -> weights, not softmax  stick-breaking attention
``gate(y, x)``                              attention output [B, H, T, Dh]  gated attention, stick-breaking
``canon(site, h)``                          a block's hidden states [B,T,C]  Canon layers
``mixer(x)``                                the layer's output [B, T, D]    Gated DeltaNet (Qwen3-Next)
==========================================  ==============================  ========================

plus ``positions(T, device)``, which says which position ids the sequence gets
(``arange(T)`` unless an encoding such as randomized positions says otherwise), and
:attr:`~PositionalEncoding.attention_window`, the attention window of the layer (None: every
earlier key; sliding or chunked windows for local layers, e.g. RNoPE-SWA, Llama 4).
In training, a spec's position transform (suite.encodings.position_transforms: PoSE, randomized
ids, CAPE) may replace ``arange(T)``; CAPE's ids are real-valued, which only an encoding
with ``continuous_positions = True`` takes (the sinusoidal table).

``decay`` is the data-dependent hook: from the layer's input x [B, T, D] it gives a log
forget value per token and head, and the model adds ``sum_{l=j+1..i} log f_l`` (a
difference of cumulative sums) to logit (i, j), as the Forgetting Transformer does
(Lin et al. 2025, Eq. 5). ``logits`` also sees it: the raw logits q_i . k_j [B, H, Tq, Tk]
replaced by the encoding's own, computed from the queries, the keys and the layer's input
(PaTH: q_i^T H_i ... H_{j+1} k_j, a Householder-like transform per token between j and i).
``mixer`` replaces the layer's attention altogether: a layer whose encoding has it has no
attention (no queries, keys or values of the model's), and the encoding's token mixer maps
the layer's normalised input to its output (Qwen3-Next's Gated DeltaNet layers).

Per layer: a class with ``per_layer = True`` gets one instance per layer, each told its
layer in ``dims.layer``, so an encoding may differ by layer (hybrid schedules such as
NoPE every fourth layer with windowed RoPE in the others); the model picks each layer's
attention path from that layer's instance.

The model reads :meth:`PositionalEncoding.active_hooks` to pick the fastest attention
path that is exact for the encoding; it never asks an encoding its name. The class's
:meth:`~PositionalEncoding.hooks` are the hooks it overrides; an instance may use
fewer, depending on its params or on the scale (dynamic NTK needs the ``score`` hook,
and so the explicit attention path, only beyond the training length), and the model
reads them again after every :meth:`set_scale`.

Scale: at evaluation scale ``s`` the model calls :meth:`set_scale`; an encoding
declares with :attr:`scale_behaviour` whether it extrapolates as it is, adjusts
(training-free, with factor ``s``), or is not applicable beyond some length
(:meth:`max_length`).

Key/value cache: an encoding says with :attr:`PositionalEncoding.cacheable` whether a
decoder may keep the keys and values of the tokens it has read (as ``rotate`` returned
them) and read only each new token: exact when every hook of a token depends on its
own position id alone, given separately for queries and keys (RoPE and its static
scalings, ALiBi and the other biases, absolute embeddings, NoPE), and for the decay
hook, whose cumulative sums the cache keeps and continues (FoX). It is False by
default, so an encoding that says nothing is always re-read whole.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn

from suite.core.registry import Registry

HOOKS = ("embed", "rotate", "bias", "logits", "score", "decay", "sink", "normalize", "gate", "canon", "mixer")


def toeplitz_bias(fn, q_pos: torch.Tensor, k_pos: torch.Tensor) -> torch.Tensor:
    """[H, Tq, Tk] bias of a function of the distance i - j alone, evaluated once per
    distinct distance instead of once per (i, j) pair: ``fn(distances [V]) -> [H, V]``.

    A relative bias is a Toeplitz matrix, so at length T it has 2T - 1 distinct
    values; computing T^2 of them (a log, a power, 64 cosines each) is what made
    these encodings several times slower than ALiBi at long lengths.
    """
    lo = int(q_pos.min() - k_pos.max())
    distances = torch.arange(lo, int(q_pos.max() - k_pos.min()) + 1, device=q_pos.device)  # [V]
    table = fn(distances)  # [H, V]
    return table[:, q_pos[:, None] - k_pos[None, :] - lo]  # [H, Tq, Tk]


class ScaleBehaviour(str, enum.Enum):
    EXTRAPOLATE = "extrapolate"  # positions past the training length are used as they are
    ADJUST = "adjust"  # a training-free adjustment with factor s (interpolation, NTK, YaRN, ...)
    NOT_APPLICABLE = "not_applicable"  # cannot represent positions past max_length()


@dataclass(frozen=True)
class ModelDims:
    """What an encoding may know about the model it sits in."""

    d_model: int
    n_heads: int
    head_dim: int
    n_layers: int
    train_len: int  # the training context length: what "scale 1" means
    layer: int | None = None  # the layer an instance serves (per_layer classes); None: shared by all
    token_embedding_std: float = 0.02  # the token embedding's initial std (the size's init; GPT-2's by default)
    d_ff: int | None = None  # the MLP's hidden width (None: not known where the dims were made)


@dataclass(frozen=True)
class AttentionWindow:
    """Which earlier keys a query sees, by index (as causality is): ``sliding``, the
    ``size`` most recent tokens including itself (Beltagy et al. 2020, Longformer;
    Mistral); ``chunked``, the tokens of its own block of ``size`` (Llama 4's chunked
    attention in its RoPE layers)."""

    size: int
    kind: str = "sliding"  # "sliding" | "chunked"

    def __post_init__(self):
        if self.size < 1:
            raise ValueError(f"an attention window holds at least one token, got size {self.size}")
        if self.kind not in ("sliding", "chunked"):
            raise ValueError(f"window kind must be 'sliding' or 'chunked', got {self.kind!r}")

    def visible(self, q_idx: torch.Tensor, k_idx: torch.Tensor) -> torch.Tensor:
        """[Tq, Tk] True where the key lies inside the query's window (future keys
        included: causality is applied separately)."""
        if self.kind == "sliding":
            return k_idx[None, :] > q_idx[:, None] - self.size
        return k_idx[None, :] // self.size == q_idx[:, None] // self.size

    def first_key(self, q_idx: int) -> int:
        """The first key index any query at index >= q_idx may see."""
        if self.kind == "sliding":
            return max(0, q_idx - self.size + 1)
        return q_idx // self.size * self.size


@dataclass(frozen=True)
class NoParams:
    """For encodings without parameters."""


class PositionalEncoding(nn.Module):
    """Base class of every encoding. Subclasses set ``Params`` to a frozen dataclass."""

    Params: ClassVar[type] = NoParams
    per_layer: ClassVar[bool] = False
    """True: every layer gets its own instance (own learnable parameters).
    False: one instance is shared by all layers, and a bias is computed once per forward."""
    continuous_positions: ClassVar[bool] = False
    """True: every hook takes real-valued position ids as well as integers, so the model
    may train it on a continuous position transform (CAPE's shifts and scalings,
    suite.encodings.position_transforms). False: its hooks index tables or buckets by integer id."""

    def __init__(self, params, dims: ModelDims):
        super().__init__()
        if not isinstance(params, self.Params):
            raise TypeError(f"{type(self).__name__} expects {self.Params.__name__}, got {type(params).__name__}")
        self.params = params
        self.dims = dims
        self.scale = 1.0

    # -- what the model asks ------------------------------------------------
    @classmethod
    def hooks(cls) -> frozenset[str]:
        """The hooks this encoding overrides (the model picks its attention path from these)."""
        return frozenset(h for h in HOOKS if getattr(cls, h) is not getattr(PositionalEncoding, h))

    def active_hooks(self) -> frozenset[str]:
        """The hooks this instance uses now: a subset of :meth:`hooks` that may depend on
        the params and on the scale (the model re-reads it after :meth:`set_scale`). A hook
        left out must be a no-op for every input the model can give at this scale."""
        return type(self).hooks()

    @property
    def scale_behaviour(self) -> ScaleBehaviour:
        return ScaleBehaviour.EXTRAPOLATE

    @property
    def cacheable(self) -> bool:
        """Whether decoding may cache keys and values (module docstring): True only if
        reading tokens [t0, t1) as queries over cached keys [0, t0) (rotated when they were
        read) and the new keys gives the logits of the whole sequence read at once, i.e.
        ``positions`` is arange, and ``embed``, ``rotate`` and ``bias`` of a token depend
        on its own id alone, not on the other ids, the length or the window. Subclasses
        that are so say True (a class attribute will do); the default is the safe one."""
        return False

    def max_length(self) -> int | None:
        """The longest sequence this encoding can represent; None when unbounded."""
        return None

    @property
    def attention_window(self) -> AttentionWindow | None:
        """The attention window of the layer this instance serves; None: all earlier keys."""
        return None

    def set_scale(self, scale: float) -> None:
        """Evaluation scale s (eval length = s x train length); 1 during training."""
        self.scale = float(scale)

    def no_weight_decay(self) -> frozenset[str]:
        """Names of this encoding's parameters that take no weight decay whatever their shape
        (timm's ``no_weight_decay`` convention). The trainer decays parameters of two or more
        dimensions (suite.training.module): a learned spectrum kept per head is 2-D, and would be
        decayed where the same spectrum shared by the heads is not."""
        return frozenset()

    # -- the hooks ------------------------------------------------------------
    def positions(self, length: int, device: torch.device) -> torch.Tensor:
        return torch.arange(length, device=device)

    def embed(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        return x

    def rotate(self, q, k, q_pos, k_pos):
        return q, k

    def bias(self, q_pos: torch.Tensor, k_pos: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    relative_bias = None
    """Optional, for a bias of the distance i - j alone (ALiBi, T5, KERPLE, Sandwich): a
    method ``relative_bias(distances [V]) -> [H, V]`` such that ``bias`` equals
    ``toeplitz_bias(self.relative_bias, q_pos, k_pos)``. With it the model can run the
    encoding through FlexAttention's ``score_mod`` (a table lookup per logit, no
    [H, T, T] bias) where FlexAttention is compiled (suite.modeling.model, ``AttentionPath.FLEX``)."""

    def logits(self, q: torch.Tensor, k: torch.Tensor, x: torch.Tensor, q0: int, k0: int) -> torch.Tensor:
        """The raw logits [B, H, Tq, Tk] (before the 1/sqrt(Dh) scaling, the mask and
        :meth:`score`) in place of ``q @ k^T``: queries [B, H, Tq, Dh] at indices q0 .. and keys
        at k0 .. as ``rotate`` returned them, and the layer's (normalised) input x [B, T, D] of
        the whole sequence (so an encoding may read the tokens between a key and its query).
        An encoding with this hook reads whole sequences: it is not cacheable."""
        raise NotImplementedError

    def score(self, q, k, scores, q_pos, k_pos):
        """Edit the logits ``scores`` [B, H, Tq, Tk] (already scaled by 1/sqrt(Dh) and
        holding the causal mask as -inf), given the queries and keys [B, H, T, Dh] as
        ``rotate`` returned them and their position ids."""
        return scores

    def decay(self, x: torch.Tensor) -> torch.Tensor:
        """Log forget values [B, H, T] (<= 0) of the layer's input x [B, T, D]: the model adds
        their sum over positions j+1 .. i to logit (i, j) (module docstring)."""
        raise NotImplementedError

    def sink(self) -> torch.Tensor:
        """Per-head sink logits [H]: each head's softmax takes exp(sink_h) into its denominator
        beside its keys, a key with no value that a query may attend to instead of any token
        (gpt-oss's learned attention sinks; OpenAI 2025, gpt-oss model card, Sec. 2.1)."""
        raise NotImplementedError

    def normalize(self, scores: torch.Tensor, q0: int, k0: int) -> torch.Tensor:
        """Attention weights [B, H, Tq, Tk] from the logits ``scores`` (as :meth:`score`
        returned them: scaled, -inf where a key is not visible), in place of the softmax; the
        queries are at indices q0 .. q0 + Tq - 1 of the sequence and the keys at k0 .. (so a
        query's own key is column q0 + row - k0). The softmax unless overridden; stick-breaking
        attention (Tan et al. 2025) is one: a query's weights are a stick broken from its
        nearest key back."""
        return scores.softmax(dim=-1)

    def gate(self, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """The attention output y [B, H, T, Dh] of each head (after the weights met the values,
        before the output projection) modulated by the layer's (normalised) input x [B, T, D] of
        the same tokens: gated attention's Y' = Y * sigmoid(X W_theta) (Qiu et al. 2025, "Gated
        Attention for Large Language Models", gate position G1). A token's gate reads its
        own input alone, so it keeps the attention path and a key/value cache exact. The model
        calls it once per layer and forward, after every chunk of that layer's queries went
        through :meth:`normalize` (stick-breaking attention keeps each query's remainder there
        for its gate: the authors' learned bias and per-head GroupNorm)."""
        return y

    def canon(self, site: str, h: torch.Tensor) -> torch.Tensor:
        """Hidden states h [B, T, C] of the block at ``site`` mixed along time, in place of h:
        "A" the attention's normalised input (C = D), "B" its queries, keys and values side by
        side (C = 3D, before ``rotate``), "C" the MLP's normalised input (C = D), "D" the MLP's
        hidden pre-activation (C = d_ff). Canon layers (Allen-Zhu 2025, "Physics of Language
        Models: Part 4.1") put a short causal convolution at each. It must be causal; a
        token's output depends on earlier tokens, so such an encoding is not cacheable."""
        return h

    def mixer(self, x: torch.Tensor) -> torch.Tensor:
        """The layer's output [B, T, D] from its normalised input x [B, T, D], in place of
        attention: a token mixer that is not attention (Gated DeltaNet, Yang et al. 2025). The
        model builds no attention for a layer with this hook, and calls no other hook there
        but ``embed`` (at the input). It must be causal; a mixer that keeps a recurrent state
        is not a key/value cache, so such an encoding is not cacheable."""
        raise NotImplementedError

    def extra_repr(self) -> str:
        return ", ".join(f"{f.name}={getattr(self.params, f.name)!r}" for f in dataclasses.fields(self.params))


ENCODINGS: Registry[PositionalEncoding] = Registry("encoding implementation", PositionalEncoding, members="suite.encodings")
"""The encoding families by the name a spec's ``impl:`` gives; each registers itself
(``@ENCODINGS.register("rotary")`` on its class)."""
