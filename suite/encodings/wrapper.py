"""What encodings that wrap another share: finding the wrapped class, checking its params,
and the class that overrides exactly the wrapped one's hooks."""

from __future__ import annotations

from suite.encodings.params import ParamsError, validate_params
from suite.encodings.base import ENCODINGS, HOOKS, PositionalEncoding


def inner_class(ref: str) -> type[PositionalEncoding]:
    """The registered (or ``module:Class``) encoding class ``ref`` names (KeyError if none)."""
    return ENCODINGS.get(ref)


def check_inner_params(inner_cls, params: dict, label: str = "inner_params") -> None:
    """ValueError, prefixed ``label``, for an unknown key or a value its Params refuses."""
    try:
        validate_params(inner_cls.Params, params)
    except ParamsError as exc:
        raise ValueError(f"{label}: {exc}") from None


def checked_inner(ref: str, params: dict, wrapper: type, label: str = "inner") -> type[PositionalEncoding]:
    """The class ``ref`` names, checked as a wrapper's parameters are: it exists (ValueError,
    prefixed ``label``, naming the nearest registered name), is not the wrapper itself, and
    takes ``params``."""
    try:
        cls = inner_class(ref)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{label}: {str(exc).strip(chr(34))}") from None
    if issubclass(cls, wrapper):
        raise ValueError(f"{label}: a {wrapper.__name__.lower()} cannot wrap another")
    check_inner_params(cls, params, "inner_params" if label == "inner" else "params")
    return cls


def build_inner(ref: str, params: dict, dims) -> PositionalEncoding:
    cls = inner_class(ref)
    return cls(cls.Params(**params), dims)


def delegate(hook: str):
    """A method that calls the wrapped encoding's (``self.inner``) method of that name."""
    def method(self, *args):
        return getattr(self.inner, hook)(*args)

    method.__name__ = hook
    return method


def wrapper_class(base: type[PositionalEncoding], inner_cls: type[PositionalEncoding], own: str) -> type:
    """``base`` (a wrapper whose own hook is ``own``) for ``inner_cls``: it overrides exactly the
    hooks ``inner_cls`` overrides, delegating them, so the model takes the wrapped encoding's
    attention path; and its relative bias and position ids where ``inner_cls`` has its own (only
    then: a training transform reads the others')."""
    namespace = {"__module__": base.__module__, "continuous_positions": inner_cls.continuous_positions,
                 **{hook: delegate(hook) for hook in inner_cls.hooks() if hook in HOOKS and hook != own}}
    if inner_cls.relative_bias is not None:
        namespace["relative_bias"] = delegate("relative_bias")
    if inner_cls.positions is not PositionalEncoding.positions:
        namespace["positions"] = delegate("positions")
    return type(f"{base.__name__}{inner_cls.__name__}", (base,), namespace)
