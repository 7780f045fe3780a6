"""A board whose figures move between machine classes by more than its intervals: said on the board.

Under the pinned numerics a figure is bit-identical on the machine class its record names
(suite.core.machine); on another class it moves within a measured tolerance
(suite/results/tolerances.yaml). Where that tolerance is wider than the board's typical interval
(a tiny model past zero training loss decides its 16x flip-flop answers by rounding: 0.07 of
accuracy between two AMD EPYC generations), the ranking is arithmetic-sensitive: the board says
so, and says on which classes its headline was re-checked and whether it held there.
"""

from __future__ import annotations

from statistics import median

from suite.report.board_types import Board
from suite.results.tolerances import Tolerances


def typical_half_width(board: Board) -> float | None:
    """The median half-width of the intervals in the column the board ranks by (else any column)."""
    columns = [board.ranked_by] if board.ranked_by else [c.key for c in board.columns]
    widths = [cell.interval.half_width for entry in board.entries for key in columns
              if (cell := entry.cells.get(key)) is not None and cell.has_bounds]
    return median(widths) if widths else None


def is_sensitive(board: Board, table: Tolerances) -> bool:
    """Whether the board's kind of figure may move across classes by more than its typical
    interval: whether its tolerance (twice the largest move seen, rounded up) is wider."""
    entry = table.entry(f"{board.task} {board.metric}")
    width = typical_half_width(board)
    return entry is not None and width is not None and entry.tolerance > width


def arithmetic_note(board: Board, table: Tolerances) -> str | None:
    """The board's note when its metric moves across machine classes by more than its typical
    interval, or when its headline was seen not to hold on a class; else None."""
    kind = f"{board.task} {board.metric}"
    entry = table.entry(kind)
    width = typical_half_width(board)
    checked = table.headlines.get(board.id, {})
    failed = sorted(cls for cls, state in checked.items() if state != "holds")
    sensitive = is_sensitive(board, table)
    if not sensitive and not failed:
        return None
    parts = []
    if sensitive:
        which = ("a figure of this kind" if kind in table.kinds
                 else f"{board.metric} on another task (this task's figures were not re-run)")
        # the tolerance, not the largest move seen, is what verify and replicate allow on another
        # class: a board is flagged when that allowance could reorder its rows
        parts.append(f"Arithmetic-sensitive: across machine classes {which} may move by up to "
                     f"{entry.tolerance:.2g} (its measured tolerance; the largest move seen: {entry.largest:.3g}), "
                     f"more than this board's typical interval (±{width:.3g}); "
                     "a record is bit-identical only on the machine class it names.")
    held = sorted(cls for cls, state in checked.items() if state == "holds")
    if held:
        parts.append(f"Its headline held when re-run on {'; '.join(held)}.")
    if failed:
        parts.append(f"Its headline did not hold when re-run on {'; '.join(failed)}.")
    elif sensitive and not held:
        parts.append("Its headline has not been re-run on another machine class.")
    return " ".join(parts)
