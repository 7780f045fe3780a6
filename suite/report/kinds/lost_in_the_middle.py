"""The board kind of lost-in-the-middle grids: one encoding's accuracy by where the answer lies
in the context (a row per depth decile) and by length (a column per scale).

Liu et al. 2024 ("Lost in the Middle: How Language Models Use Long Contexts", TACL 12, Fig. 1
and Sec. 2.2) plot accuracy against the position of the relevant document, at each context
length, and find it U-shaped: best at the start and the end, worst in the middle. RULER's
needle tasks and the passkey task place the needle at a depth decile drawn for each example
and record it (suite.data.memory_tasks, suite.data.ruler_tasks: ``meta["depth"]``); the task
evaluator breaks each accuracy down by it (``acc_depth3``). The per-depth breakdown boards
(suite.report.kinds.breakdown) compare the encodings at one decile; this kind turns the same
figures the other way, so that each encoding's whole depth x length grid is one table. The cells
are means over seeds with their intervals (a decile holds about a tenth of the examples, so the
intervals are wide); not ranked.
"""

from __future__ import annotations

from suite.report.board_kinds import BOARD_KINDS, BoardKind
from suite.report.board_types import Board
from suite.report.board_parts import first_recipes
from suite.report.boards import _scale_board, _shared_axes
from suite.report.figures import NO_RECIPE, Sources
from suite.results.rows import breakdown_of

FIELD = "depth"  # the breakdown field these grids are made of


@BOARD_KINDS.register()
class LostInTheMiddleBoard(BoardKind):
    """Every depth breakdown of a task's metric, grouped by (size, task, metric, recipe, encoding)."""

    name = "lost_in_the_middle"
    heading = "Lost in the middle"
    blurb = ("One encoding per board: accuracy by where the answer lies in the context (a row per tenth of its "
             "depth, 0 = the start) and by length (a column per multiple of the training length), the grid of "
             "Liu et al. 2024. Made of the same examples as the per-depth breakdowns; not ranked.")
    order = 2
    ranked = False
    unranked_note = "A grid of one encoding's depth deciles, a few examples each: not ranked."
    directed = False
    extrapolation_columns = False
    compared = False
    per_scale = True

    @staticmethod
    def title(task, metric, size):
        return f"Lost in the middle: {task}, {metric} by depth and length, size {size}"

    @classmethod
    def select(cls, figure: dict, run: dict | None) -> tuple | None:
        split = breakdown_of(figure["metric"])
        if figure["checkpoint_level"] or figure["scale"] is None or split is None or split[1] != FIELD:
            return None
        return (figure["size"], figure["task"], split[0], run["recipe"] if run else NO_RECIPE, figure["encoding"])

    @classmethod
    def build(cls, groups: dict[tuple, list[dict]], sources: Sources) -> list[Board]:
        scales_of, recipes_of = _shared_axes(sources)
        first = first_recipes(sources.runs)
        boards = []
        for key in sorted(groups, key=lambda k: (k[0], k[1], k[2], k[3].label, k[4])):
            size, task, metric, recipe, encoding = key
            rows = [as_depth_row(f) for f in groups[key]]
            scales = sorted(scales_of.get((size, task, recipe)) or {f["scale"] for f in rows})
            # as the task boards: a later recipe's grids add it to their id and title (suite.report.boards)
            later = recipe != first.get((size, task))
            board = _scale_board(cls, size, task, metric, None, recipe, scales, rows,
                                 id_part="-".join([encoding] + ([recipe.slug] if later else [])))
            board.entries.sort(key=lambda e: int(e.encoding[len(FIELD):]))  # depth order, not the means'
            name = groups[key][0]["display_name"] or encoding
            board.title = f"Lost in the middle: {name} on {task}, {metric} by depth and length, size {size}"
            if len(recipes_of[(size, task)]) > 1:
                board.title += f" ({recipe.label})"
            board.notes.append(f"Rows are the examples whose answer lies in one tenth of the context's depth "
                               f"(0: the first tenth, 9: the last); columns are lengths. The {name} row of the "
                               f"{task} board is their mean over every example.")
            boards.append(board)
        return boards


def as_depth_row(figure: dict) -> dict:
    """A breakdown's figure as a row of the grid: its depth decile in the place of the encoding."""
    _, _, value = breakdown_of(figure["metric"])
    decile = int(value)
    return {**figure, "encoding": f"{FIELD}{decile}", "trained_as": None, "family": None,
            "display_name": f"depth {decile} ({decile * 10}-{decile * 10 + 10}%)"}
