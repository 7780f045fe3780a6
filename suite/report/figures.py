"""Reading the database for the boards: the figures one per (encoding, size, task, metric,
scale, seed), the runs with their recipes, and what each metric is."""

from __future__ import annotations

import json
from dataclasses import dataclass

from suite.results.rows import MetricInfo, metric_info


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
    lr: float | None

    @classmethod
    def of(cls, train: dict) -> "Recipe":
        return cls(train.get("seq_len"), train.get("steps"), train.get("batch_size"), train.get("lr"))

    @property
    def tokens(self) -> int | None:
        if None in (self.seq_len, self.steps, self.batch_size):
            return None
        return self.seq_len * self.steps * self.batch_size

    @property
    def label(self) -> str:
        return f"L = {self.seq_len}, {self.steps} steps x {self.batch_size}"

    @property
    def slug(self) -> str:
        return f"L{self.seq_len}-{self.steps}x{self.batch_size}"


def load_runs(con) -> dict[str, dict]:
    """run_id -> the run's row (cost, provenance) with its parsed training recipe. A fine-tuned
    child (suite.plan.grid.TrainingRun.parent) takes its parent's: it is a row of the parent's
    boards, beside the training-free rows of the same checkpoint, at the same scales."""
    runs = {}
    for r in _dicts(con, """SELECT run_id, encoding, display_name, family, size, task, seed, status, n_params,
                                   train_tokens_per_s, peak_memory_mb, train_wall_s, wall_s, git_commit, finished_at,
                                   coalesce(json_extract(run, '$.parent.train'), json_extract(run, '$.train')) AS train,
                                   json_extract(run, '$.size') AS size_spec,
                                   corpus, json_extract_string(run, '$.task.kind') AS kind,
                                   e.eval_peak_memory_mb, e.eval_wall_s
                            FROM runs LEFT JOIN (
                                SELECT run_id, max(peak_memory_mb) AS eval_peak_memory_mb, sum(wall_s) AS eval_wall_s
                                FROM evaluations WHERE status = 'done' GROUP BY run_id) e USING (run_id)"""):
        r["recipe"] = Recipe.of(json.loads(r["train"]) if r["train"] else {})
        r["size_spec"] = json.loads(r["size_spec"]) if r["size_spec"] else {}
        runs[r["run_id"]] = r
    return runs


def load_figures(con) -> list[dict]:
    return _dicts(con, """SELECT encoding, display_name, family, trained_as, checkpoint_level, size, task, metric, scale,
                                 eval_len, seed, run_id, eval_id, value, n, status, chance
                          FROM figures ORDER BY size, task, metric, encoding, scale, seed""")


def info_of(metric: str) -> MetricInfo | None:
    """A metric's metadata; a per-depth breakdown (``acc_depth3``) has its base metric's."""
    info = metric_info()
    return info.get(metric) or info.get(metric.split("_depth", 1)[0])


def is_breakdown(metric: str) -> bool:
    return metric not in metric_info() and info_of(metric) is not None
