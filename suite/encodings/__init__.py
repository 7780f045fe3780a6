"""Positional encodings: the plugin base class, the registry and the built-in families.

A spec's ``impl:`` names a registered family below, a ``module:Class``, or a
``path/to/file.py:Class`` for code that lives outside the package.
"""

from suite.core.registry import Registry
from suite.encodings.addrope import AddRope
from suite.encodings.base import HOOKS, AttentionWindow, ModelDims, NoParams, PositionalEncoding, ScaleBehaviour
from suite.encodings.cope import Cope
from suite.encodings.fire import Fire
from suite.encodings.fope import Fope
from suite.encodings.forgetting import Forgetting
from suite.encodings.kerple import Kerple
from suite.encodings.learned import Learned
from suite.encodings.randomized import Randomized
from suite.encodings.rerope import Rerope
from suite.encodings.rotary import DynamicRotary, Rotary
from suite.encodings.rotary_frequencies import Hope, PRope, ResonanceRotary
from suite.encodings.schedule import Schedule
from suite.encodings.simple import ALiBi, NoPE, Sandwich, Sinusoidal
from suite.encodings.string_rope import StringRope
from suite.encodings.t5 import T5Bias
from suite.encodings.temperature import Temperature
from suite.encodings.xpos import Xpos

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
