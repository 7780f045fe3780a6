"""What every board kind builds its boards with: a cell of one entry over its seeds, an entry,
an id, the recipe that keeps the plain id, the rank column with its warnings and notes."""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean

from suite.report import ranking, stats
from suite.report.text import cell_text, run_texts
from suite.report.board_kinds import BOARD_KINDS
from suite.report.board_types import SHARE, Board, Cell, Column, Entry
from suite.report.figures import info_of
from suite.report.headlines import headline

# -- cells -----------------------------------------------------------------------------------------------------


def is_usable(f: dict) -> bool:
    return f["value"] is not None and f["status"] in ("ok", "partial")


def average_duplicates(rows: list[dict]) -> dict[int, float]:
    """seed -> value; two figures of one seed (two runs of one recipe) are averaged."""
    by_seed: dict[int, list[float]] = defaultdict(list)
    for f in rows:
        if is_usable(f):
            by_seed[f["seed"]].append(f["value"])
    return {seed: fmean(vs) for seed, vs in by_seed.items()}


def sampling_floors(rows: list[dict]) -> dict[int, float]:
    """seed -> the sampling variance p(1 - p) / n of a share at that seed (its runs' examples pooled)."""
    values, examples = average_duplicates(rows), defaultdict(int)
    for f in rows:
        if is_usable(f) and f["n"]:
            examples[f["seed"]] += f["n"]
    return {seed: stats.sampling_variance(v, examples[seed]) for seed, v in values.items() if examples[seed]}


def seed_cell(rows: list[dict], share: bool) -> tuple[Cell, dict[int, float]]:
    """The cell of one entry at one column: mean over seeds and its interval (with the text
    sampling of a figure measured on text, suite.report.text)."""
    values = average_duplicates(rows)
    if not values:
        status = "not_applicable" if rows and all(f["status"] == "not_applicable" for f in rows) else "missing"
        return Cell(status=status), {}
    floors = sampling_floors(rows) if share else {}
    interval = stats.seed_interval(list(values.values()), floor=fmean(floors.values()) if floors else None,
                                   share=share, text=cell_text(run_texts(rows), values))
    if interval.n == 1 and share:
        usable = [f for f in rows if is_usable(f) and f["n"]]
        if usable:
            n = sum(f["n"] for f in usable)
            interval = stats.wilson_interval(sum(f["value"] * f["n"] for f in usable), n)
    return Cell(interval.mean, interval), values


def interval_text(board_seeds: int, share: bool) -> str:
    if board_seeds > 1:
        return f"{stats.METHOD} over the seeds each row has" + (
            " (an accuracy's standard error at least its sampling error over examples, its interval within [0, 1])"
            if share else "")
    if share:
        return "one seed: each interval is the Wilson 95% interval over the examples of that one model (not over seeds)"
    return "one seed: no interval over seeds, so differences between rows cannot be told from noise"


# -- entries, ids and recipes ---------------------------------------------------------------------------


def entry_of(f: dict) -> Entry:
    shared = f["trained_as"] if f["trained_as"] and f["trained_as"] != f["encoding"] else None
    return Entry(f["encoding"], f["display_name"] or f["encoding"], f["family"], shared)


def slug(*parts) -> str:
    text = "-".join(str(p) for p in parts if p is not None)
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text.lower())


def first_recipes(runs: dict) -> dict[tuple, object]:
    """(size, task) -> the recipe whose runs finished first. Its boards keep the plain id
    (``lm-tiny-lm``); a later recipe's boards add the recipe to theirs (``lm-tiny-lm-l64-100x16``)
    and are listed after it, so adding a grid (a smoke run, a contributor's budget) never
    renames a board that exists, and a published snapshot, computed before, keeps its ids."""
    earliest: dict[tuple, tuple] = {}
    for r in runs.values():
        key = (r["size"], r["task"])
        mark = (r["finished_at"] or "~", r["recipe"].label)  # unknown dates last; the label breaks ties
        if key not in earliest or mark < earliest[key][0]:
            earliest[key] = (mark, r["recipe"])
    return {key: recipe for key, (_, recipe) in earliest.items()}


# -- ranks and warnings -----------------------------------------------------------------------------------------


def all_at_chance(board: Board) -> bool:
    """Every column that has a chance level sits at it in every row (and there is such a column)."""
    judged = [c for c in board.columns if c.group in ("scale", "task") and c.chance is not None]
    if not judged:
        return False
    for col in judged:
        intervals = [e.cells[col.key].interval for e in board.entries if e.cells[col.key].interval is not None]
        if intervals and not stats.all_at_chance(intervals, col.chance, bool(col.lower_is_better)):
            return False
    return True


