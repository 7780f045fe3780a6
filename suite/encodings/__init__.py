"""Positional encodings: the plugin base class, the registry and the built-in families.

A spec's ``impl:`` names a registered family below, a ``module:Class``, or a
``path/to/file.py:Class`` for code that lives outside the package.
"""

from ..registry import Registry
from .base import HOOKS, ModelDims, NoParams, PositionalEncoding, ScaleBehaviour
from .rotary import Rotary
from .simple import ALiBi, NoPE, Sinusoidal

ENCODINGS: Registry[PositionalEncoding] = Registry("encoding implementation", PositionalEncoding)
ENCODINGS.register("none")(NoPE)
ENCODINGS.register("sinusoidal")(Sinusoidal)
ENCODINGS.register("rotary")(Rotary)
ENCODINGS.register("alibi")(ALiBi)

__all__ = ["ENCODINGS", "HOOKS", "ModelDims", "NoParams", "PositionalEncoding", "ScaleBehaviour"]
