"""A manifest: the work still to do on a grid, as plain data, one entry per training run.

Written when a grid is submitted (``posbench run --executor slurm``); a job-array task
reads its entry by index (``posbench run-one MANIFEST INDEX``). An entry is a training
run with the evaluations on it that were pending at submission; the task trains the
run (unless its record says done) and then evaluates it, so an evaluation never waits
for another job. Entries hold the runs themselves (``TrainingRun.to_dict``), so a task
needs neither the grid file nor the specs it named.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pydantic

from suite.core.boundary.bounded import MANIFEST, Refused, read_json
from suite.plan.grid import Evaluation, Plan, TrainingRun
from suite.execution.runner import pending

MANIFEST_VERSION = 1


@dataclass(frozen=True)
class Manifest:
    grid: str
    retry_failed: bool
    entries: tuple[Plan, ...]  # one training run each, with its pending evaluations

    def to_dict(self) -> dict:
        return {"manifest_version": MANIFEST_VERSION, "grid": self.grid, "retry_failed": self.retry_failed,
                "entries": [{"run_id": p.runs[0].run_id, "label": p.runs[0].label, "run": p.runs[0].to_dict(),
                             "evaluations": [e.to_dict() for e in p.evaluations]} for p in self.entries]}


def manifest_of(plan: Plan, project, grid: str, retry_failed: bool) -> Manifest:
    """The plan's pending work (what `posbench run` would do now), one entry per run."""
    todo = pending(plan, project, retry_failed)
    entries = tuple(Plan((run,), tuple(todo[run.run_id])) for run in plan.runs if run.run_id in todo)
    return Manifest(grid, retry_failed, entries)


def write_manifest(manifest: Manifest, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    tmp.write_text(json.dumps(manifest.to_dict(), indent=1))
    os.replace(tmp, path)
    return path


def read_entry(path: Path, index: int) -> tuple[Plan, bool]:
    """Entry ``index`` of the manifest at ``path`` as a one-run plan, and whether failed
    pieces are to be retried."""
    try:  # bounded: a manifest path is a command-line argument, and the file could be anything
        data = read_json(Path(path), MANIFEST)
    except Refused as exc:
        raise ValueError(f"{path}: {exc}: not a manifest") from None
    if not isinstance(data, dict) or data.get("manifest_version") != MANIFEST_VERSION:
        found = data.get("manifest_version") if isinstance(data, dict) else None
        raise ValueError(f"{path}: manifest version {found}, expected {MANIFEST_VERSION}")
    try:
        entries = data["entries"]
        if not 0 <= index < len(entries):
            raise IndexError(f"{path}: no entry {index} (it has {len(entries)})")
        entry = entries[index]
        run = TrainingRun.from_dict(entry["run"])
        evaluations = tuple(Evaluation.from_dict(e) for e in entry["evaluations"])
        retry_failed = bool(data["retry_failed"])
    except (KeyError, TypeError, AttributeError, pydantic.ValidationError) as exc:
        raise ValueError(f"{path}: entry {index} is not a manifest entry ({type(exc).__name__}: {str(exc)[:200]})") from None
    if run.run_id != entry["run_id"]:  # the code that hashes runs changed since submission
        raise ValueError(f"{path}: entry {index} rebuilds as run {run.run_id}, not {entry['run_id']}")
    return Plan((run,), evaluations), retry_failed
