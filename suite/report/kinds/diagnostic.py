"""The board kind of diagnostics: what a model does beyond its score (attention sinks), at
every scale, one board per metric, never folded into a score or ranked."""

from __future__ import annotations

from suite.report.board_kinds import BOARD_KINDS
from suite.report.boards import ScaleBoardKind


@BOARD_KINDS.register()
class DiagnosticBoard(ScaleBoardKind):
    """The figures of metrics declared ``board: diagnostic``, a board per task, metric, size and recipe.

    A diagnostic has no better direction (a strong attention sink is neither good nor bad in
    itself), so its rows are shown with their intervals over seeds, not ranked: HELMET's lesson
    (Yen et al. 2025) that a composite hides what each category measures."""

    name = "diagnostic"
    heading = "Diagnostics"
    blurb = ("What the models do beyond their scores, each its own board and never part of one: attention-sink "
             "rate and strength (Gu et al. 2025), the first token's mean attention over the queries that see it; "
             "and key-token bits per byte (Fang et al. 2025, offline), the loss on the bytes a fixed reference "
             "predicts much better with long context than with the last L bytes, at each multiple of the "
             "training length. Not ranked.")
    order = 3
    ranked = False
    unranked_note = "A diagnostic: not ranked, and with no better direction."
    directed = False
    extrapolation_columns = False
    zero_warning = "Every row is 0 at every length."
    overlaid = True

    @staticmethod
    def title(task, metric, size):
        from suite.results.rows import metric_info

        info = metric_info().get(metric)
        return f"Diagnostic: {info.display_name if info else metric} on {task}, size {size}"
