"""YAML files with line numbers, and the spec errors that name file, line and field."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

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


def _index_lines(node, loc: tuple, doc: YamlDoc) -> None:
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key_node, value_node in node.value:
            key = key_node.value
            if key in seen:
                doc.problems.append(SpecError(str(doc.path), key_node.start_mark.line + 1, ".".join(map(str, loc + (key,))), "duplicate key"))
            seen.add(key)
            doc.lines[loc + (key,)] = key_node.start_mark.line + 1
            _index_lines(value_node, loc + (key,), doc)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            doc.lines[loc + (i,)] = item.start_mark.line + 1
            _index_lines(item, loc + (i,), doc)


def read_yaml(path: Path) -> YamlDoc:
    """Parse ``path``; syntax errors become a :class:`SpecErrors` naming the line."""
    path = Path(path)
    if not path.is_file():
        raise SpecErrors([SpecError(str(path), 1, "(file)", "no such file")])
    text = path.read_text()
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise SpecErrors([SpecError(str(path), (mark.line + 1) if mark else 1, "(syntax)", str(exc.problem or exc))]) from None
    doc = YamlDoc(path, data)
    if node is not None:
        _index_lines(node, (), doc)
    if not isinstance(data, dict):
        doc.problems.append(SpecError(str(path), 1, "(file)", "expected a mapping of keys to values"))
    return doc
