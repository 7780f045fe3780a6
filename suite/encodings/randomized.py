"""Randomized positions: a wrapper that trains any encoding on sparse position ids."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from suite.encodings.base import ENCODINGS, ModelDims, PositionalEncoding, ScaleBehaviour
from suite.encodings.wrapper import checked_inner, inner_class

EVAL_SEED = 0  # evaluation draws from a fixed generator, so evaluation is repeatable


@dataclass(frozen=True)
class RandomizedParams:
    inner: str = "rotary"  # the wrapped encoding's impl (registered name, module:Class or file.py:Class)
    inner_params: dict[str, Any] = field(default_factory=dict)  # its params, in full (they are part of the cell id)
    max_position: int = 1024  # L of the paper: position ids are drawn from [0, L)
    eval_positions: Literal["random", "arange"] = "random"  # "random" as in the authors' code
    redraw_per_layer: bool = True  # rotate: a fresh draw in every attention layer, as the authors' NOISY_ROTARY

    def __post_init__(self):
        if self.max_position < 1:
            raise ValueError("max_position must be >= 1")
        checked_inner(self.inner, self.inner_params, Randomized)


def sorted_random_positions(length: int, max_position: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """A uniformly drawn subset of ``length`` ids of [0, max_position), in increasing order."""
    return torch.randperm(max_position, generator=generator)[:length].sort().values


@ENCODINGS.register("randomized")
class Randomized(PositionalEncoding):
    """Randomized positional encodings (Ruoss et al. 2023, "Randomized Positional
    Encodings Boost Length Generalization of Transformers", Sec. 4): the wrapped
    encoding sees, for a sequence of length T, the ids of a random subset of
    [0, L) in increasing order instead of 0 .. T-1, so during training it meets
    every position id up to L, which covers the longer test sequences.

    The draw is the authors' (google-deepmind/randomized_positional_encodings@e8c6474,
    ``models/positional_encodings.py``, ``noisy_fixed_positional_encodings``, and its
    use for ``NOISY_ROTARY`` in ``models/transformer.py``):

    - T ids of [0, L) without replacement (``jrandom.choice(..., replace=False)``),
      sorted (``jnp.sort``): a uniformly drawn T-subset;
    - one draw per forward call, shared by every example of the batch and by the
      queries and keys;
    - a fresh draw in every attention layer (each layer calls ``hk.next_rng_key()``):
      with ``redraw_per_layer`` (default) ``rotate`` draws anew at each call, which the
      model makes once per layer; ids drawn there also reach the same layer's
      ``score``. ``embed`` gets the one draw of :meth:`positions` per forward, as the
      authors' ``NOISY_SIN_COS`` adds its encodings once at the input; a ``bias`` is
      computed once per forward by the model, so it too sees one draw for all layers;
    - at test time exactly as in training: the authors' ``range_evaluation`` passes a
      fresh key with every batch (``eval_positions: random``, the default).

    Our evaluation draws come from a generator of our own, seeded with ``EVAL_SEED``
    at every :meth:`set_scale` (which the evaluator calls before each scale), so an
    evaluation is repeatable while each batch and layer still gets its own draw, as
    in the authors' evaluation. (An inner encoding with an instance per layer gets one
    generator per instance, all seeded alike, so its layers share their evaluation draws.)
    ``eval_positions: arange`` evaluates on 0 .. T-1 instead (a reading the authors do
    not use; kept as a separately named spec). Sequences longer than L have no such
    subset: with random evaluation :meth:`max_length` is L and the evaluator records
    longer ones as not applicable (the authors' ``jrandom.choice`` raises there).

    Every hook is the wrapped encoding's: the instance is of a subclass made per
    wrapped class, which overrides exactly the hooks the wrapped encoding overrides
    and copies its ``per_layer``, so the model picks the same attention path. The
    wrapped encoding is given in full (``inner`` and ``inner_params``) rather than by
    the name of another spec file, so its parameters are part of this spec's cell id.
    Scale behaviour: the wrapped encoding's.
    """

    Params = RandomizedParams

    def __new__(cls, params=None, dims=None):
        if cls is Randomized and params is not None:
            cls = wrapper_class(inner_class(params.inner))
        return super().__new__(cls)

    def __init__(self, params: RandomizedParams, dims: ModelDims):
        super().__init__(params, dims)
        inner_cls = inner_class(params.inner)
        self.inner = inner_cls(inner_cls.Params(**params.inner_params), dims)
        limit = self.inner.max_length()
        if limit is not None and limit < params.max_position:
            raise ValueError(f"randomized: the wrapped encoding represents {limit} positions, "
                             f"fewer than max_position={params.max_position}")
        self.eval_generator = torch.Generator().manual_seed(EVAL_SEED)
        self.layer_pos: torch.Tensor | None = None  # the ids rotate drew for the current layer, for its score

    @property
    def scale_behaviour(self) -> ScaleBehaviour:
        return self.inner.scale_behaviour

    def max_length(self) -> int | None:
        if self.params.eval_positions == "arange":
            return self.inner.max_length()
        return self.params.max_position

    def set_scale(self, scale: float) -> None:
        super().set_scale(scale)
        self.inner.set_scale(scale)
        self.eval_generator.manual_seed(EVAL_SEED)

    def drawing(self) -> bool:
        """Whether ids are drawn now (always in training; at evaluation unless arange)."""
        return self.training or self.params.eval_positions == "random"

    def draw(self, length: int, device) -> torch.Tensor:
        if length > self.params.max_position:
            raise ValueError(f"randomized positions: length {length} exceeds max_position={self.params.max_position}")
        generator = None if self.training else self.eval_generator  # training: torch's global RNG, as any dropout
        return sorted_random_positions(length, self.params.max_position, generator).to(device)

    def positions(self, length, device):
        return self.draw(length, device) if self.drawing() else torch.arange(length, device=device)


def _embed(self, x, pos):
    return self.inner.embed(x, pos)


def _rotate(self, q, k, q_pos, k_pos):
    self.layer_pos = None
    if self.params.redraw_per_layer and self.drawing() and q_pos.shape == k_pos.shape:  # self-attention, as theirs
        self.layer_pos = q_pos = k_pos = self.draw(len(q_pos), q_pos.device)  # one draw for this layer's q and k
    return self.inner.rotate(q, k, q_pos, k_pos)


def _bias(self, q_pos, k_pos):
    return self.inner.bias(q_pos, k_pos)


def _score(self, q, k, scores, q_pos, k_pos):
    if self.layer_pos is not None:  # rotate drew this layer's ids (the model calls rotate first in every layer)
        q_pos = k_pos = self.layer_pos
    return self.inner.score(q, k, scores, q_pos, k_pos)


_DELEGATES = {"embed": _embed, "rotate": _rotate, "bias": _bias, "score": _score}


@functools.cache
def wrapper_class(inner_cls: type[PositionalEncoding]) -> type[Randomized]:
    """Randomized, overriding exactly the hooks ``inner_cls`` overrides."""
    namespace = {"per_layer": inner_cls.per_layer, "__module__": __name__,
                 **{hook: _DELEGATES[hook] for hook in inner_cls.hooks()}}
    return type(f"Randomized{inner_cls.__name__}", (Randomized,), namespace)
