"""The whole leaderboard: the scale boards of :mod:`.boards`, plus the boards of whole
checkpoints (GLUE-style scores, training cost) and the columns they lend each other."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean

import duckdb

from suite.report import stats
from suite.report.board_kinds import BOARD_KINDS, kind_of
from suite.results.rows import metric_info
from suite.report.boards import (Board, Cell, Column, Entry, _entry, _interval_text, _rank_and_warn, _slug, _usable,
                                 first_recipes, scale_boards, seed_cell)
from suite.report.figures import _dicts, load_figures, load_glue_settings, load_runs


# -- GLUE-style boards -----------------------------------------------------------------------------------------


def glue_boards(figures: list[dict], runs: dict, entries_of_run: dict[str, list[dict]],
                chances: dict[str, float | None], settings_of: dict[str, tuple] | None = None) -> list[Board]:
    """A board per (size, training task, backbone recipe, fine-tuning setting): each task's
    score and the macro average, for every encoding evaluated on the checkpoint (training-free
    variants share their checkpoint's). Two settings (the default job's 200 steps on two tasks,
    glue.yaml's whole battery) are two boards, never averaged together. As on the scale boards,
    the recipe that finished first keeps the plain id, and on it the setting that finished first."""
    settings_of = settings_of or {}
    groups: dict[tuple, list[dict]] = defaultdict(list)
    finished: dict[tuple, str] = {}
    for f in figures:
        if f["checkpoint_level"] and f["metric"] in ("score", "glue_score"):
            run = runs.get(f["run_id"])
            recipe = run["recipe"] if run else None
            setting, at = settings_of.get(f.get("eval_id"), (None, "~"))
            key = (f["size"], run["task"] if run else f["task"], recipe, setting)
            groups[key].append(f)
            finished[key] = min(finished.get(key, "~"), at)
    tasks_per_size, recipes_of, settings_on = defaultdict(set), defaultdict(set), defaultdict(set)
    for size, task, recipe, setting in groups:
        tasks_per_size[size].add(task)
        recipes_of[(size, task)].add(recipe)
        settings_on[(size, task, recipe)].add(setting)
    first = first_recipes(runs)
    first_setting = {}
    for key, at in sorted(finished.items(), key=lambda kv: (kv[1], kv[0][3].settings if kv[0][3] else "")):
        first_setting.setdefault(key[:3], key[3])
    boards = []
    for (size, trained_on, recipe, setting), rows in sorted(groups.items(), key=lambda kv: (
            kv[0][0], kv[0][1], kv[0][2] != first.get(kv[0][:2]), kv[0][2].label if kv[0][2] else "",
            kv[0][3] != first_setting.get(kv[0][:3]), kv[0][3].settings if kv[0][3] else "")):
        title = f"GLUE-style scores, size {size}"
        if len(tasks_per_size[size]) > 1:
            title += f" (backbones trained on {trained_on})"
        if len(recipes_of[(size, trained_on)]) > 1 and recipe is not None:
            title += f" ({recipe.label})"
        if len(settings_on[(size, trained_on, recipe)]) > 1 and setting is not None:
            title += f" ({setting.label})"
        id_parts = [recipe.slug if recipe is not None and recipe != first.get((size, trained_on)) else None,
                    setting.slug if setting is not None and setting != first_setting[(size, trained_on, recipe)] else None]
        id_part = "-".join(p for p in id_parts if p) or None
        boards.append(_glue_board(_slug("glue", size, trained_on, id_part), title, size, trained_on, rows,
                                  entries_of_run, chances))
    return boards


def _glue_board(board_id, title, size, trained_on, rows, entries_of_run, chances) -> Board:
    names = sorted({f["task"].split("/", 1)[1] for f in rows if "/" in f["task"]})
    by_entry: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    entries: dict[str, Entry] = {}
    for f in rows:
        for owner in entries_of_run.get(f["run_id"]) or [f]:
            entry = entries.setdefault(owner["encoding"], _entry(owner))
            entry.family = entry.family or owner.get("family")
            by_entry[owner["encoding"]][f["task"]].append(f)
    chances = {t: next((f["chance"] for f in rows if f["task"] == f"glue/{t}" and f["chance"] is not None),
                       chances.get(t)) for t in names}  # a row's own chance level first
    task_chance = [chances.get(t) for t in names]
    glue_chance = fmean(task_chance) if task_chance and None not in task_chance else None
    info = metric_info()["glue_score"]
    columns = [Column("glue_score", "GLUE-style score", "GLUE", info.description, False, 3, "score", glue_chance)]
    columns += [Column(f"task:{t}", t, t[:6], f"{t}: the mean of its GLUE metrics on the dev split"
                       + (f" (chance {chances[t]:g})" if chances.get(t) is not None else ""), False, 3, "task",
                       chances.get(t)) for t in names]
    seeds = sorted({f["seed"] for f in rows if _usable(f)})
    board = Board(board_id, "glue", title, size, trained_on, "glue_score", columns, list(entries.values()), seeds,
                  _interval_text(len(seeds), False), False, glue_chance)
    for enc, entry in entries.items():
        for col in columns:
            task = "glue" if col.key == "glue_score" else f"glue/{col.key.split(':', 1)[1]}"
            cell, values = seed_cell(by_entry[enc].get(task, []), False)
            entry.cells[col.key], entry.per_seed[col.key] = cell, values
    _rank_and_warn(board, "glue_score")
    return board


# -- cost boards -------------------------------------------------------------------------------------------------

COST_COLUMNS = (  # key, header, terminal header, description, lower is better (None: no direction), digits
    ("n_params", "parameters", "params", "trainable parameters of the model", None, 0),
    ("train_tokens_per_s", "training tokens/s", "tok/s", "training throughput, tokens per second", False, 0),
    ("peak_memory_mb", "peak memory (MiB)", "MiB", "peak memory of the training run, measured for it alone (the "
     "process's peak is reset before it)", True, 0),
    ("train_wall_s", "training time (s)", "train s", "wall time of the training loop", True, 1),
    ("eval_peak_memory_mb", "eval peak memory (MiB)", "eval MiB", "the largest peak memory of one evaluation of the "
     "checkpoint, each measured alone", True, 0),
    ("eval_wall_s", "evaluation time (s)", "eval s", "wall time of every evaluation of the checkpoint, summed", True, 1),
)
BESIDE_SCORES = ("n_params", "train_tokens_per_s", "peak_memory_mb")  # the cost columns a score board shows too


def cost_boards(runs: dict, entries_of_run: dict[str, list[dict]]) -> list[Board]:
    """Training cost per (size, task, recipe): one row per trained encoding, over its seeds."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in runs.values():
        if r["status"] == "done":
            groups[(r["size"], r["task"], r["recipe"])].append(r)
    first = first_recipes(runs)
    boards = []
    for (size, task, recipe), rows in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1],
                                                                               kv[0][2] != first.get(kv[0][:2]),
                                                                               kv[0][2].label)):
        columns = [Column(k, label, short, desc, lower, digits, "cost") for k, label, short, desc, lower, digits in COST_COLUMNS]
        entries: dict[str, Entry] = {}
        values: dict[str, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
        for r in rows:
            entry = entries.setdefault(r["encoding"], Entry(r["encoding"], r["display_name"] or r["encoding"],
                                                            r["family"], None))
            for owner in entries_of_run.get(r["run_id"], []):
                if owner["encoding"] != r["encoding"] and owner["encoding"] not in entry.shared_by:
                    entry.shared_by.append(owner["encoding"])
            for key, *_ in COST_COLUMNS:
                if r[key] is not None:
                    values[r["encoding"]][key][r["seed"]] = float(r[key])
        for enc, entry in entries.items():
            for key, *_ in COST_COLUMNS:
                interval = stats.seed_interval(list(values[enc][key].values()))
                shown = interval if interval.mean is not None and key != "n_params" else None  # a count, not noisy
                entry.cells[key] = Cell(interval.mean, shown, "ok" if interval.mean is not None else "missing")
                entry.per_seed[key] = dict(values[enc][key])
            entry.shared_by.sort()
        seeds = sorted({r["seed"] for r in rows})
        board_id = _slug("cost", size, task, None if recipe == first.get((size, task)) else recipe.slug)
        board = Board(board_id, "cost", f"Training cost: {task}, size {size} ({recipe.label})", size, task, None,
                      columns, sorted(entries.values(), key=lambda e: e.encoding), seeds,
                      _interval_text(len(seeds), False), None, recipe=recipe.label, train_len=recipe.seq_len)
        boards.append(board)
    return boards


# -- what each encoding costs, measured by posbench bench ------------------------------------------------------------

BENCH_COLUMNS = (  # metric, header, terminal header, description, lower is better, digits
    ("train_tokens_per_s", "Lightning tok/s", "L tok/s", "training tokens per second through the Lightning module "
     "(median of timed steps); in brackets, the ratio to NoPE in the same run", False, 0),
    ("bare_train_tokens_per_s", "bare loop tok/s", "bare tok/s", "the same model, optimizer and batches in a plain "
     "PyTorch loop", False, 0),
    ("lightning_vs_bare", "Lightning / bare", "L/bare", "the Lightning loop's speed as a share of the bare loop's", False, 2),
    ("train_mfu", "MFU", "MFU", "model FLOP utilization of the training step against this machine's measured "
     "matmul peak (6 N + 12 L T d FLOPs a token)", False, 2),
)


def bench_boards(con) -> list[Board]:
    """The latest ``posbench bench`` of each shape and device (the ``bench`` table): one row
    per encoding, its training and evaluation speed and evaluation memory."""
    try:
        rows = _dicts(con, "SELECT * FROM bench ORDER BY created_at")
    except duckdb.Error:  # a database written before the bench table existed
        return []
    latest: dict[tuple, str] = {}
    for r in rows:
        latest[(r["device"], r["size"], r["d_model"], r["n_layers"], r["seq_len"], r["batch"])] = r["bench_id"]
    boards = []
    for key, bench_id in sorted(latest.items(), key=lambda kv: str(kv[0])):
        mine = [r for r in rows if r["bench_id"] == bench_id]
        scales = sorted({r["scale"] for r in mine if r["scale"] is not None})
        columns = [Column(m, label, short, desc, lower, digits, "cost") for m, label, short, desc, lower, digits in BENCH_COLUMNS]
        columns += [Column(f"eval_tokens_per_s@{s}", f"eval tok/s {s}x", f"ev {s}x", f"evaluation tokens per second "
                           f"at {s}x the benchmark length (ratio to NoPE)", False, 0, "cost") for s in scales]
        columns += [Column(f"eval_peak_mib@{s}", f"eval MiB {s}x", f"MiB {s}x", f"peak evaluation memory at {s}x, "
                           "MiB above the resident set before the forward (ratio to NoPE)", True, 1, "cost") for s in scales]
        entries: dict[str, Entry] = {}
        for r in mine:
            shown = f"{r['display_name'] or r['encoding']} ({r['attention_path']} path)"
            entry = entries.setdefault(r["encoding"], Entry(r["encoding"], shown, None, None))
            col = r["metric"] if r["scale"] is None else f"{r['metric']}@{r['scale']}"
            if r["value"] is not None and any(c.key == col for c in columns):
                digits = next(c.digits for c in columns if c.key == col)
                ratio = "" if r["vs_nope"] is None or col in ("lightning_vs_bare", "train_mfu") else f" ({r['vs_nope']:.2f}x)"
                text = f"{r['value']:.0%}" if col == "train_mfu" else f"{r['value']:,.{digits}f}{ratio}"
                entry.cells[col] = Cell(r["value"], None, "ok", text)
        for entry in entries.values():
            for c in columns:
                entry.cells.setdefault(c.key, Cell(status="missing"))
        device, size, d, n_layers, seq_len, batch = key
        first = mine[0]
        title = (f"What each encoding costs: {size or f'd={d}, {n_layers} layers'}, T={seq_len}, batch {batch}, {device} "
                 f"({first['machine']}, {first['created_at']})")
        board = Board(_slug("bench", device, size or d, seq_len, batch), "cost", title, size or str(d), "bench", None,
                      columns, sorted(entries.values(), key=lambda e: e.encoding), [],
                      f"one run of posbench bench ({bench_id}); matmul peak {first['matmul_peak_flops'] / 1e9:.0f} GFLOP/s",
                      None, train_len=seq_len)
        board.notes.append("Measured by `posbench bench` in one process: ratios to NoPE are within that run, on one "
                           "machine whose load the record states.")
        boards.append(board)
    return boards


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
