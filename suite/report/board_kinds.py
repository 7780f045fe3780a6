"""Kinds of board behind one interface: how a board of each kind is titled, ordered,
ranked and shown. A :class:`suite.report.boards.Board` carries its kind's name (what
the site's markup and downloads say); code asks the kind, never compares the name.
"""

from __future__ import annotations

from typing import ClassVar

from suite.core.registry import Registry


class BoardKind:
    """The interface; subclasses are registered in :data:`BOARD_KINDS` by name."""

    order: ClassVar[int] = 9  # where its boards come among the scale boards
    ranked: ClassVar[bool] = True  # its rows get ranks
    compared: ClassVar[bool] = True  # its scale and score columns are offered in the compare view
    overlaid: ClassVar[bool] = False  # an overlay of every row's score against length (index and encoding pages)
    metric_in_id: ClassVar[bool] = True  # the metric is part of the board's id
    # the board of the checkpoints' own scores: the same checkpoints' GLUE-style score and
    # training cost are shown beside it (suite.report.leaderboard.attach_columns)
    carries_checkpoint_columns: ClassVar[bool] = False
    # the smallest difference between two rows a ranked board is meant to detect, in its ranked
    # column's unit (suite.report.ranking.seeds_needed): each board says whether its seeds can
    effect: ClassVar[float | None] = None
    effect_unit: ClassVar[str] = ""

    @staticmethod
    def title(task: str, metric: str, size: str) -> str:
        raise NotImplementedError


# its members are the modules of suite.report.kinds, one kind each, imported on the first lookup
BOARD_KINDS: Registry[BoardKind] = Registry("board kind", BoardKind, members="suite.report.kinds")


def kind_of(board) -> type[BoardKind]:
    return BOARD_KINDS.get(board.kind)
