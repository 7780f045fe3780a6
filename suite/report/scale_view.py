"""Does a ranking hold at scale? The same question's boards at each model size, compared.

A *question* is one board kind's figure on one task at one recipe (language modelling at 16x,
a task at 4x), asked at several sizes (a size ladder: grids/ladder-lm.yaml). For each question this
module gives:

* the ranking at each size (the boards' own rank intervals, rows in the order of their means);
* the rank agreement between each larger size and the smallest: Kendall's tau-b of the rows'
  means with a bootstrap 95% interval over seeds (suite.report.rank_agreement);
* a label for the question's finding, its best row: **"holds at every size"** when one row is
  first for certain at every size; **"changes at size X"** at the first larger size where another
  row is first for certain; **"not decided at size X"** at the first where no row is (too few
  seeds, rows too close, fewer than two rows, or the leader not trained there), naming the row of
  the best mean there, or where another row is first at 0.05 but not at the corrected level below,
  or where the leader is first among fewer rows than at the smallest size (naming the rows not
  trained there: one of them might have led it); and **"no finding"** when no row is first for
  certain at the smallest size. *First for certain* is read at the question's own column (16x for
  language modelling, 4x for a task; a task board's own ranks are at its longest scale): the row
  ahead of every other there by the boards' paired tests, Holm-corrected over the board's pairs
  (suite.report.ranking). "Holds" needs the leader first at every column at level 0.05 (an
  intersection of claims needs no correction: each must hold); "changes" is a claim about one of
  the m columns after the smallest, so another row must be first there at level 0.05 / m
  (Bonferroni over the columns), or the first change among m columns would be a false one more
  often than 5% of the time.

A size whose runs trained on a GPU (suite.report.board_classes.gpus_of) is labelled so: another
device class, whose figures move by more than the CPU classes' tolerances, though the tiny rung
re-run on a GPU kept its order at 16x (docs/how-to/run-on-a-gpu.md, "The device effect"). A
finding that holds across such a column says so ("holds at every size (across devices: base on
a GPU)"): what held there held across a change of device as well as of size.

**Budgets.** A size can have boards of the same recipe that differ only in steps (a size ladder
trains each rung at two budgets, grids/ladder-lm-budget.yaml, to separate size from training
tokens). The size's *main* board is the one the index would answer from (the most rows:
suite.report.overview.canonical_order); every board of the size is a column of the question,
labelled with its steps where the size has several, compared with the smallest size's main
board, and the finding reads them all: **"holds at every size and budget"**, or **"changes at
size X at N steps"** at the first column (by size, then steps) where the leader is not first.
Each budget trained at two sizes or more also has a finding of its own (:attr:`Question.by_budget`):
the same rules along that budget's boards alone, from its smallest size. That is the reading the
second budget is there for (the same steps at every size: size apart from training tokens), and
it stands where the main finding cannot (no row first for certain on the smallest main board).
It is a finding among the rows that budget trained, and names them where the question has more
(a ladder trains its second budget for a few rows, and a row it did not train may lead the
question's other boards).

**The rows every column trained.** A ladder trains its larger rungs for a few rows (a fourth
rung of three encodings and two extensions), so the question's own finding, read among every row
of the smallest size, cannot reach them: it is "no finding" where a row trained at the first rungs
alone is level with the best, and "not decided" at the first column without that row. Where the
rows with a figure in every column are fewer than the smallest size's, the question also has a
finding among those alone (:attr:`Question.among_common`): the same rules over every column, each
board restricted to those rows (its paired tests and Holm correction over their pairs only, and
not ranked where they all sit at chance, as a board of them alone would not be). The rows are fixed
by what was trained, not by the figures, and the finding names them; the table's ranks stay each
board's own, among all its rows.

Each finding is tested at its own level; a question's findings, which share boards, are not
corrected for one another (the page says so).

Only the rows present at both sizes enter tau; the table lists every row of any column. Pure
functions of :class:`Board` objects, so a simulation with known true means tests them
(tests/report/test_scale_view.py).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace

from suite.report import ranking
from suite.report.board_parts import all_at_chance, all_zero, column_tests
from suite.report.board_types import Board
from suite.report.overview import canonical_order
from suite.report.rank_agreement import BOOTSTRAP, Agreement, agreement
from suite.report.stats import ALPHA

QUESTION_SCALE = {"lm": 16, "task": 4}  # the column each question is asked at: LM at 16x, a task at 4x


@dataclass
class Question:
    key: tuple  # (kind, task, metric, recipe without its steps)
    title: str
    column: str
    sizes: list[str]
    boards: dict[str, Board]  # size -> its main board
    agreements: list[Agreement] = field(default_factory=list)  # each column but the first against the first
    finding: str = ""  # "holds at every size", "changes at size X", "no finding"
    leader: str | None = None  # the smallest size's row first for certain
    columns: list[tuple[str, Board]] = field(default_factory=list)  # (label, board): every board, by size then steps
    by_budget: list["BudgetFinding"] = field(default_factory=list)  # each budget trained at two sizes or more
    among_common: "CommonFinding | None" = None  # among the rows every column trained, where the smallest has more
    ranks: dict[str, dict[str, str]] = field(default_factory=dict)  # column label -> row -> rank interval at `column`
    rows: list[str] = field(default_factory=list)  # every row of any column; the smallest size's first, by `column`
    base_label: str = ""  # the column of the smallest size's main board, which the others are compared with
    left_out: list[Board] = field(default_factory=list)  # boards of a column's size, steps and recipe label
    # that canonical_order ranks below its board (another untuned learning rate, which the label leaves out)


@dataclass
class BudgetFinding:
    """The finding along one budget's boards alone: the same steps at each size."""

    steps: int
    sizes: list[str]  # the column labels of its boards, smallest size first
    leader: str | None  # its smallest size's row first for certain
    finding: str  # "alibi holds at every size", "no finding: ...", as Question.finding; with its rows
    # where the question has more ("..., among the 5 rows trained at 3,175 steps: alibi, nope, ...")


