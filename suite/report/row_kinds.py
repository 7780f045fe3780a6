"""Positional encodings ranked among themselves; architecture changes on boards of their own,
each beside its base encoding.

A spec declares what its row is (``kind`` in encodings/*.yaml, suite.specs.encoding): a
positional encoding changes only how position enters, with weights within 1% of NoPE's
(suite.submission.weights); an architecture change (Canon layers, gated attention, MLA, the
Qwen3-Next layout, layer schedules) changes more, so a lead it shows may come from capacity or
token mixing rather than from position (Canon layers lead ALiBi by 0.58 bits per byte at 1x and
at 16x alike). Every ranked kind (a column per scale, or a fine-tuned battery) builds its boards
twice from the same figures: once from the positional rows, once from the architecture changes
with the rows of their bases, as a board whose id ends in ``-architecture``. A row is an
architecture change when its encoding is one or evaluates one's checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import lru_cache
from pathlib import Path

import yaml

from suite.report.board_types import Board

SHIPPED = Path(__file__).resolve().parents[2] / "encodings"
SUFFIX = "architecture"
TITLE = ": architecture changes beside their base encodings"
NOTE = ("Architecture changes (extra layers, token mixing, gates, latents, layer schedules) beside the positional "
        "encodings they are built on, ranked among these rows only: not among positional encodings, whose boards "
        "leave them out, since their leads may come from capacity or mixing rather than from position.")


@lru_cache
def architecture_changes(folder: Path = SHIPPED) -> dict[str, str]:
    """name -> base of every spec in ``folder`` declared ``kind: architecture``."""
    out = {}
    for path in sorted(folder.glob("*.yaml")):
        spec = yaml.safe_load(path.read_text()) or {}
        if spec.get("kind") == "architecture" and spec.get("base"):
            out[spec.get("name", path.stem)] = spec["base"]
    return out


def _changed(figure: dict, changes: dict[str, str]) -> str | None:
    """The architecture change ``figure``'s row is (its encoding, or the checkpoint it evaluates)."""
    for name in (figure["encoding"], figure.get("trained_as")):
        if name in changes:
            return name
    return None


def split_groups(groups: dict[Hashable, list[dict]], changes: dict[str, str]
                 ) -> tuple[dict[Hashable, list[dict]], dict[Hashable, list[dict]]]:
    """(the positional rows' groups, the architecture changes' groups with their bases' rows)."""
    positional: dict[Hashable, list[dict]] = {}
    beside: dict[Hashable, list[dict]] = {}
    for key, rows in groups.items():
        mine = [f for f in rows if _changed(f, changes) is None]
        changed = [f for f in rows if _changed(f, changes) is not None]
        if mine:
            positional[key] = mine
        if changed:
            bases = {changes[_changed(f, changes)] for f in changed}
            beside[key] = changed + [f for f in mine if f["encoding"] in bases]
    return positional, beside


def build_split(build: Callable[[dict], list[Board]], groups: dict[Hashable, list[dict]],
                changes: dict[str, str] | None = None) -> list[Board]:
    """``build`` (a kind's, from groups of figures) of the positional rows, each board followed by
    the board of its architecture changes, if it has any."""
    changes = architecture_changes() if changes is None else changes
    positional, beside = split_groups(groups, changes)
    boards = build(positional) if positional else []
    for board in build(beside) if beside else []:
        mark(board)
        at = next((k for k, b in enumerate(boards) if f"{b.id}-{SUFFIX}" == board.id), None)
        boards.insert(len(boards) if at is None else at + 1, board)
    return boards


def mark(board: Board) -> None:
    board.id = f"{board.id}-{SUFFIX}"
    board.title += TITLE
    board.architecture = True
    board.notes.insert(0, NOTE)


def split_build(kind, sources) -> list[Board]:
    """A kind's boards (suite.report.board_kinds.BoardKind) from ``sources``: split as above when
    its rows are encodings compared at a recipe (a column per scale, a fine-tuned battery); a
    cost or a bench board measures every row as it is and is built whole."""
    groups = sources.selected[kind.name]
    if not (kind.per_scale or kind.fine_tuned):
        return kind.build(groups, sources)
    return build_split(lambda chosen: kind.build(chosen, sources), groups)
