"""A toy board kind, written as a new kind is: one module that registers itself in BOARD_KINDS,
picks its figures and builds its boards with the report's public machinery
(suite.report.board_parts), and touches no other file. Imported by tests/report/test_board_kinds.py,
which withdraws it after each test.

Its boards: per size, each encoding's bits at the training length (1x) over its seeds, of every
metric in bits that is on some board (bpb; not bpb_lmeval, which its declaration keeps off them).
"""

from __future__ import annotations

from collections import defaultdict

from suite.report.board_kinds import BOARD_KINDS, BoardKind
from suite.report.board_parts import entry_of, interval_text, is_usable, seed_cell, slug
from suite.report.board_types import Board, Column, Entry
from suite.results.rows import board_of, declaration


@BOARD_KINDS.register()
class ToyBoard(BoardKind):
    """Bits at 1x, one board per size and metric: a kind no template or other module knows of."""

    name = "toy"
    heading = "Toy boards"
    blurb = "Each encoding's bits at the training length, per size: a kind added by one module."
    order = 6  # after every shipped kind
    ranked = False
    compared = False

    @classmethod
    def select(cls, figure: dict, run: dict | None) -> tuple | None:
        info = declaration(figure["metric"])
        if figure["scale"] != 1 or info is None or info.unit != "bits" or board_of(figure["metric"]) is None:
            return None
        return figure["size"], figure["metric"]

    @classmethod
    def build(cls, groups: dict[tuple, list[dict]], sources) -> list[Board]:
        boards = []
        for (size, metric), rows in sorted(groups.items()):
            entries: dict[str, Entry] = {}
            by_entry: dict[str, list[dict]] = defaultdict(list)
            for f in rows:
                entries.setdefault(f["encoding"], entry_of(f))
                by_entry[f["encoding"]].append(f)
            for encoding, entry in entries.items():
                entry.cells["bits"], entry.per_seed["bits"] = seed_cell(by_entry[encoding], share=False)
            seeds = sorted({f["seed"] for f in rows if is_usable(f)})
            boards.append(Board(
                id=slug(cls.name, size, metric), kind=cls.name, title=f"Toy: {metric} at 1x, size {size}", size=size,
                task="toy", metric=metric, entries=sorted(entries.values(), key=lambda e: e.encoding), seeds=seeds,
                columns=[Column("bits", f"{metric} 1x", "1x", f"{metric} at the training length", True, 3, "score")],
                method=interval_text(len(seeds), share=False), lower_is_better=True))
        return boards
