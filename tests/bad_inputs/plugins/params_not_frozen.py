"""An encoding whose Params dataclass is not frozen."""

from dataclasses import dataclass

from suite.encodings.simple import NoPE


@dataclass
class PluginParams:
    base: float = 1.0


class Plugin(NoPE):
    Params = PluginParams
