"""The boards with a column per scale, computed from per-seed figures with :mod:`suite.report.stats`.

:class:`ScaleBoardKind` is the kind of such boards: language modelling on a corpus (bits per
byte at each scale), a length-generalization task (accuracy at each scale), a per-depth breakdown
of a task (suite.report.kinds); the other kinds (GLUE-style battery, training cost) build their own.
Each is built from the ``figures`` view one figure per (encoding, size, task, metric, scale, seed),
so every cell is a mean over seeds with its 95% interval, and ranks are intervals from paired tests
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

from suite.report import stats
from suite.report.board_kinds import BOARD_KINDS, BoardKind, ordered_kinds
from suite.report.text import cell_text, difference_of, mean_of, run_texts, text_note
from suite.report.board_parts import (entry_of, first_recipes, interval_text, is_usable, rank_and_warn, sampling_floors,
                                      seed_cell, slug)
# the boards' types, which the pages and the terminal import from here too
from suite.report.board_types import SHARE, Board, Cell, Column, Entry  # noqa: F401
from suite.report.figures import NO_RECIPE, Sources, info_of
from suite.report.row_kinds import split_build
from suite.report.scores import ABSOLUTE_ACCURACY, TOLERANCE, effective_length, extrapolation_score
from suite.results.rows import board_of, breakdown_of


def _summary(per_seed_columns: list[dict[int, float]], seeds) -> dict[int, float | None]:
    """Per seed, the mean over the columns; None where a column lacks that seed."""
    out = {}
    for seed in seeds:
        vals = [col.get(seed) for col in per_seed_columns]
        out[seed] = None if not vals or any(v is None for v in vals) else fmean(vals)
    return out


# -- scale boards (language modelling, tasks, breakdowns) -------------------------------------------------------


class ScaleBoardKind(BoardKind):
    """A kind of board with a column per scale: one board per size, task, metric and recipe of the
    figures whose metric's declaration names this kind (suite/results/metrics.yaml ``board``, or a
    breakdown's ``breakdown_board``)."""

    per_scale = True

    @classmethod
    def select(cls, figure: dict, run: dict | None) -> tuple | None:
        if figure["checkpoint_level"] or figure["scale"] is None or board_of(figure["metric"]) != cls.name:
            return None
        return figure["size"], figure["task"], figure["metric"], run["recipe"] if run else NO_RECIPE

    @classmethod
    def build(cls, groups: dict[tuple, list[dict]], sources: Sources) -> list[Board]:
        scales_of, recipes_of = _shared_axes(sources)
        first = first_recipes(sources.runs)
        boards = []
        for key in sorted(groups, key=lambda k: (k[0], k[1], _metric_order(k[2]), k[3] != first.get((k[0], k[1])),
                                                 k[3].label)):
            size, task, metric, recipe = key
            several = len(recipes_of[(size, task)]) > 1
            id_part = None if recipe == first.get((size, task)) else recipe.slug
            boards.append(_scale_board(cls, size, task, metric, recipe if several else None, recipe,
                                       sorted(scales_of[(size, task, recipe)]), groups[key], id_part))
        return boards


def _shared_axes(sources: Sources) -> tuple[dict[tuple, set[int]], dict[tuple, set]]:
    """Every scale evaluated for (size, task, recipe), and every recipe of (size, task), over the
    figures of every per-scale kind: a task's board and its breakdowns have the same columns, and a
    recipe that is on one of them is named on all."""
    scales_of: dict[tuple, set[int]] = defaultdict(set)
    recipes_of: dict[tuple, set] = defaultdict(set)
    for name, groups in sources.selected.items():
        if not issubclass(BOARD_KINDS.get(name), ScaleBoardKind):
            continue
        for (size, task, metric, recipe), rows in groups.items():
            scales_of[(size, task, recipe)].update(f["scale"] for f in rows)
            recipes_of[(size, task)].add(recipe)
    return scales_of, recipes_of


def scale_boards(figures: list[dict], runs: dict) -> list[Board]:
    """The boards of every per-scale kind from ``figures`` alone (no database), in kind order."""
    kinds = [kind for kind in ordered_kinds() if issubclass(kind, ScaleBoardKind)]
    sources = Sources(runs, figures)
    sources.select(kinds)
    return [board for kind in kinds for board in split_build(kind, sources)]


