"""A plugin with a syntax error (a bad input of tests/test_bad_inputs.py)."""

class Broken(:
    pass
