"""The board kind of per-depth breakdowns: a task's figures on the examples of one depth decile."""

from __future__ import annotations

from suite.report.board_kinds import BOARD_KINDS
from suite.report.boards import ScaleBoardKind
from suite.results.rows import breakdown_of


@BOARD_KINDS.register()
class BreakdownBoard(ScaleBoardKind):
    """A task's figures on the examples whose answer lies in one depth decile: the breakdowns of
    the metrics declared ``breakdown_board: breakdown``."""

    name = "breakdown"
    heading = "Per-depth breakdowns"
    blurb = ("Each board is made of the examples whose answer lies in one depth decile: a diagnostic of a few "
             "examples per decile, not ranked.")
    order = 2
    ranked = False
    unranked_note = "A breakdown of a few examples per decile: not ranked."
    compared = False

    @staticmethod
    def title(task, metric, size):
        base, field, _ = breakdown_of(metric) or (metric, "depth", "")
        return f"Task {task}: {metric} (examples of one {base} {field} decile), size {size}"