@dataclass
class CommonFinding:
    """The question's finding among the rows with a figure in every column alone."""

    rows: list[str]  # those rows, in the question's order
    leader: str | None  # the row among them first for certain on the smallest size's main board
    finding: str  # "alibi holds at every size and budget", "no finding: ...", as Question.finding


def steps_of(board: Board) -> int | None:
    """The steps of a board's recipe label ("L = 64, 1,604 steps x 16"), None without."""
    match = re.search(r"([\d,]+) steps", board.recipe or "")
    return int(match.group(1).replace(",", "")) if match else None


def per_seed(board: Board, column: str) -> dict[str, dict[int, float]]:
    """Each row's per-seed values at ``column`` (the unit of replication: one training run each)."""
    return {e.encoding: {seed: v for seed, v in e.per_seed.get(column, {}).items()
                         if v is not None and math.isfinite(v)}
            for e in board.entries}


def ranks_at(board: Board, column: str, alpha: float = ALPHA) -> dict[str, tuple[int, int]]:
    """Each row's rank interval at ``column``, as the board ranks its own column (paired tests
    over shared seeds, the sampling floors and text included, Holm over the board's pairs) at
    level ``alpha``; empty where the board ranks nothing (a kind that does not rank, or every
    row at chance: suite.report.board_parts.rank_and_warn)."""
    if board.ranked_by is None or not any((c := e.cells.get("rank")) is not None and c.value is not None
                                          for e in board.entries):
        return {}
    return ranking.rank_intervals(column_tests(board, column, alpha))


def first_for_certain(board: Board, column: str, alpha: float = ALPHA) -> str | None:
    """The row ahead of every other row of the board at ``column`` (rank interval "1" at level
    ``alpha``), if one is; none on a board of fewer than two rows with figures there."""
    ranks = ranks_at(board, column, alpha)
    if len(ranks) < 2:
        return None
    return next((name for name, (lo, hi) in ranks.items() if lo == hi == 1), None)


