"""The console every line of posbench reaches a terminal through.

A message may carry text from outside (a file name, a record's display name, a spec's value in
an error), and a terminal acts on control sequences: ESC starts colours, cursor moves and OSC-8
links, BEL rings, a backspace or a carriage return overwrites what was printed, U+202E turns
the rest of a line around. :class:`TerminalConsole` is rich's console with every string it is
given shown through :func:`suite.core.boundary.text.for_terminal` first (newlines and tabs kept;
rich markup, which is only brackets, untouched), so nothing from a file reaches the terminal raw.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from suite.core.boundary.text import for_terminal

MAX_MESSAGE = 100_000  # characters of one printed string: a 20 MB value is cut with a note


def safe(value):
    """A printable of rich's (a string or a Text) with its text made safe for a terminal."""
    if isinstance(value, str):
        return for_terminal(value, MAX_MESSAGE, lines=True)
    if isinstance(value, Text):
        plain = for_terminal(value.plain, MAX_MESSAGE, lines=True)
        return value if plain == value.plain else Text(plain, style=value.style)
    return value


def one_line(message: str) -> str:
    """An error message as the one line it is: a newline or a control inside it is shown escaped."""
    return for_terminal(message, MAX_MESSAGE)


class TerminalConsole(Console):
    def print(self, *objects, **kwargs) -> None:  # noqa: A003 (rich's name)
        super().print(*(safe(o) for o in objects), **kwargs)
