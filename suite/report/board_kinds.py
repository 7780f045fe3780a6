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


BOARD_KINDS: Registry[BoardKind] = Registry("board kind", BoardKind)


def kind_of(board) -> type[BoardKind]:
    return BOARD_KINDS.get(board.kind)


@BOARD_KINDS.register("lm")
class LanguageModellingBoard(BoardKind):
    order = 0
    overlaid = True
    metric_in_id = False
    carries_checkpoint_columns = True
    # 0.1 bits per byte: beyond the training length encodings differ by tenths to whole bits
    # (ALiBi 2.86 against xPos 3.57 at 16x), while within it they agree to a few hundredths;
    # a tenth is about 3% of a tiny model's bpb, the least gap worth a ranking's claim
    effect = 0.1
    effect_unit = "bits per byte"

    @staticmethod
    def title(task, metric, size):
        return f"Language modelling: {task}, size {size}"


@BOARD_KINDS.register("task")
class TaskBoard(BoardKind):
    order = 1
    overlaid = True
    # 0.2 exact match: one example in five. Length generalization fails in steps (passkey
    # from 1.0 to 0 beyond the training length), so the differences a task board exists to
    # show are this large or larger; smaller ones are within a few hundred examples' noise
    effect = 0.2
    effect_unit = "exact match"

    @staticmethod
    def title(task, metric, size):
        return f"Task {task} ({metric}), size {size}"


@BOARD_KINDS.register("breakdown")
class BreakdownBoard(BoardKind):
    """A task's figures on the examples whose answer lies in one depth decile."""

    order = 2
    ranked = False
    compared = False

    @staticmethod
    def title(task, metric, size):
        return f"Task {task}: {metric} (examples of one {metric.split('_depth')[0]} depth decile), size {size}"


@BOARD_KINDS.register("glue")
class GlueBoard(BoardKind):
    """The GLUE-style battery of whole checkpoints (suite.report.leaderboard)."""

    # 0.05 of the score: fine-tuning scores of encodings on a backbone differ by a few points
    # (the papers report 1-5 GLUE points between them), so a ranking that cannot see five is moot
    effect = 0.05
    effect_unit = "GLUE-style score"


@BOARD_KINDS.register("cost")
class CostBoard(BoardKind):
    """Training cost, or a ``posbench bench`` record (suite.report.leaderboard)."""
