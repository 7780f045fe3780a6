"""One line per ranked board: its best entry and whether it is significantly ahead.

"At 16x: ALiBi, ahead of every other entry (paired over seeds, p < 0.05)" when every
paired test of the best entry against another is significant in its favour; otherwise
how far the lead goes: ahead of some, or tied with the next (the entries that share
rank 1). The site puts these lines at its top, and ``posbench leaderboard`` under each
board's title.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from suite.report import stats

if TYPE_CHECKING:
    from suite.report.boards import Board


def _names(entries) -> str:
    names = [e.display_name for e in entries]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def headline(board: Board, column: str) -> str | None:
    """The line for ``board`` ranked by ``column`` (entries already sorted best first)."""
    ranked = [e for e in board.entries if e.rank is not None and e.per_seed.get(column)]
    if not ranked:
        return None
    label = f"At {column[1:]}x" if column[1:].isdigit() else board.column(column).label
    first = [e for e in ranked if e.rank == 1]
    best, others = first[0], [e for e in ranked if e is not first[0]]
    if not others:
        return f"{label}: {best.display_name}, the only ranked entry."
    if len(board.seeds) < 2:
        return f"{label}: {best.display_name} leads on one seed; with one seed no lead is significant."
    if len(first) > 1:
        return f"{label}: {_names(first)} tie for first (no paired difference between them at p < {stats.ALPHA})."
    sign = -1.0 if board.lower_is_better else 1.0
    ahead = [o for o in others if _beats(best, o, column, sign)]
    if len(ahead) == len(others):
        return f"{label}: {best.display_name}, ahead of every other entry (paired over seeds, p < {stats.ALPHA})."
    return (f"{label}: {best.display_name}, ahead of {len(ahead)} of the {len(others)} other entries "
            f"(paired over seeds, p < {stats.ALPHA}); not significantly ahead of "
            f"{_names([o for o in others if o not in ahead])}.")


def _beats(a, b, column: str, sign: float) -> bool:
    c = stats.paired_comparison(a.per_seed[column], b.per_seed[column])
    return c.mean_difference is not None and sign * c.mean_difference > 0 and c.significant(stats.ALPHA)
