"""What encodings that wrap another share: finding the wrapped class, checking its params."""

from __future__ import annotations

from suite.encodings.params import ParamsError, validate_params
from suite.encodings.base import ENCODINGS, PositionalEncoding


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
