"""Positional encodings: the plugin base class, the registry and the built-in families.

A spec's ``impl:`` names a registered family (each module here registers its classes
in :data:`ENCODINGS`), a ``module:Class``, or a ``path/to/file.py:Class`` for code that
lives outside the package.
"""

from suite.encodings.base import ENCODINGS, HOOKS, AttentionWindow, ModelDims, NoParams, PositionalEncoding, ScaleBehaviour

__all__ = ["ENCODINGS", "HOOKS", "AttentionWindow", "ModelDims", "NoParams", "PositionalEncoding", "ScaleBehaviour"]
