"""Absolute paths of the machine that computed a record, left out of whatever leaves it.

A record keeps where its spec file and corpus lay (``encoding_source``, a folder corpus's
path, the corpus's description) because the machine that made it may need them again. A
published snapshot, a submission bundle and the site's pages and downloads are read by
others: there a path is shown from the project folder it lies in (``encodings/rope.yaml``),
or else by its last name only (``.../corpus``), never as ``/home/someone/...``.
"""

from __future__ import annotations

import re

PROJECT_FOLDERS = ("encodings", "tasks", "sizes", "grids", "results")
# an absolute path: '/' and two names or more, the first '/' starting a word. Not a ratio in a
# description ("bits/byte", "(n - m)/512", "d'/2"), a glob ("**/*.py") or a URL ("https://...").
ABSOLUTE = re.compile(r"(?<![\w.:/*)\]])/(?:[\w.~+-]+/)+[\w.~+-]*")


def display_path(path: str) -> str:
    """A path as others see it: from the project folder it lies in, or else only its last name,
    never the absolute path of the machine that ran it."""
    parts = [p for p in path.split("/") if p]
    for i, part in enumerate(parts[:-1]):
        if part in PROJECT_FOLDERS:
            return "/".join(parts[i:])
    return f".../{parts[-1]}" if parts else path


def without_machine_paths(value):
    """``value`` (JSON-like) with every absolute path in its strings shortened by :func:`display_path`."""
    if isinstance(value, str):
        return ABSOLUTE.sub(lambda m: display_path(m.group(0)), value)
    if isinstance(value, dict):
        return {k: without_machine_paths(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [without_machine_paths(v) for v in value]
    return value


def has_machine_path(text: str) -> bool:
    """Whether ``text`` still holds an absolute path (what the published artefacts are checked for)."""
    return ABSOLUTE.search(text) is not None
