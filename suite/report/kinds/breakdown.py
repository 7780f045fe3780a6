"""The board kind of per-depth breakdowns: a task's figures on the examples of one depth decile."""

from __future__ import annotations

from suite.report.board_kinds import BOARD_KINDS, BoardKind


@BOARD_KINDS.register("breakdown")
class BreakdownBoard(BoardKind):
    """A task's figures on the examples whose answer lies in one depth decile."""

    order = 2
    ranked = False
    compared = False

    @staticmethod
    def title(task, metric, size):
        return f"Task {task}: {metric} (examples of one {metric.split('_depth')[0]} depth decile), size {size}"
