"""The whole leaderboard: the scale boards of :mod:`.boards`, plus the boards of whole
checkpoints (GLUE-style scores, training cost) and the columns they lend each other."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from suite.report.board_kinds import BOARD_KINDS, kind_of
from suite.report.board_types import Board, Cell, Column
from suite.report.boards import scale_boards
from suite.report.figures import _dicts, load_figures, load_runs
from suite.report.kinds.bench import bench_boards
from suite.report.kinds.cost import BESIDE_SCORES, cost_boards
from suite.report.kinds.glue import glue_boards, load_glue_settings


def attach_columns(boards: list[Board], glue: list[Board], costs: list[Board]) -> None:
    """Beside each language-modelling board: the same checkpoints' GLUE-style score and training cost."""
    for board in boards:
        if not kind_of(board).carries_checkpoint_columns:
            continue
        g = next((b for b in glue if b.size == board.size and b.task == board.task), None)
        if g is not None:
            board.columns.append(Column("glue", "GLUE-style score", "GLUE", "the same checkpoints fine-tuned on the "
                                        "GLUE-style battery (see its board)", False, 3, "glue", g.chance))
            cells = {e.encoding: e.cells["glue_score"] for e in g.entries}
            for e in board.entries:
                e.cells["glue"] = cells.get(e.encoding, Cell(status="missing"))
        cost = next((b for b in costs if b.size == board.size and b.task == board.task and b.recipe == board.recipe),
                    None)
        if cost is not None:
            shown = [c for c in cost.columns if c.key in BESIDE_SCORES]
            board.columns += shown
            cells = {e.encoding: e.cells for e in cost.entries}
            for e in board.entries:
                mine = cells.get(e.trained_as or e.encoding, {})
                for c in shown:
                    e.cells[c.key] = mine.get(c.key, Cell(status="missing"))


# -- everything ---------------------------------------------------------------------------------------------------


def entries_by_run(con) -> dict[str, list[dict]]:
    """run_id -> every encoding evaluated on that checkpoint (a checkpoint-level figure belongs to all)."""
    out: dict[str, list[dict]] = defaultdict(list)
    for r in _dicts(con, "SELECT run_id, encoding, display_name, family, trained_as FROM entries ORDER BY encoding"):
        out[r["run_id"]].append(r)
    return out


@dataclass
class Leaderboard:
    boards: list[Board]  # language modelling, tasks, breakdowns
    glue: list[Board]
    cost: list[Board]
    runs: dict[str, dict]

    @property
    def all(self) -> list[Board]:
        return self.boards + self.glue + self.cost

    def find(self, board_id: str) -> Board | None:
        return next((b for b in self.all if b.id == board_id), None)

    def of_kind(self, kind: str) -> list[Board]:
        """The boards of one kind (a name of suite.report.board_kinds.BOARD_KINDS), in order."""
        BOARD_KINDS.get(kind)  # a name that is not a kind is an error, not an empty section
        return [b for b in self.all if b.kind == kind]


def build(con, glue_chances: dict[str, float | None] | None = None) -> Leaderboard:
    """Every board of the database."""
    runs = load_runs(con)
    figures = load_figures(con)
    owners = entries_by_run(con)
    boards = scale_boards(figures, runs)
    glue = glue_boards(figures, runs, owners, glue_chances or {}, load_glue_settings(con))
    cost = cost_boards(runs, owners)
    attach_columns(boards, glue, cost)
    return Leaderboard(boards, glue, cost + bench_boards(con), runs)
