"""The board kind of the GLUE-style battery: whole checkpoints fine-tuned on its tasks, one
board per size, training task, backbone recipe and fine-tuning setting."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean

from suite.report import stats
from suite.report.board_kinds import BOARD_KINDS, BoardKind
from suite.report.board_parts import (entry_of, first_recipes, interval_text, is_usable, rank_and_warn, seed_cell,
                                      slug)
from suite.report.board_types import Board, Cell, Column, Entry
from suite.report.figures import Sources
from suite.results.rows import board_of, metric_info


@BOARD_KINDS.register()
class GlueBoard(BoardKind):
    """The GLUE-style battery of whole checkpoints: the checkpoint-level figures of metrics declared
    ``board: glue`` (each task's score and the overall score)."""

    name = "glue"
    heading = "GLUE-style scores"
    blurb = ("Each backbone fine-tuned with a small head on the last byte, one recipe for every encoding; each "
             "task's score is the mean of its GLUE metrics, the overall score their unweighted mean, as in GLUE. "
             "One row per checkpoint: training-free variants share the row of the checkpoint they evaluate.")
    order = 3
    fine_tuned = True
    # 0.05 of the score: fine-tuning scores of encodings on a backbone differ by a few points
    # (the papers report 1-5 GLUE points between them), so a ranking that cannot see five is moot
    effect = 0.05
    effect_unit = "GLUE-style score"

    @classmethod
    def select(cls, figure: dict, run: dict | None) -> tuple | None:
        if not figure["checkpoint_level"] or board_of(figure["metric"]) != cls.name:
            return None
        # the backbone's training task, not the battery's: a board per checkpoint
        return figure["size"], run["task"] if run else figure["task"], run["recipe"] if run else None

    @classmethod
    def build(cls, groups: dict[tuple, list[dict]], sources: Sources) -> list[Board]:
        figures = [f for rows in groups.values() for f in rows]
        return glue_boards(groups, sources.runs, sources.owners, sources.glue_chances, settings_of(sources, figures))

    @classmethod
    def lend(cls, boards: list[Board], carriers: list[Board]) -> None:
        """Beside each board of the same checkpoints' own scores: their GLUE-style score, from the
        board of the same size, task and recipe (the checkpoints of another recipe are others) with the
        most rows, the first of those. A training-free variant has the score of its checkpoint's row."""
        for board in carriers:
            same = [b for b in boards if b.size == board.size and b.task == board.task and b.recipe == board.recipe
                    and b.architecture == board.architecture]
            g = max(same, key=lambda b: len(b.entries), default=None)
            if g is not None:
                board.columns.append(Column("glue", "GLUE-style score", "GLUE", "the same checkpoints fine-tuned on "
                                            "the GLUE-style battery (see its board)", False, 3, "glue", g.chance))
                cells = {e.encoding: e.cells["glue_score"] for e in g.entries}
                for e in board.entries:
                    e.cells["glue"] = cells.get(e.encoding, cells.get(e.trained_as, Cell(status="missing")))


@dataclass(frozen=True)
class GlueSetting:
    """A GLUE-style fine-tuning protocol (the evaluator's settings) as the boards tell two apart."""

    settings: str  # canonical JSON
    steps: int | None
    tasks: tuple[str, ...]

    @classmethod
    def of(cls, settings: dict) -> "GlueSetting":
        return cls(json.dumps(settings, sort_keys=True), settings.get("steps"), tuple(settings.get("tasks") or ()))

    @property
    def label(self) -> str:
        tasks = f" on {', '.join(self.tasks)}" if self.tasks else ""
        return f"fine-tuned {self.steps} steps{tasks}"

    @property
    def slug(self) -> str:
        import hashlib

        return f"ft{self.steps}-{hashlib.sha256(self.settings.encode()).hexdigest()[:6]}"


def settings_of(sources: Sources, figures: list[dict]) -> dict[str, tuple[GlueSetting, str]]:
    """eval_id -> (its fine-tuning setting, when it finished) for the evaluations of ``figures``."""
    if sources.con is None or not figures:
        return {}
    wanted = {f["eval_id"] for f in figures}
    return {r["eval_id"]: (GlueSetting.of(json.loads(r["settings"])), r["finished_at"] or "~")
            for r in sources.query("SELECT eval_id, settings, finished_at FROM evaluations") if r["eval_id"] in wanted}


def glue_boards(selected: dict[tuple, list[dict]], runs: dict, entries_of_run: dict[str, list[dict]],
                chances: dict[str, float | None], settings_of: dict[str, tuple] | None = None) -> list[Board]:
    """A board per (size, training task, backbone recipe, fine-tuning setting): each task's
    score and the macro average, for every encoding evaluated on the checkpoint (training-free
    variants share their checkpoint's). Two settings (the default job's 200 steps on two tasks,
    glue.yaml's whole battery) are two boards, never averaged together. As on the scale boards,
    the recipe that finished first keeps the plain id, and on it the setting that finished first."""
    settings_of = settings_of or {}
    groups: dict[tuple, list[dict]] = defaultdict(list)
    finished: dict[tuple, str] = {}
    for (size, trained_on, recipe), rows in selected.items():
        for f in rows:
            setting, at = settings_of.get(f.get("eval_id"), (None, "~"))
            key = (size, trained_on, recipe, setting)
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
    boards, of_setting = [], {}
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
        board = _glue_board(slug(GlueBoard.name, size, trained_on, id_part), title, size, trained_on, rows,
                            entries_of_run, chances)
        board.recipe = recipe.label if recipe is not None else None
        board.training_recipe = recipe
        boards.append(board)
        of_setting[board.id] = ((size, trained_on, recipe), setting)
    name_left_out(boards, of_setting)
    return boards


def tasks_at_chance(board: Board) -> list[str]:
    """The board's tasks on which no row is better than chance beyond its interval (its value, with
    one seed): the site's own test of a column at chance (suite.report.stats.all_at_chance)."""
    out = []
    for col in task_columns(board):
        intervals = [e.cells[col.key].interval for e in board.entries if e.cells[col.key].interval is not None]
        if col.chance is not None and intervals and stats.all_at_chance(intervals, col.chance, False):
            out.append(task_of(col))
    return out


def task_columns(board: Board) -> list[Column]:
    return [c for c in board.columns if c.group == "task"]


def task_of(col: Column) -> str:
    return col.key.split(":", 1)[1]  # a task column's key is "task:<name>"


def board_tasks(board: Board) -> list[str]:
    return [task_of(c) for c in task_columns(board)]


def name_left_out(boards: list[Board], of_setting: dict[str, tuple]) -> None:
    """On a board whose setting fine-tunes some of the battery's tasks, name the tasks it leaves out
    and, where a board of the same checkpoints' recipe fine-tunes them, whether they sit at chance
    there (the reason a grid leaves a task out: a task no backbone learns averages noise in)."""
    for board in boards:
        group, setting = of_setting[board.id]
        if setting is None or not setting.tasks:
            continue
        mine = set(board_tasks(board))
        for other in boards:
            if other is board or of_setting[other.id][0] != group or not mine < set(board_tasks(other)):
                continue
            at_chance = set(tasks_at_chance(other))
            left = [t for t in board_tasks(other) if t not in mine]
            said = [f"{t} ({'at chance' if t in at_chance else 'not at chance'} there)" for t in left]
            board.notes.append(f"This setting fine-tunes {len(mine)} of the {len(mine) + len(left)} tasks of the board "
                               f"'{other.title}' ({other.id}), on the same checkpoints' recipe; it leaves out "
                               f"{', '.join(said)}, so its overall score is the mean of its own {len(mine)} tasks.")
            break


def checkpoint_owners(owners: list[dict]) -> list[dict]:
    """The encodings evaluated on one checkpoint, the one it was trained as first: a GLUE-style score
    fine-tunes the checkpoint, so its training-free variants have the same figures, and counting them
    as rows of their own would make one checkpoint a tie of several (its row names them)."""
    return sorted(owners, key=lambda o: (bool(o["trained_as"]) and o["trained_as"] != o["encoding"], o["encoding"]))


def _glue_board(board_id, title, size, trained_on, rows, entries_of_run, chances) -> Board:
    names = sorted({f["task"].split("/", 1)[1] for f in rows if "/" in f["task"]})
    by_entry: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    entries: dict[str, Entry] = {}
    for f in rows:
        own, *sharing = checkpoint_owners(entries_of_run.get(f["run_id"]) or [f])
        entry = entries.setdefault(own["encoding"], entry_of(own))
        entry.family = entry.family or own.get("family")
        entry.shared_by = sorted(set(entry.shared_by) | {o["encoding"] for o in sharing})
        by_entry[own["encoding"]][f["task"]].append(f)
    chances = {t: next((f["chance"] for f in rows if f["task"] == f"glue/{t}" and f["chance"] is not None),
                       chances.get(t)) for t in names}  # a row's own chance level first
    task_chance = [chances.get(t) for t in names]
    glue_chance = fmean(task_chance) if task_chance and None not in task_chance else None
    info = metric_info()["glue_score"]
    columns = [Column("glue_score", "GLUE-style score", "GLUE", info.description, False, 3, "score", glue_chance)]
    columns += [Column(f"task:{t}", t, t[:6], f"{t}: the mean of its GLUE metrics on the dev split"
                       + (f" (chance {chances[t]:g})" if chances.get(t) is not None else ""), False, 3, "task",
                       chances.get(t)) for t in names]
    seeds = sorted({f["seed"] for f in rows if is_usable(f)})
    board = Board(id=board_id, kind=GlueBoard.name, title=title, size=size, task=trained_on, metric="glue_score",
                  columns=columns, entries=list(entries.values()), seeds=seeds,
                  method=interval_text(len(seeds), False), lower_is_better=False, chance=glue_chance)
    for enc, entry in entries.items():
        for col in columns:
            task = "glue" if col.key == "glue_score" else f"glue/{col.key.split(':', 1)[1]}"
            cell, values = seed_cell(by_entry[enc].get(task, []), False)
            entry.cells[col.key], entry.per_seed[col.key] = cell, values
    rank_and_warn(board, "glue_score")
    at_chance = tasks_at_chance(board)
    if at_chance and len(at_chance) < len(names):
        board.notes.append(f"At chance on this board: {', '.join(at_chance)}. No row is better than chance beyond its "
                           "interval on these tasks, so they measure nothing here and the overall score averages "
                           "them in; a grid that fine-tunes the tasks learned above chance leaves them out.")
    return board
