"""A rotary encoding that turns everything into NaN."""

from suite.encodings.base import PositionalEncoding


class NotFinite(PositionalEncoding):
    def rotate(self, q, k, q_pos, k_pos):
        return q * float("nan"), k
