"""A real encoding plugin that lives outside the package (loaded by file path in tests):
sinusoidal positions that refuse to represent anything beyond the training length."""

from suite.encodings.base import ScaleBehaviour
from suite.encodings.simple import Sinusoidal


class BoundedSinusoidal(Sinusoidal):
    @property
    def scale_behaviour(self):
        return ScaleBehaviour.NOT_APPLICABLE

    def max_length(self):
        return self.dims.train_len


class Exploding(Sinusoidal):
    """Fails inside training, to show a failed cell is recorded and the grid goes on."""

    def embed(self, x, pos):
        raise RuntimeError("this encoding always fails")
