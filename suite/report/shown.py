"""What a page shows at first, of what it holds: a board plot's top rows, a board table's columns in
the order a narrow screen hides them, the compare page's two rows, the order encodings take the
site's colours in, and whether a board's ranks say anything of a row. The pages
(:mod:`suite.report.pages`) and their script (``templates/base.html``) read these."""

from __future__ import annotations

from suite.report.boards import Board
from suite.report.leaderboard import Leaderboard


PLOT_TOP = 8  # the rows a board's plot shows at first (a reader shows more): eight lines stay readable


def first_shown(board: Board) -> set[str]:
    """The rows a board's plots show at first: its top :data:`PLOT_TOP` (the rows are best first)."""
    return {e.encoding for e in board.entries[:PLOT_TOP]}


def by_prominence(lb: Leaderboard) -> list[str]:
    """Every encoding on a board, those nearest the top of some board first (then by name): they
    take the palette's plain colours, and the rows a plot shows at first seldom share a colour."""
    best: dict[str, int] = {}
    for board in lb.all:
        for i, e in enumerate(board.entries):
            best[e.encoding] = min(best.get(e.encoding, i), i)
    return sorted(best, key=lambda name: (best[name], name))


def main_column(board: Board) -> str | None:
    """The column a board answers with: the one it ranks by, else its first score or cost column."""
    if board.ranked_by:
        return board.ranked_by
    return next((c.key for c in board.columns if c.group in ("score", "glue", "cost")),
                next((c.key for c in board.columns if c.group != "rank"), None))


def separates(board: Board) -> bool:
    """Whether a board's ranks tell any rows apart: some row's rank interval is not 1 to N. Where
    every interval is the whole range, a rank says nothing of a row (and every row "could be first")."""
    n = len(board.entries)
    return any(e.rank is not None and (e.rank > 1 or (e.rank_hi or n) < n) for e in board.entries)


# The order a narrow screen hides a board's columns in (the highest first, the rightmost first
# among equals; the site's script, base.html): the rank, the name, the score and the column the
# board ranks by (its headline's figure) never; then what the board adds beside its own figures.
KEEP = {"rank": 0, "score": 0, "scale": 1, "task": 1, "derived": 2, "glue": 3, "cost": 4}


def column_priority(board: Board, col) -> int:
    """0: always shown; higher: hidden sooner when the table would scroll sideways (:data:`KEEP`)."""
    return 0 if col.key == main_column(board) else KEEP.get(col.group, 4)


def compare_leaders(lb: Leaderboard, ov) -> list[str]:
    """The two rows the compare page opens on: the first two of the first question's canonical board
    with a figure at its ranked column (the headline's leaders, best first), so its plots open with
    data; else the first two rows of any comparable board."""
    boards = [a.board for a in ov.answers if a.board is not None and a.board.compared]
    boards += [b for b in lb.boards if b.compared]
    for board in boards:
        key = main_column(board)
        rows = [e.encoding for e in board.entries if key and e.cells.get(key) and e.cells[key].value is not None]
        if len(rows) >= 2:
            return rows[:2]
    return []
