"""Leaderboard boards, computed from per-seed figures with :mod:`suite.report.stats`.

A board is one table of the leaderboard: language modelling on a corpus (bits per byte
at each scale), a length-generalization task (accuracy at each scale), a per-depth
breakdown of a task; or (in :mod:`.leaderboard`) the GLUE-style battery or training cost. Each is built from the
``figures`` view one figure per (encoding, size, task, metric, scale, seed), so every
cell is a mean over seeds with its 95% interval, and ranks are intervals from paired tests
over shared seeds. The site and the terminal render the same :class:`Board` objects.

* A cell with several seeds: mean and Student-t interval over seeds (``stats.METHOD``);
  an accuracy's standard error is floored by its sampling error over examples and its
  interval clipped to [0, 1] (:mod:`.stats`). With one seed, an accuracy (a share of
  examples) gets the Wilson interval over its examples and is labelled so; any other
  figure shows no interval ("one seed").
* The overall score of an entry is, per seed, the mean over the board's scales (bits
  per byte, or accuracy); an entry with a scale it cannot represent (not applicable)
  or a missing one has none and ranks last (blank).
* Rank: the simultaneous rank interval of Holm-corrected paired tests at the ranked column
  (:mod:`.ranking`); rows are ordered by their mean there. Each ranked board states whether
  its seeds have the power to see its kind's declared effect. A board whose rows all sit
  at chance shows no ranks; one whose intervals all overlap says so.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean

from suite.report import ranking, stats
from suite.report.board_kinds import BOARD_KINDS
# the boards' types, which the pages and the terminal import from here too
from suite.report.board_types import SHARE, Board, Cell, Column, Entry  # noqa: F401
from suite.report.headlines import headline
from suite.report.figures import Recipe, info_of, is_breakdown
from suite.report.scores import ABSOLUTE_ACCURACY, TOLERANCE, effective_length, extrapolation_score

# -- cells -----------------------------------------------------------------------------------------------------


def _usable(f: dict) -> bool:
    return f["value"] is not None and f["status"] in ("ok", "partial")


def _average_duplicates(rows: list[dict]) -> dict[int, float]:
    """seed -> value; two figures of one seed (two runs of one recipe) are averaged."""
    by_seed: dict[int, list[float]] = defaultdict(list)
    for f in rows:
        if _usable(f):
            by_seed[f["seed"]].append(f["value"])
    return {seed: fmean(vs) for seed, vs in by_seed.items()}


def sampling_floors(rows: list[dict]) -> dict[int, float]:
    """seed -> the sampling variance p(1 - p) / n of a share at that seed (its runs' examples pooled)."""
    values, examples = _average_duplicates(rows), defaultdict(int)
    for f in rows:
        if _usable(f) and f["n"]:
            examples[f["seed"]] += f["n"]
    return {seed: stats.sampling_variance(v, examples[seed]) for seed, v in values.items() if examples[seed]}


def seed_cell(rows: list[dict], share: bool) -> tuple[Cell, dict[int, float]]:
    """The cell of one entry at one column: mean over seeds and its interval."""
    values = _average_duplicates(rows)
    if not values:
        status = "not_applicable" if rows and all(f["status"] == "not_applicable" for f in rows) else "missing"
        return Cell(status=status), {}
    floors = sampling_floors(rows) if share else {}
    interval = stats.seed_interval(list(values.values()), floor=fmean(floors.values()) if floors else None,
                                   share=share)
    if interval.n == 1 and share:
        usable = [f for f in rows if _usable(f) and f["n"]]
        if usable:
            n = sum(f["n"] for f in usable)
            interval = stats.wilson_interval(sum(f["value"] * f["n"] for f in usable), n)
    return Cell(interval.mean, interval), values


def _summary(per_seed_columns: list[dict[int, float]], seeds) -> dict[int, float | None]:
    """Per seed, the mean over the columns; None where a column lacks that seed."""
    out = {}
    for seed in seeds:
        vals = [col.get(seed) for col in per_seed_columns]
        out[seed] = None if not vals or any(v is None for v in vals) else fmean(vals)
    return out


def _interval_text(board_seeds: int, share: bool) -> str:
    if board_seeds > 1:
        return f"{stats.METHOD} over the seeds each row has" + (
            " (an accuracy's standard error at least its sampling error over examples, its interval within [0, 1])"
            if share else "")
    if share:
        return "one seed: each interval is the Wilson 95% interval over the examples of that one model (not over seeds)"
    return "one seed: no interval over seeds, so differences between rows cannot be told from noise"


# -- scale boards (language modelling, tasks, breakdowns) -------------------------------------------------------


def _scale_board_key(f: dict, runs: dict) -> tuple | None:
    if f["checkpoint_level"] or f["scale"] is None or f["metric"] == "bpb_lmeval":
        return None  # bpb_lmeval is the lm-eval cross-check of bpb: on the run pages and in the downloads
    run = runs.get(f["run_id"])
    recipe = run["recipe"] if run else Recipe(None, None, None, None)
    kind = "lm" if f["metric"] == "bpb" else "breakdown" if is_breakdown(f["metric"]) else "task"
    return kind, f["size"], f["task"], f["metric"], recipe


def _entry(f: dict) -> Entry:
    shared = f["trained_as"] if f["trained_as"] and f["trained_as"] != f["encoding"] else None
    return Entry(f["encoding"], f["display_name"] or f["encoding"], f["family"], shared)


def _slug(*parts) -> str:
    text = "-".join(str(p) for p in parts if p is not None)
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text.lower())


