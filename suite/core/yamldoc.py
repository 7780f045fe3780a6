"""YAML files with line numbers, and the spec errors that name file, line and field.

Reading is bounded, because a spec may come from anyone (a pull request): a file is
refused before it is parsed when it is larger than :data:`MAX_BYTES`, is not UTF-8,
or holds control bytes; while it is composed, when it uses more than
:data:`MAX_ALIASES` aliases or nests deeper than :data:`MAX_DEPTH`; and before it is
constructed, when its aliases would expand it beyond :data:`MAX_NODES` nodes or refer
to themselves. A 400-byte "billion laughs" is refused in milliseconds, and nothing
here ever walks a document with its aliases expanded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from suite.core.boundary.text import MAX_TEXT, text_problem

MAX_BYTES = 1 << 20  # a spec is a few hundred bytes; 1 MiB leaves room for long descriptions
MAX_ALIASES = 64  # a few anchors for shared settings; an alias bomb needs many more
MAX_DEPTH = 64  # nesting of mappings and lists
MAX_NODES = 100_000  # nodes of the document with every alias expanded
MAX_INT = 2**63 - 1  # what every consumer (torch, DuckDB, JSON readers) can hold
ALLOWED_CONTROLS = "\t\n\r"

# -- errors ---------------------------------------------------------------------


@dataclass(frozen=True)
class SpecError:
    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field}: {self.message}"


class SpecErrors(Exception):
    def __init__(self, errors: list[SpecError]):
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))


# -- YAML with line numbers --------------------------------------------------------


@dataclass
class YamlDoc:
    """A parsed YAML file plus the line of every key path in it."""

    path: Path
    data: Any
    lines: dict[tuple, int] = field(default_factory=dict)
    problems: list[SpecError] = field(default_factory=list)

    def line(self, loc: tuple) -> int:
        """The line of the deepest known prefix of ``loc`` (1 for the document)."""
        for end in range(len(loc), 0, -1):
            if loc[:end] in self.lines:
                return self.lines[loc[:end]]
        return 1

    def error(self, loc: tuple, message: str) -> SpecError:
        return SpecError(str(self.path), self.line(loc), ".".join(str(p) for p in loc) or "(file)", message)


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader, counting aliases and depth while it composes."""

    def __init__(self, stream):
        super().__init__(stream)
        self.aliases = 0
        self.depth = 0
        self.alias_lines: dict[tuple, int] = {}  # (id(sequence node), index) -> line of an alias item

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            mark = self.peek_event().start_mark
            if self.aliases > MAX_ALIASES:
                raise yaml.composer.ComposerError(None, None, f"more than {MAX_ALIASES} aliases: refused (alias bomb?)", mark)
            self.alias_lines[(id(parent), index)] = mark.line + 1
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels: refused",
                                                  self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class _Refused(Exception):
    def __init__(self, node, message: str):
        self.line, self.message = node.start_mark.line + 1, message
        super().__init__(message)