def all_zero(board: Board) -> bool:
    """An accuracy board (no chance level recorded) on which no entry answers any example."""
    info = info_of(board.metric) if board.metric else None
    values = [e.cells[c.key].value for e in board.entries for c in board.columns if c.group == "scale"]
    return bool(info and info.unit == SHARE and values and all(v in (None, 0) for v in values)
                and any(v == 0 for v in values))


def column_tests(board: Board, column: str, alpha: float = stats.ALPHA) -> ranking.Pairwise:
    """The paired tests of every pair of the board's rows at ``column`` (their sampling floors and
    text included), Holm-corrected over the board's pairs at level ``alpha``."""
    return ranking.pairwise({e.encoding: e.per_seed.get(column, {}) for e in board.entries}, bool(board.lower_is_better),
                            {e.encoding: e.floors.get(column, {}) for e in board.entries}, alpha=alpha,
                            text={e.encoding: e.text.get(column, {}) for e in board.entries})


def rank_and_warn(board: Board, summary: str) -> None:
    """Rank intervals from Holm-corrected paired tests at ``summary`` (:mod:`.ranking`), rows in
    the order of their means there; warnings instead of ranks where they would rank noise.

    A kind that does not rank (per-depth breakdowns, diagnostics) gets the warnings and its own note instead."""
    kind = BOARD_KINDS.get(board.kind)  # whether it ranks, and its words when it does not
    ranked = kind.ranked
    lower = board.lower_is_better
    summaries = [e.cells[summary].interval for e in board.entries if e.cells[summary].interval is not None]
    at_chance = all_at_chance(board)
    if at_chance:
        level = "" if board.chance is None else f" ({board.chance:.3g})"
        board.warnings.append(f"Every row sits at chance{level}: no entry is better than chance beyond its interval "
                              "at any length, so this board measures nothing and is not ranked.")
    if not at_chance and board.chance is None and all_zero(board):
        board.warnings.append(kind.zero_warning)
        at_chance = True
    tests = ranks = None
    if ranked and not at_chance:
        tests = column_tests(board, summary)
        ranks = ranking.rank_intervals(tests)
    bounded = [i for i in summaries if i.lo is not None]
    if not at_chance and len(bounded) > 1 and stats.all_overlap(bounded):
        if tests is not None and tests.wins.any():  # the paired tests tell rows apart where the unpaired intervals cannot
            board.notes.append("The 95% intervals of all rows overlap (each over its own seeds); the ranks come from "
                               "paired tests over shared seeds, which do separate rows: a seed's models share their "
                               "data, so paired differences are tighter than the intervals.")
        else:
            board.warnings.append("The 95% intervals of all rows overlap: this board does not separate these encodings."
                                  + (" Ranks come from paired tests over shared seeds; a rank interval such as 1-4 "
                                     "means the row could be anywhere from 1st to 4th." if ranked else ""))
    if not ranked:
        board.notes.append(kind.unranked_note)
    else:
        rank_column(board, summary, ranks or {})
        if tests is not None:
            note, warning = ranking.power_statement(kind.effect, kind.effect_unit, board.column(summary).label, tests,
                                                    len(board.seeds))
            board.notes += [note] if note else []
            board.warnings += [warning] if warning else []
    # rows in the order of their means (the point estimate): a rank would reward a noisy row
    sign = 1 if lower else -1
    board.entries.sort(key=lambda e: (e.cells[summary].value is None, sign * (e.cells[summary].value or 0),
                                      e.display_name))
    if tests is not None:
        board.headline, board.headline_status = headline(board, summary, tests)


def rank_column(board: Board, summary: str, ranks: dict[str, tuple[int, int]]) -> None:
    if len(board.seeds) == 1:
        board.notes.append(f"One seed (seed {board.seeds[0]}): no rank is separated; run more seeds to separate rows.")
    board.ranked_by = summary
    by = board.column(summary).label
    board.notes.append(f"Ranked by {by}; rows in the order of their means.")
    board.columns.insert(0, Column(
        "rank", "rank", "#", f"rank interval in {by}: from 1 + the number of rows significantly better to N - the "
        f"number significantly worse (paired t-tests over shared seeds, Holm-corrected over all the board's pairs, "
        f"p < {stats.ALPHA}); '1' is first for certain, '2-7' anywhere from 2nd to 7th", True, 0, "rank"))
    for e in board.entries:
        lo, hi = ranks.get(e.encoding, (None, None))
        e.cells["rank"] = (Cell(status="missing") if lo is None else
                           Cell(lo, stats.Interval(lo, lo, hi, len(ranks), ranking.RANK_METHOD), "ok",
                                ranking.rank_text(lo, hi)))
