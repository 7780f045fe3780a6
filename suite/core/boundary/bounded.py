"""The one reader of JSON and gzip JSON lines from outside: streaming, and bounded before it
parses or keeps anything.

A snapshot file, a record file, SNAPSHOT.json or a manifest may come from anyone. A gzip
stream of a few kilobytes can expand to gigabytes (a "gzip bomb"), one line can be a
gigabyte, a JSON value can nest a million levels or hold a string of hundreds of megabytes.
So every such file is read here, under :class:`Bounds`:

* ``bytes``: decompressed bytes read in all; the stream is refused as soon as it passes them,
  having read at most ``bytes`` + one line;
* ``line``: the bytes of one line (one record), read with a bounded ``readline``;
* ``records``: the lines that hold a value;
* ``depth``: the nesting of a value's lists and objects;
* ``string``: the characters of any string or key.

Lines are parsed and handed on one at a time (:func:`json_lines` is a generator), so a caller
that checks each one refuses a bad stream at its first bad line, and memory holds one line
plus what the caller keeps. The file itself must be a regular file reached through no link
(a FIFO would block the reader for ever). Every refusal is a :class:`Refused` whose message
names the line and what is wrong.
"""

from __future__ import annotations

import gzip
import json
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

KiB, MiB = 1 << 10, 1 << 20


@dataclass(frozen=True)
class Bounds:
    bytes: int
    line: int
    records: int
    depth: int = 32
    string: int = 64 * KiB


# The published snapshot's largest file holds 99 MB in 12,971 lines of at most 12 KB (bench
# lines: 100 KB), nesting 9 deep, strings of at most 958 characters: these leave it room to grow.
SNAPSHOT_LINES = Bounds(bytes=512 * MiB, line=1 * MiB, records=200_000)
RECORD_FILE = Bounds(bytes=8 * MiB, line=8 * MiB, records=1)  # results/runs/<id>.json: a few KB
SMALL_JSON = Bounds(bytes=1 * MiB, line=1 * MiB, records=1)  # SNAPSHOT.json, a claim, a verify result
MANIFEST = Bounds(bytes=256 * MiB, line=256 * MiB, records=1)  # a SLURM manifest of many runs


class Refused(ValueError):
    """A file or a line this reader will not read; ``str()`` says where and why."""


def open_regular(path: Path):
    """A binary file object of ``path``, which must be a regular file and not a link; opened
    without blocking, so a FIFO is refused instead of waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise Refused("missing") from None
    except OSError as exc:
        raise Refused("a link, not a file of its own" if os.path.islink(path) else f"cannot open: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Refused("not a regular file (a FIFO, a folder or a device): refused")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


_SCALARS = frozenset({int, float, bool, type(None)})
_CONTAINERS = (dict, list)


def check_shape(value, bounds: Bounds, where: str = "", strings: bool = True) -> None:
    """Refused when ``value`` nests deeper than ``bounds.depth`` or holds a string (or a key)
    longer than ``bounds.string`` (``strings=False``: the caller knows none can be, its text
    being shorter). A list of numbers is passed over by the types it holds, at C speed."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > bounds.depth:
            raise Refused(f"{where}nested deeper than {bounds.depth} levels: refused")
        values = list(item.values()) if isinstance(item, dict) else item
        if strings and isinstance(item, dict) and item and max(map(len, item)) > bounds.string:
            raise Refused(f"{where}a key of more than {bounds.string} characters: refused")
        kinds = set(map(type, values))
        if kinds <= _SCALARS:
            continue
        if strings and str in kinds:
            longest = max(len(v) for v in values if type(v) is str)
            if longest > bounds.string:
                raise Refused(f"{where}a string of {longest} characters (at most {bounds.string}): refused")
        if dict in kinds or list in kinds:
            stack.extend((v, depth + 1) for v in values if type(v) in _CONTAINERS)


def _parse(line: bytes, bounds: Bounds, where: str, what: str):
    try:
        value = json.loads(line)
    except RecursionError:
        raise Refused(f"{where}nested deeper than {bounds.depth} levels: refused") from None
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise Refused(f"{where}not {what} ({type(exc).__name__}: {exc})") from None
    if isinstance(value, str) and len(value) > bounds.string:
        raise Refused(f"{where}a string of {len(value)} characters (at most {bounds.string}): refused")
    if isinstance(value, (dict, list)):
        check_shape(value, bounds, where, strings=len(line) > bounds.string)
    return value


def json_lines(path: Path, bounds: Bounds = SNAPSHOT_LINES) -> Iterator[tuple[int, object]]:
    """(line number, JSON value) of every non-blank line of ``path`` (gzip when its name ends
    in ``.gz``), one at a time, within ``bounds``."""
    path = Path(path)
    raw = open_regular(path)
    budget, number, records = bounds.bytes, 0, 0
    try:
        with raw, (gzip.GzipFile(fileobj=raw, mode="rb") if path.name.endswith(".gz") else raw) as f:
            while line := f.readline(bounds.line + 1):
                number += 1
                budget -= len(line)
                if budget < 0:
                    raise Refused(f"more than {bounds.bytes} bytes{' uncompressed' if path.name.endswith('.gz') else ''}: "
                                  "refused (a gzip bomb?)")
                if len(line) > bounds.line:
                    raise Refused(f"line {number}: longer than {bounds.line} bytes: refused")
                if not line.strip():
                    continue
                records += 1
                if records > bounds.records:
                    raise Refused(f"more than {bounds.records} records: refused")
                yield number, _parse(line, bounds, f"line {number}: ", "a JSON record")
    except (OSError, EOFError, zlib.error) as exc:  # not gzip (BadGzipFile is an OSError), truncated, corrupt
        raise Refused(f"not a readable {'gzip ' if path.name.endswith('.gz') else ''}stream "
                      f"({type(exc).__name__}: {exc})") from None


def read_json(path: Path, bounds: Bounds = SMALL_JSON):
    """The one JSON value of ``path`` (a whole file, which may span lines), within ``bounds``."""
    with open_regular(Path(path)) as f:
        data = f.read(bounds.bytes + 1)
    if len(data) > bounds.bytes:
        raise Refused(f"larger than {bounds.bytes} bytes: refused")
    if not data.strip():
        raise Refused("empty file")
    return _parse(data, bounds, "", "valid JSON")