def questions(boards: list[Board], size_order: list[str], resamples: int = BOOTSTRAP) -> list[Question]:
    """The questions asked at two sizes or more, from ranked per-scale boards (lm and task kinds),
    their sizes in ``size_order`` (smallest first); ``resamples``: each agreement's bootstrap."""
    grouped: dict[tuple, dict[str, dict[int | None, Board]]] = defaultdict(lambda: defaultdict(dict))
    left_out: dict[tuple, list[Board]] = defaultdict(list)
    for board in boards:
        scale = QUESTION_SCALE.get(board.kind)
        if scale is None or scale not in (board.scales or []) or board.size not in size_order or board.architecture:
            continue  # a board of architecture changes answers no positional question (suite.report.row_kinds)
        key = (board.kind, board.task, board.metric, board.train_len, _without_steps(board.recipe))
        same = grouped[key][board.size].get(steps_of(board))
        if same is None or canonical_order(board) > canonical_order(same):
            grouped[key][board.size][steps_of(board)] = board
        if same is not None:  # named on the page, not dropped unseen
            left_out[key].append(same if grouped[key][board.size][steps_of(board)] is board else board)
    out = []
    for key, by_size in grouped.items():
        sizes = [s for s in size_order if s in by_size]
        if len(sizes) < 2:
            continue
        kind, task, metric = key[:3]
        column = f"s{QUESTION_SCALE[kind]}"
        # the size's main board: the one the index would answer from (the most rows)
        main = {s: max(by_size[s].values(), key=canonical_order) for s in sizes}
        q = Question(key, f"{task}: {metric} at {QUESTION_SCALE[kind]}x", column, sizes, main, left_out=left_out[key])
        budgets = any(len(by_size[s]) > 1 for s in sizes)
        q.columns = [(_label(s, steps if len(by_size[s]) > 1 else None, board), board)
                     for s in sizes for steps, board in sorted(by_size[s].items(), key=lambda kv: kv[0] or 0)]
        base_board = main[sizes[0]]
        lower = bool(base_board.lower_is_better)
        base = per_seed(base_board, column)
        others = [(label, board) for label, board in q.columns if board is not base_board]
        q.base_label = next(label for label, board in q.columns if board is base_board)
        q.agreements = [agreement(base, per_seed(board, column), label, lower, resamples) for label, board in others]
        q.ranks = {label: {name: ranking.rank_text(*interval) for name, interval in ranks_at(board, column).items()}
                   for label, board in q.columns}
        q.rows = _rows(base_board, [board for _, board in others], column)
        q.leader = first_for_certain(base_board, column)
        every = "every size and budget" if budgets else "every size"
        if q.leader is None:
            q.finding = "no finding: no row is first for certain at the smallest size"
        else:
            q.finding = _finding(q.leader, others, every, column, _rows_with_figures(base))
        if budgets:
            q.by_budget = budget_findings(by_size, sizes, column, q.rows)
        q.among_common = common_finding(q.columns, base_board, column, every, q.rows)
        out.append(q)
    titles = defaultdict(list)
    for q in out:
        titles[q.title].append(q)
    for same in (qs for qs in titles.values() if len(qs) > 1):  # one figure at two recipes: the recipe tells them apart
        for q in same:
            q.title += f" ({q.key[4]})"
    return sorted(out, key=lambda q: q.key[:3])


def budget_findings(by_size: dict[str, dict[int | None, Board]], sizes: list[str], column: str,
                    question_rows: list[str] | None = None) -> list[BudgetFinding]:
    """Per number of steps trained at two sizes or more (in ``sizes``' order), its finding: its
    smallest size's row first for certain, read at each larger size's board of the same steps.
    First for certain among the rows that budget trained: where the question has more
    (``question_rows``: a ladder trains its second budget for a few rows), the finding names them,
    for a row it did not train may lead the question's other boards."""
    out = []
    for steps in sorted({st for s in sizes for st in by_size[s] if st is not None}):
        chain = [(s, by_size[s][steps]) for s in sizes if steps in by_size[s]]
        if len(chain) < 2:
            continue
        labels = [_label(s, None, board) for s, board in chain]
        leader = first_for_certain(chain[0][1], column)
        rows = _rows_with_figures(per_seed(chain[0][1], column))
        if leader is None:
            finding = f"no finding: no row is first for certain at size {labels[0]}"
        else:
            later = list(zip(labels[1:], [b for _, b in chain[1:]]))
            finding = f"{leader} {_finding(leader, later, 'every size', column, rows)}"
            if question_rows and set(question_rows) - set(rows):
                finding += f", among the {len(rows)} rows trained at {steps:,} steps ({', '.join(sorted(rows))})"
        out.append(BudgetFinding(steps, labels, leader, finding))
    return out


def common_finding(columns: list[tuple[str, Board]], base_board: Board, column: str, every: str,
                   order: list[str]) -> CommonFinding | None:
    """The question's finding among the rows with a figure at ``column`` in every one of ``columns``
    (the module docstring's "rows every column trained"), where the smallest size's main board
    (``base_board``) has more; None where it has no more, or where fewer than two rows are common.
    ``order``: the question's rows, whose order the finding lists them in."""
    values = [per_seed(board, column) for _, board in columns]
    base_rows = _rows_with_figures(per_seed(base_board, column))
    common = [row for row in order if all(v.get(row) for v in values)]
    if len(common) < 2 or len(common) == len(base_rows):
        return None
    leader = first_for_certain(_among(base_board, common), column)
    if leader is None:
        return CommonFinding(common, None, "no finding: none of them is first for certain at the smallest size")
    others = [(label, _among(board, common)) for label, board in columns if board is not base_board]
    return CommonFinding(common, leader, f"{leader} {_finding(leader, others, every, column, common)}")


