"""Checking a parameter dataclass against a dict from YAML: the one place it is done.

Encoding families, wrapped encodings and training-time position transforms each have a
frozen ``Params`` dataclass; spec files give their parameters as a mapping. Unknown keys
are errors with a did-you-mean, values are checked by pydantic against the dataclass's
types and its own ``__post_init__``, and non-finite numbers are refused (a string "nan"
becomes a float NaN on the way in).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import pydantic

from suite.core.registry import did_you_mean


class ParamsError(ValueError):
    """Every problem of a parameter mapping: ``problems`` holds (path below ``params``, message)
    pairs, for file:line errors; ``str()`` reads alone ("unknown parameter 'bse' (did you mean...")."""

    def __init__(self, problems: list[tuple[tuple, str]], text: str):
        self.problems = problems
        super().__init__(text)


def _alone(problems: list[tuple[tuple, str]]) -> str:
    return "; ".join(f"{'.'.join(map(str, path))}: {msg}" if path else msg for path, msg in problems)


@functools.lru_cache(maxsize=1024)
def _adapter(params_cls) -> pydantic.TypeAdapter:
    """The validator of ``params_cls``, built once per class: building one costs about a
    millisecond (pydantic generates its schema), and planning the published grids checks the
    same few dozen classes some ten thousand times (each wrapped encoding's inner parameters
    at every id it is part of)."""
    return pydantic.TypeAdapter(params_cls)


def validate_params(params_cls, params: dict):
    """The ``params_cls`` instance ``params`` describes; :class:`ParamsError` lists what is wrong."""
    names = [f.name for f in dataclasses.fields(params_cls)]
    valid = f"; valid: {', '.join(names) or '(none)'}"
    unknown = [k for k in params if k not in names]
    if unknown:
        raise ParamsError([((k,), "unknown parameter" + did_you_mean(k, names) + valid) for k in unknown],
                          "; ".join(f"unknown parameter '{k}'{did_you_mean(k, names)}" for k in unknown) + valid)
    try:
        resolved = _adapter(params_cls).validate_python(dict(params), strict=False)
    except pydantic.ValidationError as exc:
        problems = [(tuple(e["loc"]), "required key is missing" if e["type"] == "missing" else e["msg"])
                    for e in exc.errors()]
        raise ParamsError(problems, _alone(problems)) from None
    except Exception as exc:  # a plugin's own check that raised something other than ValueError
        problems = [((), f"{type(exc).__name__}: {exc}")]
        raise ParamsError(problems, _alone(problems)) from None
    infinite = [((f.name,), f"{getattr(resolved, f.name)} is not a finite number") for f in dataclasses.fields(resolved)
                if isinstance(getattr(resolved, f.name), float) and not math.isfinite(getattr(resolved, f.name))]
    if infinite:
        raise ParamsError(infinite, _alone(infinite))
    return resolved