def scale_boards(figures: list[dict], runs: dict) -> list[Board]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    scales_of: dict[tuple, set[int]] = defaultdict(set)  # every scale evaluated for (size, task, recipe)
    for f in figures:
        key = _scale_board_key(f, runs)
        if key is not None:
            groups[key].append(f)
            scales_of[(key[1], key[2], key[4])].add(f["scale"])
    recipes_of: dict[tuple, set] = defaultdict(set)
    for kind, size, task, metric, recipe in groups:
        recipes_of[(size, task)].add(recipe)
    first = first_recipes(runs)
    boards = []
    for key in sorted(groups, key=lambda k: (BOARD_KINDS.get(k[0]).order, k[1], k[2], _metric_order(k[3]),
                                             k[4] != first.get((k[1], k[2])), k[4].label)):
        kind, size, task, metric, recipe = key
        several = len(recipes_of[(size, task)]) > 1
        id_part = None if recipe == first.get((size, task)) else recipe.slug
        boards.append(_scale_board(kind, size, task, metric, recipe if several else None, recipe,
                                   sorted(scales_of[(size, task, recipe)]), groups[key], id_part))
    return boards


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


def _metric_order(metric: str) -> tuple:
    base, _, depth = metric.partition("_depth")
    return (base, int(depth) if depth.isdigit() else -1, metric)


