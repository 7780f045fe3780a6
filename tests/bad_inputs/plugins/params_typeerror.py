"""An encoding whose Params check raises TypeError (pydantic only converts ValueError)."""

from dataclasses import dataclass

from suite.encodings.simple import NoPE


@dataclass(frozen=True)
class PluginParams:
    base: int = 1

    def __post_init__(self):
        raise TypeError("base must be a float")


class Plugin(NoPE):
    Params = PluginParams