def _metric_order(metric: str) -> tuple:
    """A metric, then its breakdowns in the order of their values (acc, acc_depth0, acc_depth1, ...)."""
    base, _, value = breakdown_of(metric) or (metric, None, "")
    return (base, int(value) if value.isdigit() else -1, metric)


def _scale_board(board_kind: type[BoardKind], size, task, metric, shown_recipe, recipe, scales, rows,
                 id_part: str | None = None) -> Board:
    info = info_of(metric)
    lower = (info.lower_is_better if info else False) if board_kind.directed else None
    share = bool(info and info.unit == SHARE)
    what = metric
    kind = board_kind.name
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
        entries.setdefault(f["encoding"], entry_of(f))
        by_entry[f["encoding"]][f["scale"]].append(f)
        if f["eval_len"] is not None:
            eval_len.setdefault(f["scale"], f["eval_len"])
    seeds = sorted({f["seed"] for f in rows if is_usable(f)})
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
            elif texts := run_texts(by_entry[enc].get(s, [])):
                entry.text[f"s{s}"] = texts
    most_seeds = max((len(v) for e in entries.values() for v in e.per_seed.values()), default=0)
    board = Board(id=slug(kind, size, task, metric if board_kind.metric_in_id else None, id_part),
                  kind=kind, title=title, size=size, task=task, metric=metric, columns=columns,
                  entries=list(entries.values()), seeds=seeds, method=interval_text(most_seeds, share),
                  lower_is_better=lower, chance=chance, train_len=recipe.seq_len, recipe=recipe.label,
                  training_recipe=recipe, scales=scales, eval_len=eval_len)
    if note := text_note(entries.values()):
        board.method += note
    if recipe.lr_sweep:  # a tuned grid (suite.plan.tuning): the board states its budget
        board.notes.append(f"Learning rate tuned for each encoding: the best of {len(recipe.lr_sweep)} rates "
                           f"({', '.join(f'{lr:g}' for lr in recipe.lr_sweep)}) on validation loss at the training "
                           "length, at one seed, then used for every seed; each encoding's page lists every rate tried.")
    board.columns += _summary_columns(board, what, name)
    for enc, entry in entries.items():
        _summarise(entry, per_scale[enc], scales, seeds, share, bool(lower))
    if board_kind.change_column and 1 in scales and max(scales) > 1:
        _change_column(board, what, name, unit, max(scales))
    # "which encoding extrapolates best": ranked at the longest scale, not by a mean that mixes in 1x
    rank_and_warn(board, f"s{max(scales)}")
    if board_kind.extrapolation_columns:
        _drop_uninformative_effective_length(board)
    else:  # kept or lost beyond L is a score's question; a diagnostic's figures are read as they are
        board.columns = [c for c in board.columns if c.key not in ("extrapolation_score", "effective_length")]
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


def _change_column(board: Board, what: str, name: str, unit: str, longest: int) -> None:
    """Each row's change from 1x to the longest scale, per seed then its mean and t interval: the
    extrapolation a row's figure at the longest scale holds, apart from its quality at 1x."""
    board.columns.append(Column(
        "change", f"{what} change 1x to {longest}x", f"{longest}x-1x",
        f"{name}{unit} at {longest}x minus at 1x, per seed (the same run), then the mean over seeds: what the row "
        "loses beyond the training length, apart from how good it is within it", board.lower_is_better, 3, "derived"))
    for entry in board.entries:
        at_1, at_l = entry.per_seed.get("s1", {}), entry.per_seed.get(f"s{longest}", {})
        change = {seed: at_l[seed] - at_1[seed] for seed in at_1.keys() & at_l.keys()
                  if at_1[seed] is not None and at_l[seed] is not None}
        entry.per_seed["change"] = change
        if "s1" in entry.text and f"s{longest}" in entry.text:
            entry.text["change"] = difference_of(entry.text[f"s{longest}"], entry.text["s1"])
        interval = stats.seed_interval(list(change.values()), text=cell_text(entry.text.get("change", {}), change))
        entry.cells["change"] = Cell(interval.mean, interval if interval.mean is not None else None,
                                     "ok" if interval.mean is not None else "missing")


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
    if summary and all(f"s{s}" in entry.text for s in scales):
        entry.text["score"] = mean_of([entry.text[f"s{s}"] for s in scales], summary)
    interval = stats.seed_interval(list(summary.values()), floor=floor, share=share,
                                   text=cell_text(entry.text.get("score", {}), summary))
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


