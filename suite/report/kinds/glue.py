"""The board kind of the GLUE-style battery: whole checkpoints fine-tuned on its tasks, one
board per size, training task, backbone recipe and fine-tuning setting."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean

from suite.report.board_kinds import BOARD_KINDS, BoardKind
from suite.report.board_parts import (entry_of, first_recipes, interval_text, is_usable, rank_and_warn, seed_cell,
                                      slug)
from suite.report.board_types import Board, Column, Entry
from suite.report.figures import _dicts
from suite.results.rows import metric_info


@BOARD_KINDS.register("glue")
class GlueBoard(BoardKind):
    """The GLUE-style battery of whole checkpoints (suite.report.leaderboard)."""

    # 0.05 of the score: fine-tuning scores of encodings on a backbone differ by a few points
    # (the papers report 1-5 GLUE points between them), so a ranking that cannot see five is moot
    effect = 0.05
    effect_unit = "GLUE-style score"


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


def load_glue_settings(con) -> dict[str, tuple[GlueSetting, str]]:
    """eval_id -> (its GLUE-style setting, when it finished) for every GLUE-style evaluation."""
    return {r["eval_id"]: (GlueSetting.of(json.loads(r["settings"])), r["finished_at"] or "~")
            for r in _dicts(con, "SELECT eval_id, settings, finished_at FROM evaluations WHERE evaluator = 'glue'")}


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
        boards.append(_glue_board(slug("glue", size, trained_on, id_part), title, size, trained_on, rows,
                                  entries_of_run, chances))
    return boards


def _glue_board(board_id, title, size, trained_on, rows, entries_of_run, chances) -> Board:
    names = sorted({f["task"].split("/", 1)[1] for f in rows if "/" in f["task"]})
    by_entry: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    entries: dict[str, Entry] = {}
    for f in rows:
        for owner in entries_of_run.get(f["run_id"]) or [f]:
            entry = entries.setdefault(owner["encoding"], entry_of(owner))
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
    seeds = sorted({f["seed"] for f in rows if is_usable(f)})
    board = Board(id=board_id, kind="glue", title=title, size=size, task=trained_on, metric="glue_score",
                  columns=columns, entries=list(entries.values()), seeds=seeds,
                  method=interval_text(len(seeds), False), lower_is_better=False, chance=glue_chance)
    for enc, entry in entries.items():
        for col in columns:
            task = "glue" if col.key == "glue_score" else f"glue/{col.key.split(':', 1)[1]}"
            cell, values = seed_cell(by_entry[enc].get(task, []), False)
            entry.cells[col.key], entry.per_seed[col.key] = cell, values
    rank_and_warn(board, "glue_score")
    return board
