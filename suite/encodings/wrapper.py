"""What encodings that wrap another share: finding the wrapped class, checking its params."""

from __future__ import annotations

import dataclasses

import pydantic

from ..registry import did_you_mean
from .base import PositionalEncoding


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
