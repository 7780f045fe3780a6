"""A plugin module without the class its spec names."""

from suite.encodings.simple import NoPE


class Present(NoPE):
    pass
