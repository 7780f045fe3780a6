"""Randomized positions: a wrapper that trains any encoding on sparse position ids."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any, Literal

import pydantic
import torch

from ..registry import did_you_mean
from .base import ModelDims, PositionalEncoding, ScaleBehaviour

EVAL_SEED = 0  # evaluation draws from a fixed generator, so evaluation is repeatable


def _inner_class(ref: str) -> type[PositionalEncoding]:
    from . import ENCODINGS  # the registry imports this module

    return ENCODINGS.get(ref)


def _check_inner_params(inner_cls, params: dict) -> None:
    names = [f.name for f in dataclasses.fields(inner_cls.Params)]
    for key in params:
        if key not in names:
            raise ValueError(f"inner_params: unknown parameter '{key}'{did_you_mean(key, names)}; "
                             f"valid: {', '.join(names) or '(none)'}")
    try:
        pydantic.TypeAdapter(inner_cls.Params).validate_python(dict(params), strict=False)
    except pydantic.ValidationError as exc:
        raise ValueError(f"inner_params: {exc}") from None


@dataclass(frozen=True)
class RandomizedParams:
    inner: str = "rotary"  # the wrapped encoding's impl (registered name, module:Class or file.py:Class)
    inner_params: dict[str, Any] = field(default_factory=dict)  # its params, in full (they are part of the cell id)
    max_position: int = 1024  # L of the paper: position ids are drawn from [0, L)
    eval_positions: Literal["random", "arange"] = "random"  # "random" as in the authors' code

    def __post_init__(self):
        if self.max_position < 1:
            raise ValueError("max_position must be >= 1")
        try:
            inner_cls = _inner_class(self.inner)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"inner: {str(exc).strip(chr(34))}") from None
        if issubclass(inner_cls, Randomized):
            raise ValueError("inner: randomized positions cannot wrap themselves")
        _check_inner_params(inner_cls, self.inner_params)


def sorted_random_positions(length: int, max_position: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """A uniformly drawn subset of ``length`` ids of [0, max_position), in increasing order."""
    return torch.randperm(max_position, generator=generator)[:length].sort().values


class Randomized(PositionalEncoding):
    """Randomized positional encodings (Ruoss et al. 2023, "Randomized Positional
    Encodings Boost Length Generalization of Transformers"): the wrapped
    encoding sees, for a sequence of length T, the ids of a random subset of
    [0, L) in increasing order instead of 0 .. T-1, so during training it meets
    every position id up to L, which covers the longer test sequences.

    At evaluation the authors' code samples in the same way (``eval_positions:
    random``, the default); here the evaluation draw comes from a fixed seed, so the
    same length always gets the same ids and evaluation is repeatable.
    ``eval_positions: arange`` evaluates on 0 .. T-1 instead. Sequences longer than
    L have no such subset: with random evaluation :meth:`max_length` is L and the
    evaluator records longer ones as not applicable.

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
            cls = wrapper_class(_inner_class(params.inner))
        return super().__new__(cls)

    def __init__(self, params: RandomizedParams, dims: ModelDims):
        super().__init__(params, dims)
        inner_cls = _inner_class(params.inner)
        self.inner = inner_cls(inner_cls.Params(**params.inner_params), dims)
        limit = self.inner.max_length()
        if limit is not None and limit < params.max_position:
            raise ValueError(f"randomized: the wrapped encoding represents {limit} positions, "
                             f"fewer than max_position={params.max_position}")

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

    def positions(self, length, device):
        if not self.training and self.params.eval_positions == "arange":
            return torch.arange(length, device=device)
        if length > self.params.max_position:
            raise ValueError(f"randomized positions: length {length} exceeds max_position={self.params.max_position}")
        generator = None if self.training else torch.Generator().manual_seed(EVAL_SEED)
        return sorted_random_positions(length, self.params.max_position, generator).to(device)


def _embed(self, x, pos):
    return self.inner.embed(x, pos)


def _rotate(self, q, k, q_pos, k_pos):
    return self.inner.rotate(q, k, q_pos, k_pos)


def _bias(self, q_pos, k_pos):
    return self.inner.bias(q_pos, k_pos)


def _score(self, q, k, scores, q_pos, k_pos):
    return self.inner.score(q, k, scores, q_pos, k_pos)


_DELEGATES = {"embed": _embed, "rotate": _rotate, "bias": _bias, "score": _score}


@functools.cache
def wrapper_class(inner_cls: type[PositionalEncoding]) -> type[Randomized]:
    """Randomized, overriding exactly the hooks ``inner_cls`` overrides."""
    namespace = {"per_layer": inner_cls.per_layer, "__module__": __name__,
                 **{hook: _DELEGATES[hook] for hook in inner_cls.hooks()}}
    return type(f"Randomized{inner_cls.__name__}", (Randomized,), namespace)