def _among(board: Board, rows: list[str]) -> Board:
    """``board`` with only ``rows``' entries, ranked as a board of them alone would be: its paired
    tests among them (:func:`column_tests` reads the entries), and not at all where they all sit at
    chance or all answer nothing (suite.report.board_parts.rank_and_warn's rule), whatever a row
    left out did."""
    kept = replace(board, entries=[e for e in board.entries if e.encoding in rows])
    if all_at_chance(kept) or (kept.chance is None and all_zero(kept)):
        kept.ranked_by = None  # :func:`ranks_at` then ranks nothing
    return kept


def _rows_with_figures(values: dict[str, dict[int, float]]) -> list[str]:
    """The rows with a figure (a seed's value, at least) in a column's per-seed values (:func:`per_seed`)."""
    return [name for name, seeds in values.items() if seeds]


def _label(size: str, steps: int | None, board: Board) -> str:
    """A column's label: the size, its steps where the size has several budgets, its GPU if any
    ("small at 3,175 steps", "base on a GPU"; no comma: the index lists labels with commas)."""
    label = f"{size} at {steps:,} steps" if steps else size
    return f"{label} on a GPU" if board.gpus else label


def best_mean(board: Board, column: str) -> str | None:
    """The row of the best mean at ``column`` (lowest or highest, as the board's figure is better)."""
    rows = [(c.value, e.encoding) for e in board.entries if (c := e.cells.get(column)) is not None and c.value is not None]
    if not rows:
        return None
    return (min(rows) if board.lower_is_better else max(rows))[1]


def _finding(leader: str, others: list[tuple[str, Board]], every: str, column: str, base_rows: list[str]) -> str:
    """The finding over the columns after the smallest size's main board (module docstring):
    the first column where another row is first for certain at level ALPHA / m (m columns),
    the leader among the rows it is ahead of; else the first where the leader is not first for
    certain at ALPHA, or is first among fewer rows than it was at the smallest size
    (``base_rows``: a row not trained there might have led it); else "holds"."""
    changed = next((label for label, board in others  # another row ahead of the leader too: it has figures there
                    if per_seed(board, column).get(leader)
                    and (first := first_for_certain(board, column, ALPHA / len(others))) not in (None, leader)), None)
    if changed is not None:
        return f"changes at size {changed}"
    for label, board in others:
        first = first_for_certain(board, column)
        there = per_seed(board, column)
        if not there.get(leader):
            return f"not decided at size {label}: {leader} has no figure there"
        if first == leader:
            if missing := [row for row in base_rows if not there.get(row)]:
                return f"not decided at size {label}: {', '.join(missing)} not trained there"
            continue
        if first is not None:  # ahead at 0.05, short of the 0.05 / m a change is claimed at
            return (f"not decided at size {label}: {first} is first for certain there at 0.05, not at the "
                    f"0.05 / {len(others)} a change among {len(others)} columns needs")
        return (f"not decided at size {label}: no row is first for certain there "
                f"(best mean: {best_mean(board, column) or 'none'})")
    gpu = [label for label, board in others if board.gpus]  # a device change is part of what held
    return f"holds at {every}" + (f" (across devices: {', '.join(gpu)})" if gpu else "")


def _rows(base: Board, others: list[Board], column: str) -> list[str]:
    """Every row of the question: the smallest size's main board's first, best mean at the
    question's column first (a task board's own order is its longest scale's), rows without a
    figure there last; then those of the other columns it lacks, in the order they first appear."""
    sign = 1.0 if base.lower_is_better else -1.0

    def key(e) -> tuple:
        cell = e.cells.get(column)
        value = None if cell is None else cell.value
        return (value is None, sign * value if value is not None else 0.0)

    out = [e.encoding for e in sorted(base.entries, key=key)]  # stable: ties keep the board's order
    for board in others:
        out += [e.encoding for e in board.entries if e.encoding not in out and e.cells.get(column) is not None]
    return out


def _without_steps(recipe: str | None) -> str | None:
    """A board's recipe label without its number of steps, which a size ladder scales with the
    size ("L = 64, 1,604 steps x 16" -> "L = 64, steps x 16": the batch stays part of the question)."""
    if not recipe:
        return recipe
    return re.sub(r"[\d,]+ steps", "steps", recipe)
