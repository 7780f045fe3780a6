"""The whole leaderboard: every registered board kind (suite.report.kinds) picks its figures and
builds its boards; the kinds' boards, in kind order, are the leaderboard. No board is decided
here: a kind is added by a module of its own, a metric reaches a board by its declaration."""

from __future__ import annotations

from dataclasses import dataclass

from suite.report.board_arithmetic import arithmetic_note
from suite.report.board_classes import class_note, device_note, gpus_of
from suite.report.board_kinds import BOARD_KINDS, BoardKind, kind_of, ordered_kinds
from suite.report.board_types import Board
from suite.report.figures import Sources
from suite.report.row_kinds import split_build
from suite.results import tolerances
from suite.results.rows import board_of


@dataclass
class Leaderboard:
    by_kind: dict[str, list[Board]]  # kind name -> its boards, the kinds in order
    runs: dict[str, dict]

    def sections(self) -> list[tuple[type[BoardKind], list[Board]]]:
        """Every kind that has boards, in kind order, with its boards: the site's sections."""
        return [(BOARD_KINDS.get(name), boards) for name, boards in self.by_kind.items() if boards]

    @property
    def all(self) -> list[Board]:
        return [board for boards in self.by_kind.values() for board in boards]

    @property
    def boards(self) -> list[Board]:
        """The boards with a column per scale (language modelling, tasks, breakdowns)."""
        return [b for b in self.all if kind_of(b).per_scale]

    @property
    def glue(self) -> list[Board]:
        """The boards of checkpoints fine-tuned on a battery (the GLUE-style scores)."""
        return [b for b in self.all if kind_of(b).fine_tuned]

    @property
    def cost(self) -> list[Board]:
        """The boards of what training and evaluation cost (training cost, posbench bench)."""
        return [b for b in self.all if kind_of(b).measures_cost]

    def find(self, board_id: str) -> Board | None:
        return next((b for b in self.all if b.id == board_id), None)

    def of_kind(self, kind: str) -> list[Board]:
        """The boards of one kind (a name of suite.report.board_kinds.BOARD_KINDS), in order."""
        BOARD_KINDS.get(kind)  # a name that is not a kind is an error, not an empty section
        return list(self.by_kind.get(kind, []))


def check_declared_boards(figures: list[dict]) -> None:
    """A metric declared on a board that no kind is (a typo in metrics.yaml) is an error, not a
    figure that silently shows nowhere."""
    for metric in {f["metric"] for f in figures}:
        board = board_of(metric)
        if board is not None:
            try:
                BOARD_KINDS.member(board)
            except ValueError as exc:
                raise ValueError(f"metric '{metric}', as declared (suite/results/metrics.yaml): {exc}") from None


def build(con, glue_chances: dict[str, float | None] | None = None) -> Leaderboard:
    """Every board of the database: each kind selects its figures, builds its boards, then lends
    columns to the boards of the checkpoints' own scores."""
    sources = Sources.load(con, glue_chances)
    check_declared_boards(sources.figures)
    kinds = ordered_kinds()
    sources.select(kinds)
    by_kind = {kind.name: split_build(kind, sources) for kind in kinds}
    carriers = [b for boards in by_kind.values() for b in boards if kind_of(b).carries_checkpoint_columns]
    for kind in kinds:
        kind.lend(by_kind[kind.name], carriers)
    table = tolerances.published()
    for board in (b for boards in by_kind.values() for b in boards):
        if note := class_note(board, sources.runs):
            board.notes.append(note)
        if note := device_note(board, sources.runs):
            board.notes.append(note)
        board.gpus = gpus_of(board, sources.runs)
        if note := arithmetic_note(board, table):
            board.notes.append(note)
    return Leaderboard(by_kind, sources.runs)
