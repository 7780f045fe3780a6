"""What a board is: its columns, its rows (entries) and their cells, as the site, the terminal
and the downloads render them. Built by the board kinds (suite.report.kinds)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from suite.report import stats

if TYPE_CHECKING:
    from suite.report.figures import Recipe

SHARE = "share"  # the unit of an accuracy: successes / examples, which has a Wilson interval


@dataclass(frozen=True)
class Column:
    key: str
    label: str  # the site's header
    short: str  # the terminal's header
    description: str  # what the column is (a tooltip on the site)
    lower_is_better: bool | None = None  # the order a first click sorts in; None: not a score (ascending)
    digits: int = 3
    group: str = "score"  # rank, scale, score, derived, glue, cost, task: what show/hide and the terminal pick
    chance: float | None = None


@dataclass(frozen=True)
class Cell:
    value: float | None = None  # what the column sorts by
    interval: stats.Interval | None = None  # shown when it has bounds
    status: str = "ok"  # ok, not_applicable, missing
    text: str | None = None  # a shown value that is not a plain number (an effective length "4x")

    @property
    def has_bounds(self) -> bool:
        return self.interval is not None and self.interval.lo is not None


@dataclass
class Entry:
    encoding: str
    display_name: str
    family: str | None
    trained_as: str | None  # the checkpoint's encoding when this row is a training-free variant of it
    cells: dict[str, Cell] = field(default_factory=dict)
    per_seed: dict[str, dict[int, float | None]] = field(default_factory=dict)  # column -> seed -> value
    floors: dict[str, dict[int, float]] = field(default_factory=dict)  # column -> seed -> sampling variance (shares)
    # column -> seed -> the run's text: its per-passage values, or its figure's text variance (suite.report.text)
    text: dict[str, dict[int, object]] = field(default_factory=dict)
    shared_by: list[str] = field(default_factory=list)  # cost board: variants evaluated on these checkpoints

    @property
    def rank(self) -> int | None:
        """The best rank the row can have (rank_lo: 1 + the rows significantly better)."""
        cell = self.cells.get("rank")
        return None if cell is None or cell.value is None else int(cell.value)

    @property
    def rank_hi(self) -> int | None:
        """The worst rank the row can have (N - the rows significantly worse)."""
        cell = self.cells.get("rank")
        return None if cell is None or cell.interval is None else int(cell.interval.hi)


@dataclass(kw_only=True)
class Board:
    """One board; built by keyword only (its fields are many, and several are alike in type)."""

    id: str
    kind: str  # its kind: a name of suite.report.board_kinds.BOARD_KINDS (suite/report/kinds/)
    title: str
    size: str
    task: str
    metric: str | None
    columns: list[Column]
    entries: list[Entry]
    seeds: list[int]
    method: str  # how the intervals were computed, in words
    lower_is_better: bool | None = None
    chance: float | None = None
    train_len: int | None = None
    recipe: str | None = None  # its training recipe as the board shows it (Recipe.label)
    # that recipe itself, by which its note on machine classes reads its runs back (suite.report.board_classes);
    # None: every recipe's runs of its size and task
    training_recipe: Recipe | None = None
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    scales: list[int] = field(default_factory=list)
    eval_len: dict[int, int] = field(default_factory=dict)
    compared: list[str] = field(default_factory=list)  # the columns the compare view offers
    ranked_by: str | None = None  # the column the ranks come from
    headline: str | None = None  # the best entry and whether it is significantly ahead (suite.report.headlines)
    # whether the headline's claim, found on half the seeds, held on the other half: "confirmed",
    # "not confirmed", "not tested" (the first half made no claim), "too few seeds" (under 4 to
    # split), or None (no headline) -- suite.report.headlines.STATUSES
    headline_status: str | None = None
    # a board of architecture changes beside their base encodings, not of positional encodings
    # (suite.report.row_kinds)
    architecture: bool = False
    # the GPUs its runs trained on ("cuda:NVIDIA H200 (bf16-mixed)"), none for a CPU board
    # (suite.report.board_classes.gpus_of): another device class, which the scale view labels
    gpus: list[str] = field(default_factory=list)

    @property
    def families(self) -> list[str]:
        return sorted({e.family for e in self.entries if e.family})

    def column(self, key: str) -> Column:
        return next(c for c in self.columns if c.key == key)
