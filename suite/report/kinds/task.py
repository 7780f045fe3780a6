"""The board kind of the length-generalization tasks: a task's metric at every scale."""

from __future__ import annotations

from suite.report.board_kinds import BOARD_KINDS
from suite.report.boards import ScaleBoardKind


@BOARD_KINDS.register()
class TaskBoard(ScaleBoardKind):
    """The figures of metrics declared ``board: task``, a board per task, metric, size and recipe."""

    name = "task"
    heading = "Length-generalization tasks"
    blurb = ("Exact-match accuracy (lm-eval's greedy flag) of models trained on each task at lengths up to L and "
             "tested at s x L.")
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
