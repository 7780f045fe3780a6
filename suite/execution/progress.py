"""One progress display for a grid worked by several local worker processes (``posbench run
--jobs N``): pieces done of the total, failures, elapsed time and an estimate of the time
left, and what each worker is doing now.

The workers print nothing to the terminal (each writes its own log, ``results/logs/worker-<i>.log``);
this process reads what they leave behind, the same files every process of a grid shares: the
record files (done, failed) and the claim files (a claim names its owner's pid, so each worker's
current piece is the claim it holds).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from suite.execution.claims import read_claim

from suite.execution.runner import eval_path, run_path
from suite.plan.grid import Plan
from suite.results.records import status_of
from suite.specs import Project


@dataclass(frozen=True)
class Snapshot:
    done: int
    failed: int
    total: int
    elapsed_s: float
    left_s: float | None  # None until a piece has finished in this pass
    current: dict[int, str]  # worker pid -> the piece it holds

    def line(self) -> str:
        left = "" if self.left_s is None else f", about {_duration(self.left_s)} left"
        failed = f", {self.failed} failed" if self.failed else ""
        return f"{self.done + self.failed}/{self.total} pieces{failed}; {_duration(self.elapsed_s)} elapsed{left}"


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class GridProgress:
    """The state of ``plan``'s pieces in ``project``, measured from the start of this pass."""

    def __init__(self, plan: Plan, project: Project):
        self.plan, self.project = plan, project
        self.labels = {f"run-{r.run_id}": f"training {r.label}" for r in plan.runs}
        self.labels.update({f"eval-{e.eval_id}": e.label for e in plan.evaluations})
        self.paths = [(run_path(project, r), "training_run") for r in plan.runs]
        self.paths += [(eval_path(project, e), "evaluation") for e in plan.evaluations]
        self.start = time.monotonic()
        self.finished: dict[Path, str] = {}  # a done record is final (a failed one may be retried): read it once
        self.finished_before = sum(1 for s in self._statuses() if s != "todo")

    def _statuses(self) -> list[str]:
        out = []
        for path, kind in self.paths:
            status = self.finished.get(path) or status_of(path, kind)
            if status == "done":
                self.finished[path] = status
            out.append(status)
        return out

    def snapshot(self, pids: list[int]) -> Snapshot:
        statuses = self._statuses()
        done, failed = statuses.count("done"), statuses.count("failed")
        elapsed = time.monotonic() - self.start
        finished_now = done + failed - self.finished_before
        left = len(statuses) - done - failed
        rate = finished_now / elapsed if finished_now > 0 and elapsed > 0 else None
        return Snapshot(done, failed, len(statuses), elapsed, None if rate is None else left / rate,
                        self._current(set(pids)))

    def _current(self, pids: set[int]) -> dict[int, str]:
        out = {}
        for path in sorted(self.project.claims.glob("*.json")) if self.project.claims.is_dir() else []:
            try:
                info = read_claim(path)  # bounded: a FIFO named like a claim is refused, not waited on
                pid = info.get("pid") if isinstance(info, dict) else None
            except (OSError, ValueError):
                continue  # released or being written meanwhile
            if pid in pids:
                out[pid] = self.labels.get(path.stem, path.stem)
        return out
