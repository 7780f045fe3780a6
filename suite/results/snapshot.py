"""The published leaderboard: a snapshot of the records of standard grids, committed in the
repository (``leaderboard/``), so that anyone browses it without training.

Layout of the folder::

    leaderboard/SNAPSHOT.json       what it holds: grids, commit, date, machine, CPU time, counts
    leaderboard/runs.jsonl.gz       one training-run record per line (as results/runs/ holds them)
    leaderboard/evals.jsonl.gz      one evaluation record per line
    leaderboard/samples/<eval_id>.parquet   per-sample outputs of the task evaluations

No checkpoint is published (they are large; a figure is checked by ``posbench verify``,
which retrains). :func:`publish` writes the folder from a project's records of the grids'
plans; :func:`unpack` writes the records back into a results folder (the published site is
rendered from there, and a contributor's grid counts them as done). The gzip streams carry no
timestamp, so publishing the same records twice writes the same bytes.
"""

from __future__ import annotations

import datetime
import gzip
import json
import os
import platform
import shutil
from dataclasses import dataclass
from pathlib import Path

from suite.results.records import git_commit, read_record, write_record
from suite.results.record_types import to_json

SNAPSHOT = "SNAPSHOT.json"
RUNS, EVALS, SAMPLES = "runs.jsonl.gz", "evals.jsonl.gz", "samples"


def machine() -> dict:
    """The machine the snapshot was computed on, as far as Python can tell without privileges."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = None
    try:
        memory = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": memory, "system": platform.platform()}


def _write_lines(path: Path, records: list) -> None:
    tmp = path.with_name(f".tmp-{path.name}")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
        for record in sorted(records, key=lambda r: r.id):
            f.write((json.dumps(to_json(record), sort_keys=True, separators=(",", ":")) + "\n").encode())
    os.replace(tmp, path)


def _read_lines(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


@dataclass(frozen=True)
class Published:
    runs: int
    evaluations: int
    samples: int
    bytes: int


def publish(project, plans: dict[str, object], out: Path) -> Published:
    """Write the records of every piece of ``plans`` (grid name -> plan) that ``project`` holds
    into ``out``: done and failed records alike (a failure is a result). Pieces without a record
    are left out and counted in SNAPSHOT.json, so a partial snapshot says that it is one."""
    runs, evals, missing = {}, {}, 0
    for plan in plans.values():
        for found, directory, kind, ids in ((runs, project.runs, "training_run", [r.run_id for r in plan.runs]),
                                            (evals, project.evals, "evaluation", [e.eval_id for e in plan.evaluations])):
            for piece in ids:
                path = directory / f"{piece}.json"
                if path.is_file():
                    found[piece] = read_record(path, kind)
                else:
                    missing += 1
    out.mkdir(parents=True, exist_ok=True)
    _write_lines(out / RUNS, list(runs.values()))
    _write_lines(out / EVALS, list(evals.values()))
    samples = out / SAMPLES
    shutil.rmtree(samples, ignore_errors=True)
    samples.mkdir()
    n_samples = 0
    for record in evals.values():
        if record.samples:
            shutil.copyfile(project.root / record.samples, samples / f"{record.eval_id}.parquet")
            n_samples += 1
    cpu_s = sum(r.provenance.wall_s or 0 for r in [*runs.values(), *evals.values()])
    finished = sorted(r.provenance.finished_at for r in [*runs.values(), *evals.values()] if r.provenance.finished_at)
    commits = sorted({r.provenance.git_commit for r in [*runs.values(), *evals.values()] if r.provenance.git_commit})
    info = {"grids": sorted(plans), "git_commit": git_commit(project.root), "record_commits": commits,
            "published_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "computed_from": finished[0] if finished else None, "computed_to": finished[-1] if finished else None,
            "machine": machine(), "cpu_seconds": round(cpu_s, 1),
            "training_runs": len(runs), "evaluations": len(evals), "pieces_missing": missing}
    (out / SNAPSHOT).write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return Published(len(runs), len(evals), n_samples, size)


def read_info(folder: Path) -> dict:
    path = Path(folder) / SNAPSHOT
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: no published snapshot in {folder} (posbench publish writes one)")
    return json.loads(path.read_text())


def published_ids(folder: Path) -> set[str] | None:
    """The evaluation ids of the snapshot in ``folder``, or None where there is none."""
    path = Path(folder) / EVALS
    if not (Path(folder) / SNAPSHOT).is_file() or not path.is_file():
        return None
    return {data["eval_id"] for data in _read_lines(path)}


def unpack(folder: Path, project) -> tuple[int, int]:
    """Write the snapshot's records (and per-sample files) into ``project``'s results folder;
    a record already there is kept (it is the same piece: ids are content). Returns the
    numbers of training runs and evaluations written."""
    from suite.results.record_types import from_json

    folder = Path(folder)
    read_info(folder)
    written = [0, 0]
    for i, (name, directory) in enumerate(((RUNS, project.runs), (EVALS, project.evals))):
        for data in _read_lines(folder / name):
            record = from_json(data)
            if not (directory / f"{record.id}.json").is_file():
                if getattr(record, "samples", None):
                    source = folder / SAMPLES / f"{record.id}.parquet"
                    target = project.root / record.samples
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, target)
                write_record(record, directory)
                written[i] += 1
    return written[0], written[1]
