"""An encoding whose Params is a plain class, not a frozen dataclass."""

from suite.encodings.simple import NoPE


class Plugin(NoPE):
    class Params:
        base = 1.0