def _expanded_size(node, sizes: dict, open_nodes: set) -> int:
    """Nodes of ``node`` with every alias expanded, counted over the alias graph (each
    node once, so this is linear in the file); a self-referring alias is refused."""
    if id(node) in sizes:
        return sizes[id(node)]
    if id(node) in open_nodes:
        raise _Refused(node, "an alias refers to a node that contains it (recursive alias): refused")
    open_nodes.add(id(node))
    children = node.value if isinstance(node, yaml.SequenceNode) else \
        [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else []
    size = 1
    for child in children:
        size += _expanded_size(child, sizes, open_nodes)
        if size > MAX_NODES:
            raise _Refused(node, f"expands to more than {MAX_NODES} nodes through aliases: refused (alias bomb?)")
    open_nodes.discard(id(node))
    sizes[id(node)] = size
    return size


def _index_lines(node, loc: tuple, doc: YamlDoc, seen_nodes: set, alias_lines: dict) -> None:
    """The line of every key path; an aliased node is indexed once, where it is defined
    (its other uses take the line of the key or the list item that names the alias)."""
    if id(node) in seen_nodes:
        return
    seen_nodes.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                doc.problems.append(SpecError(str(doc.path), line, ".".join(map(str, loc)) or "(file)",
                                              "a key must be a plain name, not a list or a mapping"))
                continue
            key = key_node.value
            if key in seen:
                doc.problems.append(SpecError(str(doc.path), line, ".".join(map(str, loc + (key,))), "duplicate key"))
            seen.add(key)
            doc.lines.setdefault(loc + (key,), line)
            _index_lines(value_node, loc + (key,), doc, seen_nodes, alias_lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            doc.lines.setdefault(loc + (i,), alias_lines.get((id(node), i), item.start_mark.line + 1))
            _index_lines(item, loc + (i,), doc, seen_nodes, alias_lines)


def _check_numbers(value, loc: tuple, doc: YamlDoc) -> None:
    """Non-finite floats and integers no consumer can hold, anywhere in the document; and text a
    terminal or a page must not receive (a control or bidirectional character written as a YAML
    escape, ``"\\e"``, ``"\\u202e"``), or longer than a paragraph (suite.core.boundary.text)."""
    if isinstance(value, bool):
        return
    if isinstance(value, str):
        problem = text_problem(value, MAX_TEXT, lines=True)
        if problem:
            doc.problems.append(doc.error(loc, problem))
    elif isinstance(value, float) and not math.isfinite(value):
        doc.problems.append(doc.error(loc, f"{value} is not a finite number"))
    elif isinstance(value, int) and abs(value) > MAX_INT:
        doc.problems.append(doc.error(loc, f"integer out of range (at most 2^63 - 1 in magnitude): {value}"))
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and (problem := text_problem(k, MAX_TEXT)):
                doc.problems.append(doc.error(loc, f"a key: {problem}"))
            _check_numbers(v, loc + (k,), doc)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_numbers(v, loc + (i,), doc)


def _refuse(path: Path, line: int, field_: str, message: str) -> SpecErrors:
    return SpecErrors([SpecError(str(path), line, field_, message)])


def read_text(path: Path) -> str:
    """The text of a spec file: at most MAX_BYTES of UTF-8 without control bytes."""
    if not path.is_file():
        raise _refuse(path, 1, "(file)", "no such file" if not path.exists() else "not a regular file")
    with open(path, "rb") as f:
        raw = f.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise _refuse(path, 1, "(file)", f"larger than {MAX_BYTES} bytes: refused (a spec is a few hundred bytes)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise _refuse(path, line, "(file)", f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    text = text.removeprefix("\ufeff")
    for i, ch in enumerate(text):
        if (ord(ch) < 32 and ch not in ALLOWED_CONTROLS) or 0x7F <= ord(ch) <= 0x9F:
            raise _refuse(path, text.count("\n", 0, i) + 1, "(file)", f"control character U+{ord(ch):04X} in the text: refused")
    return text


def read_yaml(path: Path) -> YamlDoc:
    """Parse ``path`` within the bounds above; a refusal or a syntax error is a
    :class:`SpecErrors` naming the line."""
    path = Path(path)
    text = read_text(path)
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _expanded_size(node, {}, set())
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise _refuse(path, (mark.line + 1) if mark else 1, "(syntax)", str(exc.problem or exc)) from None
    except _Refused as exc:
        raise _refuse(path, exc.line, "(syntax)", exc.message) from None
    except Exception as exc:  # a scalar a constructor cannot read (e.g. a bad !!timestamp)
        raise _refuse(path, 1, "(syntax)", f"cannot read the YAML: {type(exc).__name__}: {exc}") from None
    finally:
        loader.dispose()
    doc = YamlDoc(path, data)
    if node is not None:
        _index_lines(node, (), doc, set(), loader.alias_lines)
    if not isinstance(data, dict):
        doc.problems.append(SpecError(str(path), 1, "(file)", "expected a mapping of keys to values"))
    else:
        _check_numbers(data, (), doc)
    return doc
