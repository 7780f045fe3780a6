"""What a name may be: the allow-list for every value that becomes a file name, a page name,
a job name or a word of a generated script.

A spec's name is its file's name (``grids/<name>.yaml``), a record's names become page names
and links, and a grid's name is written into ``job.sbatch``: so a name is letters, digits,
``_``, ``.`` and ``-``, not starting with ``.`` or ``-`` (no hidden file, no option, no ``/``,
no URL scheme, no space, no control character), at most :data:`MAX_NAME` characters.
"""

from __future__ import annotations

import re

NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
MAX_NAME = 200  # a page is <name>.html: a file name holds 255 bytes
NAME_FORM = "letters, digits, '_', '.', '-'; not starting with '.' or '-'"


def is_name(value) -> bool:
    return isinstance(value, str) and len(value) <= MAX_NAME and NAME.fullmatch(value) is not None


def name_problem(value) -> str | None:
    """What is wrong with ``value`` as a name, or None."""
    if not isinstance(value, str):
        return f"{value!r} is not a name"
    if len(value) > MAX_NAME:
        return f"{len(value)} characters: a name has at most {MAX_NAME}"
    if NAME.fullmatch(value) is None:
        return f"{value!r} is not a name ({NAME_FORM})"
    return None


def check_name(value, what: str) -> str:
    """``value`` when it is a name; ValueError ``what: problem`` otherwise."""
    problem = name_problem(value)
    if problem:
        raise ValueError(f"{what}: {problem}")
    return value