def _scale_board(kind, size, task, metric, shown_recipe, recipe, scales, rows, id_part: str | None = None) -> Board:
    info = info_of(metric)
    lower = info.lower_is_better if info else False
    share = bool(info and info.unit == SHARE)
    what = "bpb" if metric == "bpb" else metric
    board_kind = BOARD_KINDS.get(kind)
    title = board_kind.title(task, metric, size)
    if shown_recipe is not None:
        title += f" ({shown_recipe.label})"
    entries: dict[str, Entry] = {}
    by_entry: dict[str, dict[int, list[dict]]] = defaultdict(lambda: defaultdict(list))
    eval_len: dict[int, int] = {}
    chance = next((f["chance"] for f in rows if f["chance"] is not None), None)
    if chance is None and info is not None:
        chance = info.chance
    for f in rows:
        entries.setdefault(f["encoding"], _entry(f))
        by_entry[f["encoding"]][f["scale"]].append(f)
        if f["eval_len"] is not None:
            eval_len.setdefault(f["scale"], f["eval_len"])
    seeds = sorted({f["seed"] for f in rows if _usable(f)})
    unit = f" ({info.unit})" if info and info.unit else ""
    name = info.display_name if info else metric
    columns = [Column(f"s{s}", f"{what} {s}x", f"{s}x {what}",
                      f"{name}{unit} at {s}x the training length (eval length {eval_len.get(s, '?')})",
                      lower, 3, "scale", chance) for s in scales]
    per_scale: dict[str, dict[int, dict[int, float]]] = defaultdict(dict)
    for enc, entry in entries.items():
        for s in scales:
            cell, values = seed_cell(by_entry[enc].get(s, []), share)
            entry.cells[f"s{s}"], entry.per_seed[f"s{s}"], per_scale[enc][s] = cell, values, values
            if share:
                entry.floors[f"s{s}"] = sampling_floors(by_entry[enc].get(s, []))
    most_seeds = max((len(v) for e in entries.values() for v in e.per_seed.values()), default=0)
    board = Board(_slug(kind, size, task, metric if board_kind.metric_in_id else None, id_part),
                  kind, title, size, task, metric, columns, list(entries.values()), seeds,
                  _interval_text(most_seeds, share), lower, chance, recipe.seq_len, recipe.label,
                  scales=scales, eval_len=eval_len)
    board.columns += _summary_columns(board, what, name)
    for enc, entry in entries.items():
        _summarise(entry, per_scale[enc], scales, seeds, share, lower)
    # "which encoding extrapolates best": ranked at the longest scale, not by a mean that mixes in 1x
    _rank_and_warn(board, f"s{max(scales)}", ranked=board_kind.ranked)
    _drop_uninformative_effective_length(board)
    if board_kind.compared:
        board.compared = [c.key for c in board.columns if c.group in ("scale", "score")]
    return board


def _summary_columns(board: Board, what: str, name: str) -> list[Column]:
    lower = board.lower_is_better
    kept = "bpb(1x) / bpb(s)" if lower else "m(s) / m(1)"
    return [
        Column("score", f"mean {what}", f"mean {what}",
               f"overall score: per seed, the mean {name} over every scale, then the mean over seeds; an entry with a "
               "not-applicable or missing scale has none", lower, 3, "score", board.chance),
        Column("extrapolation_score", "extrapolation score", "extrap. score",
               f"mean over scales s > 1 of {kept} (1.0: nothing lost beyond the training length), per seed then "
               "mean over seeds", False, 2, "derived"),
        Column("effective_length", "effective length", "eff. length",
               f"largest scale up to which the mean stays within {round(TOLERANCE * 100)}% (relative) of the 1x mean"
               + (f" and at or above {ABSOLUTE_ACCURACY:.0%} exact match (absolute; '<1x': below it at 1x)"
                  if board.metric and _is_share(board.metric) else "")
               + ", in training lengths (as RULER and NoLiMa define it)", False, 0, "derived"),
    ]


def _drop_uninformative_effective_length(board: Board) -> None:
    """Effective length is shown only where it tells rows apart."""
    shown = {e.cells["effective_length"].text for e in board.entries if "effective_length" in e.cells}
    if len(shown) <= 1:
        board.columns = [c for c in board.columns if c.key != "effective_length"]
        board.notes.append(f"Effective length ({next(iter(shown), None) or 'none'} for every row) is not shown: "
                           "it does not tell these rows apart.")


def _is_share(metric: str) -> bool:
    info = info_of(metric)
    return bool(info and info.unit == SHARE)


