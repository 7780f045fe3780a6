"""The board kind of training cost: one board per size, task and recipe, a row per trained
encoding over its seeds."""

from __future__ import annotations

from collections import defaultdict

from suite.report import stats
from suite.report.board_kinds import BOARD_KINDS, BoardKind
from suite.report.board_parts import first_recipes, interval_text, slug
from suite.report.board_types import Board, Cell, Column, Entry
from suite.report.figures import Sources


@BOARD_KINDS.register()
class CostBoard(BoardKind):
    """Training cost of each checkpoint, from its training run's record (no figures)."""

    name = "cost"
    heading = "Training cost"
    blurb = ("Training cost of each checkpoint, from the same runs (mean over seeds). Training-free variants share "
             "their checkpoint's training cost.")
    order = 4
    measures_cost = True

    @classmethod
    def build(cls, groups: dict, sources: Sources) -> list[Board]:
        return cost_boards(sources.runs, sources.owners)

    @classmethod
    def lend(cls, boards: list[Board], carriers: list[Board]) -> None:
        """Beside each board of the same checkpoints' own scores: their size, speed and memory."""
        for board in carriers:
            cost = next((b for b in boards if b.size == board.size and b.task == board.task
                         and b.recipe == board.recipe), None)
            if cost is not None:
                shown = [c for c in cost.columns if c.key in BESIDE_SCORES]
                board.columns += shown
                cells = {e.encoding: e.cells for e in cost.entries}
                for e in board.entries:
                    mine = cells.get(e.trained_as or e.encoding, {})
                    for c in shown:
                        e.cells[c.key] = mine.get(c.key, Cell(status="missing"))


COST_COLUMNS = (  # key, header, terminal header, description, lower is better (None: no direction), digits
    ("n_params", "parameters", "params", "trainable parameters of the model", None, 0),
    ("train_tokens_per_s", "training tokens/s", "tok/s", "training throughput, tokens per second, by the run's wall "
     "clock on a machine other work may have shared (the bench board's figures are measured alone)", False, 0),
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
        board_id = slug(CostBoard.name, size, task, None if recipe == first.get((size, task)) else recipe.slug)
        board = Board(id=board_id, kind=CostBoard.name, title=f"Training cost: {task}, size {size} ({recipe.label})",
                      size=size, task=task, metric=None, columns=columns,
                      entries=sorted(entries.values(), key=lambda e: e.encoding), seeds=seeds,
                      method=interval_text(len(seeds), False), lower_is_better=None, recipe=recipe.label,
                      training_recipe=recipe, train_len=recipe.seq_len)
        boards.append(board)
    return boards
