"""Reading the database for the boards: the figures one per (encoding, size, task, metric,
scale, seed), the runs with their recipes, and what each metric is; :class:`Sources` holds them
for the board kinds (suite.report.kinds), which each pick their figures and build their boards."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field

from suite.core import machine
from suite.results.rows import MetricInfo, declaration


def _dicts(con, sql: str, params=()) -> list[dict]:
    cur = con.execute(sql, params)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


@dataclass(frozen=True)
class Recipe:
    """A training recipe as the boards and the header show it."""

    seq_len: int | None
    steps: int | None
    batch_size: int | None
    lr: float | None  # None where it was tuned: each encoding's own, from ``lr_sweep``
    lr_sweep: tuple[float, ...] | None = None  # a tuned grid's learning rates (suite.plan.tuning)

    @classmethod
    def of(cls, train: dict) -> "Recipe":
        sweep = train.get("lr_sweep")
        if isinstance(sweep, list) and sweep:  # tuned: one recipe for every encoding, whatever rate each chose
            return cls(train.get("seq_len"), train.get("steps"), train.get("batch_size"), None, tuple(sweep))
        return cls(train.get("seq_len"), train.get("steps"), train.get("batch_size"), train.get("lr"))

    @property
    def tokens(self) -> int | None:
        if None in (self.seq_len, self.steps, self.batch_size):
            return None
        return self.seq_len * self.steps * self.batch_size

    @property
    def label(self) -> str:
        tuned = f", lr tuned over {', '.join(f'{lr:g}' for lr in self.lr_sweep)}" if self.lr_sweep else ""
        return f"L = {self.seq_len}, {self.steps} steps x {self.batch_size}{tuned}"

    @property
    def slug(self) -> str:
        return f"L{self.seq_len}-{self.steps}x{self.batch_size}" + ("-tuned" if self.lr_sweep else "")


def load_runs(con) -> dict[str, dict]:
    """run_id -> the run's row (cost, provenance, the machine class its record names: its name,
    suite.core.machine.label, and its identity, class_key) with its parsed training recipe. A fine-tuned
    child (suite.plan.grid.TrainingRun.parent) takes its parent's: it is a row of the parent's
    boards, beside the training-free rows of the same checkpoint, at the same scales."""
    runs = {}
    for r in _dicts(con, """SELECT run_id, encoding, display_name, family, size, task, seed, status, n_params,
                                   train_tokens_per_s, peak_memory_mb, train_wall_s, wall_s, git_commit, finished_at,
                                   device, precision,
                                   coalesce(json_extract(run, '$.parent.train'), json_extract(run, '$.train')) AS train,
                                   json_extract(run, '$.size') AS size_spec,
                                   corpus, json_extract_string(run, '$.task.kind') AS kind,
                                   json_extract_string(numerics, '$.cpu') AS cpu, numerics,
                                   e.eval_peak_memory_mb, e.eval_wall_s, coalesce(e.n_evaluations, 0) AS n_evaluations
                            FROM runs LEFT JOIN (
                                SELECT run_id, max(peak_memory_mb) AS eval_peak_memory_mb, sum(wall_s) AS eval_wall_s,
                                       count(*) AS n_evaluations
                                FROM evaluations WHERE status = 'done' GROUP BY run_id) e USING (run_id)"""):
        r["recipe"] = Recipe.of(json.loads(r["train"]) if r["train"] else {})
        r["size_spec"] = json.loads(r["size_spec"]) if r["size_spec"] else {}
        numerics = r.pop("numerics")
        numerics = json.loads(numerics) if isinstance(numerics, str) else numerics
        # None where the record names no numerics (a run that failed before it trained)
        r["machine_class"] = machine.label(numerics) if numerics else None
        r["machine_class_key"] = machine.class_key(numerics)
        runs[r["run_id"]] = r
    return runs


def load_figures(con) -> list[dict]:
    """Every figure, with its text where it was measured on a sample of text (suite.report.text)."""
    from suite.report.text import load_passages, text_of_figure

    figures = _dicts(con, """SELECT encoding, display_name, family, trained_as, checkpoint_level, size, task, metric, scale,
                                    eval_len, seed, run_id, eval_id, value, n, status, chance, stderr
                             FROM figures ORDER BY size, task, metric, encoding, scale, seed""")
    passages = load_passages(con)
    for f in figures:
        f["text"] = text_of_figure(f, passages)
    return figures


def entries_by_run(con) -> dict[str, list[dict]]:
    """run_id -> every encoding evaluated on that checkpoint (a checkpoint-level figure belongs to all)."""
    out: dict[str, list[dict]] = defaultdict(list)
    for r in _dicts(con, "SELECT run_id, encoding, display_name, family, trained_as FROM entries ORDER BY encoding"):
        out[r["run_id"]].append(r)
    return out


NO_RECIPE = Recipe(None, None, None, None)  # a figure whose training run is not in the database


@dataclass
class Sources:
    """What the board kinds build their boards from: the database's runs and figures, the encodings
    evaluated on each checkpoint, and (filled by :meth:`select`) the figures each kind picked."""

    runs: dict[str, dict]
    figures: list[dict]
    owners: dict[str, list[dict]] = field(default_factory=dict)  # run_id -> every encoding evaluated on it
    glue_chances: dict[str, float | None] = field(default_factory=dict)  # GLUE-style task -> its chance level
    con: object = None  # the database, for a kind that reads a table of its own (None: figures alone)
    selected: dict[str, dict[object, list[dict]]] = field(default_factory=dict)  # kind -> group -> figures

    @classmethod
    def load(cls, con, glue_chances: dict[str, float | None] | None = None) -> "Sources":
        return cls(load_runs(con), load_figures(con), entries_by_run(con), glue_chances or {}, con)

    def query(self, sql: str, params=()) -> list[dict]:
        """Rows of the database as dicts (a kind's own table, such as the bench's)."""
        return _dicts(self.con, sql, params)

    def select(self, kinds) -> None:
        """Offer every figure to every kind (suite.report.board_kinds.BoardKind.select): each keeps
        the ones it shows, grouped by its boards."""
        for kind in kinds:
            self.selected[kind.name] = defaultdict(list)
        for f in self.figures:
            run = self.runs.get(f["run_id"])
            for kind in kinds:
                key = kind.select(f, run)
                if key is not None:
                    self.selected[kind.name][key].append(f)


def info_of(metric: str) -> MetricInfo | None:
    """A metric's metadata; a per-depth breakdown (``acc_depth3``) has its base metric's."""
    return declaration(metric)
