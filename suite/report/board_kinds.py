"""Kinds of board behind one interface: which figures a kind shows, how it builds, titles, orders,
ranks and shows its boards. Each kind is one module of :mod:`suite.report.kinds`, registered in
:data:`BOARD_KINDS`; :func:`suite.report.leaderboard.build` offers every figure to every kind and
concatenates their boards in kind order. A :class:`suite.report.board_types.Board` carries its
kind's name (what the site's markup and downloads say); code asks the kind, never compares the name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Hashable

from suite.core.registry import Registry

if TYPE_CHECKING:
    from suite.report.board_types import Board
    from suite.report.figures import Sources


class BoardKind:
    """The interface; subclasses are registered in :data:`BOARD_KINDS` under their ``name``."""

    name: ClassVar[str]  # its boards' kind and the first part of their ids (lm-tiny-lm)
    heading: ClassVar[str] = ""  # the title of its section of the site
    blurb: ClassVar[str] = ""  # a sentence or two of plain text under the heading: what its boards show
    order: ClassVar[int] = 9  # where its boards come among the others (sections, Leaderboard.all)
    ranked: ClassVar[bool] = True  # its rows get ranks
    unranked_note: ClassVar[str] = "Not ranked."  # what an unranked kind's boards say instead of ranks
    directed: ClassVar[bool] = True  # its metrics have a better direction (a diagnostic's have none)
    extrapolation_columns: ClassVar[bool] = True  # a per-scale board's extrapolation score and effective length
    # a per-scale board's "change 1x to the longest scale" column, and its headline's share of the
    # lead already there at 1x: how much of a row's lead is extrapolation, how much is quality
    change_column: ClassVar[bool] = False
    # what a board of shares that are 0 everywhere (and no chance level) says instead of ranks
    zero_warning: ClassVar[str] = "Every row scores 0 at every length: no encoding solves this task, so it is not ranked."
    compared: ClassVar[bool] = True  # its scale and score columns are offered in the compare view
    overlaid: ClassVar[bool] = False  # an overlay of every row's score against length (index and encoding pages)
    across_corpora: ClassVar[bool] = False  # its figures are a corpus's text: compared code against prose (corpus_view)
    metric_in_id: ClassVar[bool] = True  # the metric is part of the board's id
    # the board of the checkpoints' own scores: the same checkpoints' GLUE-style score and
    # training cost are shown beside it (lent by those kinds: BoardKind.lend)
    carries_checkpoint_columns: ClassVar[bool] = False
    # which of the Leaderboard's older lists holds its boards (the site's pages read them):
    per_scale: ClassVar[bool] = False  # a column per evaluation scale (Leaderboard.boards)
    fine_tuned: ClassVar[bool] = False  # scores of checkpoints fine-tuned on a battery (Leaderboard.glue)
    measures_cost: ClassVar[bool] = False  # what training or evaluation costs (Leaderboard.cost)
    # the smallest difference between two rows a ranked board is meant to detect, in its ranked
    # column's unit (suite.report.ranking.seeds_needed): each board says whether its seeds can
    effect: ClassVar[float | None] = None
    effect_unit: ClassVar[str] = ""

    @staticmethod
    def title(task: str, metric: str, size: str) -> str:
        raise NotImplementedError

    @classmethod
    def select(cls, figure: dict, run: dict | None) -> Hashable | None:
        """The group (one board, or a part of one) of ``figure``, a row of the figures view, on this
        kind's boards; None: not shown here. ``run``: its training run's row (suite.report.figures.load_runs)."""
        return None

    @classmethod
    def build(cls, groups: dict[Hashable, list[dict]], sources: Sources) -> list[Board]:
        """This kind's boards, in order, from the figures it selected (group -> figures) and the
        database's other sources."""
        return []

    @classmethod
    def lend(cls, boards: list[Board], carriers: list[Board]) -> None:
        """Add columns of ``boards`` (this kind's) to ``carriers``, the boards whose kind carries
        checkpoint columns; called in kind order once every kind has built its boards."""


# its members are the modules of suite.report.kinds, one kind each, imported on the first lookup
BOARD_KINDS: Registry[BoardKind] = Registry("board kind", BoardKind, members="suite.report.kinds")


def kind_of(board) -> type[BoardKind]:
    return BOARD_KINDS.get(board.kind)


def ordered_kinds() -> list[type[BoardKind]]:
    """Every registered kind, in the order its boards are shown (its ``order``, then its name)."""
    return sorted(BOARD_KINDS.values(), key=lambda kind: (kind.order, kind.name))