def _summarise(entry: Entry, per_scale: dict[int, dict[int, float]], scales, seeds, share: bool, lower: bool) -> None:
    """The overall score, the extrapolation score and the effective length of one entry."""
    applicable = all(entry.cells[f"s{s}"].status == "ok" for s in scales)
    summary = _summary([per_scale[s] for s in scales], seeds) if applicable else {}
    summary = {s: v for s, v in summary.items() if v is not None}
    entry.per_seed["score"] = summary
    if share and summary:  # the mean of S scales' shares: its sampling variance is their sum / S^2
        entry.floors["score"] = {seed: sum(entry.floors[f"s{s}"].get(seed, 0.0) for s in scales) / len(scales) ** 2
                                 for seed in summary}
    floor = fmean(entry.floors["score"].values()) if share and summary else None
    interval = stats.seed_interval(list(summary.values()), floor=floor, share=share)
    if interval.n == 1 and share:  # one seed: the Wilson interval of the examples pooled over scales
        ns = [c.interval.n for s in scales if (c := entry.cells[f"s{s}"]).interval]
        if len(ns) == len(scales):
            pooled = stats.wilson_interval(sum(entry.cells[f"s{s}"].value * n for s, n in zip(scales, ns)), sum(ns))
            interval = stats.Interval(interval.mean, pooled.lo, pooled.hi, pooled.n, pooled.method)
    entry.cells["score"] = Cell(interval.mean, interval if interval.mean is not None else None,
                                "ok" if interval.mean is not None else "missing")
    xs = {}
    for seed in seeds:
        by_scale = {s: per_scale[s].get(seed) if entry.cells[f"s{s}"].status != "not_applicable" else None
                    for s in scales}
        if by_scale.get(1) is not None and all(s == 1 or entry.cells[f"s{s}"].status != "missing" for s in scales):
            x = extrapolation_score(by_scale, lower)
            if x is not None:
                xs[seed] = x
    entry.per_seed["extrapolation_score"] = xs
    xi = stats.seed_interval(list(xs.values()))
    entry.cells["extrapolation_score"] = Cell(xi.mean, xi if xi.mean is not None else None,
                                              "ok" if xi.mean is not None else "missing")
    means = {s: entry.cells[f"s{s}"].value for s in scales if entry.cells[f"s{s}"].status != "missing"}
    eff = effective_length(means, TOLERANCE, lower, ABSOLUTE_ACCURACY if share else None)
    entry.cells["effective_length"] = Cell(eff, None, "ok" if eff is not None else "missing",
                                           None if eff is None else ("<1x" if eff == 0 else f"{eff}x"))


def _all_at_chance(board: Board) -> bool:
    """Every column that has a chance level sits at it in every row (and there is such a column)."""
    judged = [c for c in board.columns if c.group in ("scale", "task") and c.chance is not None]
    if not judged:
        return False
    for col in judged:
        intervals = [e.cells[col.key].interval for e in board.entries if e.cells[col.key].interval is not None]
        if intervals and not stats.all_at_chance(intervals, col.chance, bool(col.lower_is_better)):
            return False
    return True


def _all_zero(board: Board) -> bool:
    """An accuracy board (no chance level recorded) on which no entry answers any example."""
    info = info_of(board.metric) if board.metric else None
    values = [e.cells[c.key].value for e in board.entries for c in board.columns if c.group == "scale"]
    return bool(info and info.unit == SHARE and values and all(v in (None, 0) for v in values)
                and any(v == 0 for v in values))


def _rank_and_warn(board: Board, summary: str, ranked: bool = True) -> None:
    """Rank intervals from Holm-corrected paired tests at ``summary`` (:mod:`.ranking`), rows in
    the order of their means there; warnings instead of ranks where they would rank noise.

    A per-depth breakdown (a few examples per decile) is a diagnostic: it gets the warnings, not ranks."""
    lower = board.lower_is_better
    summaries = [e.cells[summary].interval for e in board.entries if e.cells[summary].interval is not None]
    at_chance = _all_at_chance(board)
    if at_chance:
        level = "" if board.chance is None else f" ({board.chance:.3g})"
        board.warnings.append(f"Every row sits at chance{level}: no entry is better than chance beyond its interval "
                              "at any length, so this board measures nothing and is not ranked.")
    if not at_chance and board.chance is None and _all_zero(board):
        board.warnings.append("Every row scores 0 at every length: no encoding solves this task, so it is not ranked.")
        at_chance = True
    tests = ranks = None
    if ranked and not at_chance:
        tests = ranking.pairwise({e.encoding: e.per_seed.get(summary, {}) for e in board.entries}, bool(lower),
                                 {e.encoding: e.floors.get(summary, {}) for e in board.entries})
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
        board.notes.append("A breakdown of a few examples per decile: not ranked.")
    else:
        _rank_column(board, summary, ranks or {})
        if tests is not None:
            kind = BOARD_KINDS.get(board.kind)
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


def _rank_column(board: Board, summary: str, ranks: dict[str, tuple[int, int]]) -> None:
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
