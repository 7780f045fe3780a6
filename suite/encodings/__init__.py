"""Positional encodings: the plugin base class, the registry and the built-in families.

A spec's ``impl:`` names a registered family below, a ``module:Class``, or a
``path/to/file.py:Class`` for code that lives outside the package.
"""

from ..registry import Registry
from .addrope import AddRope
from .base import HOOKS, AttentionWindow, ModelDims, NoParams, PositionalEncoding, ScaleBehaviour
from .cope import Cope
from .fire import Fire
from .fope import Fope
from .forgetting import Forgetting
from .kerple import Kerple
from .learned import Learned
from .randomized import Randomized
from .rerope import Rerope
from .rotary import DynamicRotary, Rotary
from .rotary_frequencies import Hope, PRope, ResonanceRotary
from .schedule import Schedule
from .simple import ALiBi, NoPE, Sandwich, Sinusoidal
from .string_rope import StringRope
from .t5 import T5Bias
from .temperature import Temperature
from .xpos import Xpos

ENCODINGS: Registry[PositionalEncoding] = Registry("encoding implementation", PositionalEncoding)
ENCODINGS.register("none")(NoPE)
ENCODINGS.register("sinusoidal")(Sinusoidal)
ENCODINGS.register("learned")(Learned)
ENCODINGS.register("rotary")(Rotary)
ENCODINGS.register("dynamic_rotary")(DynamicRotary)
ENCODINGS.register("xpos")(Xpos)
ENCODINGS.register("rerope")(Rerope)
ENCODINGS.register("addrope")(AddRope)
ENCODINGS.register("alibi")(ALiBi)
ENCODINGS.register("t5")(T5Bias)
ENCODINGS.register("kerple")(Kerple)
ENCODINGS.register("fire")(Fire)
ENCODINGS.register("sandwich")(Sandwich)
ENCODINGS.register("cope")(Cope)
ENCODINGS.register("randomized")(Randomized)
ENCODINGS.register("schedule")(Schedule)
ENCODINGS.register("forgetting")(Forgetting)
ENCODINGS.register("string")(StringRope)
ENCODINGS.register("resonance_rotary")(ResonanceRotary)
ENCODINGS.register("p_rope")(PRope)
ENCODINGS.register("hope")(Hope)
ENCODINGS.register("temperature")(Temperature)
ENCODINGS.register("fope")(Fope)

__all__ = ["ENCODINGS", "HOOKS", "AttentionWindow", "ModelDims", "NoParams", "PositionalEncoding", "ScaleBehaviour"]
