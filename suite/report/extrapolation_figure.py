"""Extrapolation as its own figure: each row of a language-modelling board at 1x (x) against its
change from 1x to the longest scale (y), with 95% intervals over seeds.

A figure at the longest scale mixes two things: how good a model is within its training length,
and how much it loses beyond it. A row can lead at 16x by being better everywhere (Canon layers
lead ALiBi by 0.583 bits per byte at 1x and 0.579 at 16x: no extrapolation in it) or by losing
less. The two axes keep them apart: left is better within the training length, low is less lost
beyond it. Drawn with the site's own scatter (suite.report.plots.scatter_plot); a point is a row's
``<g class="series">``, so the board's filter and its legend's toggles act on it as on its other plot.
"""

from __future__ import annotations

from suite.report import plots
from suite.report.board_types import Board


def extrapolation_figure(board: Board, shown: set[str] | None = None) -> str:
    """The figure of ``board`` (empty for a board without a change column); ``shown``: the rows
    shown at first (the others drawn hidden, for the page's script), and then the page's legend
    serves, not the plot's own."""
    if not any(c.key == "change" for c in board.columns):
        return ""
    longest = max(board.scales)
    points = []
    for e in board.entries:
        at_1, change = e.cells.get("s1"), e.cells.get("change")
        if at_1 is None or change is None or at_1.value is None or change.value is None:
            continue
        points.append(plots.Point(e.encoding, e.display_name, at_1.value, change.value,
                                  (at_1.interval.lo, at_1.interval.hi) if at_1.has_bounds else None,
                                  (change.interval.lo, change.interval.hi) if change.has_bounds else None,
                                  hidden=shown is not None and e.encoding not in shown))
    if len(points) < 2:
        return ""
    what = board.metric or "value"
    return plots.scatter_plot(points, title=f"Extrapolation apart from quality: {what} at 1x and its change to {longest}x",
                              xlabel=f"{what} at 1x (within the training length)",
                              ylabel=f"{what} {longest}x minus 1x (lost beyond it)", legend=shown is None)
