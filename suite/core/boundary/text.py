"""Free text from outside (a display name, a paper, a description, a reason): what it may hold
where it is stored, and how any text reaches a terminal.

Stored text (:func:`text_problem`) holds no control character but tab and newline where a
field allows lines, no bidirectional override or isolate (U+202A-U+202E, U+2066-U+2069: they
reorder what a reader sees), no other format character of the ``Cf`` class that is invisible
(zero-width joiners are allowed: emoji and scripts need them), and at most a stated length.

Text on its way to a terminal (:func:`for_terminal`) keeps what it may hold and shows the
rest as ``\\x1b``-style escapes, so an escape sequence (colours, OSC-8 links, a cursor move)
is never sent raw; a line too long is cut with a note of how much was cut.
"""

from __future__ import annotations

import unicodedata

MAX_LABEL = 200  # a display name, a paper reference: one line of a table
MAX_TEXT = 10_000  # a description, a reason: a paragraph
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)}
_ALLOWED_FORMAT = {"\u200c", "\u200d"}  # zero-width (non-)joiner: scripts and emoji need them


def _bad(ch: str, lines: bool) -> bool:
    if ch in _BIDI:
        return True
    if lines and ch in "\t\n":
        return False
    category = unicodedata.category(ch)
    return category == "Cc" or (category == "Cf" and ch not in _ALLOWED_FORMAT) or category in ("Cs", "Co", "Cn") \
        or ch in "\u2028\u2029"


def text_problem(value, max_chars: int = MAX_LABEL, lines: bool = False) -> str | None:
    """What is wrong with ``value`` as stored text, or None (``lines``: tab and newline allowed)."""
    if not isinstance(value, str):
        return f"{type(value).__name__}, not text"
    if len(value) > max_chars:
        return f"{len(value)} characters: at most {max_chars} here"
    if value.isascii() and (value.isprintable() or lines and value.replace("\t", "").replace("\n", "").isprintable()):
        return None  # printable ASCII (U+0020-U+007E) holds none of the refused characters: no walk through it
    for i, ch in enumerate(value):
        if _bad(ch, lines):
            return f"character U+{ord(ch):04X} at position {i}: control and bidirectional characters are refused"
    return None


def check_text(value, what: str, max_chars: int = MAX_LABEL, lines: bool = False) -> str:
    problem = text_problem(value, max_chars, lines)
    if problem:
        raise ValueError(f"{what}: {problem}")
    return value


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def for_terminal(value, max_chars: int = MAX_TEXT, lines: bool = False) -> str:
    """``value`` as text a terminal shows as it is: controls and bidi characters escaped, cut to
    ``max_chars`` with a note of how many characters were cut."""
    text = str(value)
    cut = len(text) - max_chars
    if cut > 0:
        text = text[:max_chars]
    if any(_bad(ch, lines) for ch in text):
        text = "".join(_escape(ch) if _bad(ch, lines) else ch for ch in text)
    return text + (f" [... {cut} more characters cut]" if cut > 0 else "")
