"""A real part of the published snapshot, for tests that need committed records but not all of
them: the records of some training runs (and of the runs they were fine-tuned from), every
evaluation of those runs, their per-sample files, and a SNAPSHOT.json naming the grids kept.

The tests that ingest, render or replicate the whole snapshot grow with every grid published;
the ones whose claim is about a few records use a cut, so they take the same time next month."""

from __future__ import annotations

import functools
import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path

from suite.core import machine, numerics
from suite.results.record_checks import samples_path
from tests.conftest import REPO

PUBLISHED = REPO / "leaderboard"


def _read(name: str) -> list[dict]:
    with gzip.open(PUBLISHED / name, "rt") as f:
        return [json.loads(line) for line in f]


def published_runs() -> list[dict]:
    """Every training run record of the published snapshot, as dicts (a cut reads the
    evaluations too: several times the runs' size)."""
    return _read("runs.jsonl.gz")


def recorded_cpu(record: dict) -> str | None:
    """The CPU model a run or evaluation record (as a dict) names in its numerics; None for a
    record made before records named their numerics."""
    return (record["provenance"].get("numerics") or {}).get("cpu")


def same_class(folder: Path) -> bool:
    """Whether every run record in a cut names this machine's class in full."""
    here = numerics.measured()
    with gzip.open(folder / "runs.jsonl.gz", "rt") as f:
        return all(machine.compare(json.loads(line)["provenance"].get("numerics"), here).same for line in f)


def _write(path: Path, records: list[dict]) -> None:
    with gzip.open(path, "wt") as f:
        f.writelines(json.dumps(r, sort_keys=True) + "\n" for r in records)


def cut_snapshot(target: Path, grids: list[str], keep: Callable[[dict], bool]) -> tuple[int, int]:
    """Write to ``target`` the published runs that ``keep`` accepts, their ancestors, and all their
    evaluations; SNAPSHOT.json says it holds ``grids``. Returns (runs, evaluations) written."""
    target.mkdir(parents=True)
    runs = _read("runs.jsonl.gz")
    by_id = {r["run_id"]: r for r in runs}
    kept = {r["run_id"] for r in runs if keep(r)}
    for run_id in list(kept):  # a fine-tuned run's checkpoint is re-made from its parent's
        lineage = by_id[run_id].get("lineage") or {}
        while lineage.get("parent_run_id") in by_id:
            kept.add(lineage["parent_run_id"])
            lineage = by_id[lineage["parent_run_id"]].get("lineage") or {}
    runs = [r for r in runs if r["run_id"] in kept]
    evals = [e for e in _read("evals.jsonl.gz") if e["run_id"] in kept]
    _write(target / "runs.jsonl.gz", runs)
    _write(target / "evals.jsonl.gz", evals)
    shutil.copyfile(PUBLISHED / "bench.jsonl.gz", target / "bench.jsonl.gz")
    for e in (e for e in evals if e.get("samples")):  # the file its id names, as publish copies it
        (target / "samples").mkdir(exist_ok=True)
        shutil.copyfile(samples_path(PUBLISHED / "samples", e["eval_id"]), samples_path(target / "samples", e["eval_id"]))
    info = json.loads((PUBLISHED / "SNAPSHOT.json").read_text())
    info.update(grids=sorted(grids), training_runs=len(runs), evaluations=len(evals))
    (target / "SNAPSHOT.json").write_text(json.dumps(info, indent=1, sort_keys=True))
    return len(runs), len(evals)


@functools.cache
def _published_by_id() -> dict[str, dict]:
    return {run["run_id"]: run for run in published_runs()}


def planned_by(grid: str) -> Callable[[dict], bool]:
    """Keeps the runs that ``grids/<grid>.yaml`` plans as it is now; a tuned grid's runs after its
    sweep at the rates the published sweep records chose (as `posbench replicate` plans them,
    suite.submission.replicate.grids_of_runs)."""
    from suite.plan.grid import load_plan
    from suite.plan.tuning import chooser
    from suite.results.record_types import from_json
    from suite.specs import Project

    published = _published_by_id()
    read = lambda run_id: from_json(published[run_id]) if run_id in published else None  # noqa: E731
    _, plan = load_plan(REPO / "grids" / f"{grid}.yaml", Project(REPO), tuned=chooser(read))
    wanted = {run.run_id for run in plan.runs}
    return lambda run: run["run_id"] in wanted
