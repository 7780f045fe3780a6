"""A class that is not a PositionalEncoding."""


class NotAnEncoding:
    pass
