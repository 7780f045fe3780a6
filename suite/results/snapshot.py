"""The published leaderboard: a snapshot of the records of standard grids, committed in the
repository (``leaderboard/``), so that anyone browses it without training.

Layout of the folder::

    leaderboard/SNAPSHOT.json       what it holds: grids, commit, date, machine, CPU time, counts
    leaderboard/runs.jsonl.gz       one training-run record per line (as results/runs/ holds them)
    leaderboard/evals.jsonl.gz      one evaluation record per line
    leaderboard/samples/<eval_id>.parquet   per-sample outputs of the task evaluations
    leaderboard/bench.jsonl.gz      one ``posbench bench`` record per line: what each encoding costs,
                                    measured in one process (results/bench/ holds them; the cost board)

No checkpoint is published (they are large; a figure is checked by ``posbench verify``,
which retrains). :func:`publish` writes the folder from a project's records of the grids'
plans; :func:`unpack` writes the records back into a results folder (the published site is
rendered from there, and a contributor's grid counts them as done). The gzip streams carry no
timestamp, so publishing the same records twice writes the same bytes. Records leave without
the absolute paths of the machine that computed them; a snapshot comes back from strangers, so
it is read as data, every file and line checked (suite.results.snapshot_files).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from suite.core.boundary.atomic import replace_folder, stale_aside
from suite.results.record_checks import samples_path
from suite.core.numerics import cpu_model
from suite.results.records import git_commit, read_record, write_record
from suite.results.bench_records import bench_records, write_bench_file
from suite.results.snapshot_files import (BENCH, EVALS, RUNS, SAMPLES, SNAPSHOT, published_ids, read_bench, read_info,
                                          read_records, sample_source, write_bench_lines, write_lines)

__all__ = ["BENCH", "EVALS", "RUNS", "SAMPLES", "SNAPSHOT", "Published", "machine", "publish", "published_ids",
           "read_info", "unpack"]


def machine() -> dict:
    """The machine that publishes the snapshot, as far as Python can tell without privileges (the
    CPUs its records were computed on are their own: SNAPSHOT.json's ``record_cpus``)."""
    memory = None
    try:
        memory = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "memory_gib": memory, "system": platform.platform()}


@dataclass(frozen=True)
class Published:
    runs: int
    evaluations: int
    samples: int
    bytes: int
    bench: int = 0


def publish(project, plans: dict[str, object], out: Path, sizes_left_out: dict[str, list[str]] | None = None) -> Published:
    """Write the records of every piece of ``plans`` (grid name -> plan) that ``project`` holds
    into ``out``: done and failed records alike (a failure is a result). Pieces without a record
    are left out and counted in SNAPSHOT.json, so a partial snapshot says that it is one;
    ``sizes_left_out`` (grid -> sizes its plan here leaves out: ``publish --whole-sizes``) is
    written there too. The records leave without the machine's absolute paths (suite.results.snapshot_files.public_json).
    Every bench record in ``results/bench/`` goes too (``bench.jsonl.gz``, its ids listed in
    SNAPSHOT.json), each checked first (suite.results.bench_records): a grid does not plan them,
    so what the results folder holds is what the site's cost board shows."""
    bench = bench_records(project.results / "bench")  # checked before anything is written
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
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{out.name}.publish-"
    stale_aside(out.parent, prefix)  # what a killed publish left
    stage = Path(tempfile.mkdtemp(dir=out.parent, prefix=f"{prefix}{os.getpid()}-"))
    umask = os.umask(0o022)
    os.umask(umask)
    os.chmod(stage, 0o777 & ~umask)  # a folder as mkdir makes it, not mkdtemp's private one
    try:  # the whole snapshot aside, then in place in one step: a kill leaves the old one whole
        n_samples = _write_snapshot(stage, project, runs, evals, bench, missing, plans, out, sizes_left_out or {})
        replace_folder(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return Published(len(runs), len(evals), n_samples, size, len(bench))


def _write_snapshot(folder: Path, project, runs: dict, evals: dict, bench: list, missing: int, plans: dict,
                    out: Path, sizes_left_out: dict[str, list[str]]) -> int:
    """Every file of a snapshot into the (new, empty) ``folder``; returns the per-sample files copied."""
    write_lines(folder / RUNS, list(runs.values()))
    write_lines(folder / EVALS, list(evals.values()))
    write_bench_lines(folder / BENCH, bench)
    samples = folder / SAMPLES
    samples.mkdir()
    n_samples = 0
    for record in evals.values():
        if record.samples:  # the file its id names, not the path the record states
            shutil.copyfile(samples_path(project.samples, record.eval_id), samples_path(samples, record.eval_id))
            n_samples += 1
    cpu_s = sum(r.provenance.wall_s or 0 for r in [*runs.values(), *evals.values()])
    finished = sorted(r.provenance.finished_at for r in [*runs.values(), *evals.values()] if r.provenance.finished_at)
    commits = sorted({r.provenance.git_commit for r in [*runs.values(), *evals.values()] if r.provenance.git_commit})
    cpus = sorted({r.provenance.cpu for r in [*runs.values(), *evals.values()]} - {None})
    info = {"grids": sorted(plans), "git_commit": git_commit(project.root, ignore=out),
            "record_commits": commits, "record_cpus": cpus,
            "published_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "computed_from": finished[0] if finished else None, "computed_to": finished[-1] if finished else None,
            "machine": machine(), "cpu_seconds": round(cpu_s, 1),
            "training_runs": len(runs), "evaluations": len(evals), "pieces_missing": missing,
            "sizes_left_out": {grid: list(sizes) for grid, sizes in sorted(sizes_left_out.items())},
            "bench": sorted(r["bench_id"] for r in bench)}
    (folder / SNAPSHOT).write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")
    return n_samples


def unpack(folder: Path, project, durable: bool = True) -> tuple[int, int]:
    """Write the snapshot's records (and per-sample files) into ``project``'s results folder;
    a record already there is kept (it is the same piece: ids are content). Returns the
    numbers of training runs and evaluations written.

    The snapshot is a stranger's: every line of it is read and checked first, and one bad
    record, file or per-sample link refuses the whole snapshot (RecordError naming the file and
    what is wrong) before anything is written. Each record is then written to the one path its
    id gives inside the project (``results/runs/<run_id>.json``, ``results/samples/<eval_id>.parquet``,
    ``results/bench/<bench_id>.json``). Bench records are written but not counted. ``durable``:
    each record on disk before the next (suite.results.records.write_record)."""
    folder = Path(folder)
    info = read_info(folder)
    runs, evals = read_records(folder / RUNS, "training_run"), read_records(folder / EVALS, "evaluation")
    bench = read_bench(folder, info["bench"])
    sources = {r.eval_id: sample_source(folder, r.eval_id) for r in evals if r.samples}
    written = [0, 0]
    for i, (records, directory) in enumerate(((runs, project.runs), (evals, project.evals))):
        for record in records:
            if (directory / f"{record.id}.json").is_file():
                continue
            if record.id in sources:  # written before the record that names it, as the runner does
                _copy_atomically(sources[record.id], samples_path(project.samples, record.id))
            write_record(record, directory, durable)
            written[i] += 1
    for record in bench:
        if not (project.results / "bench" / f"{record['bench_id']}.json").is_file():
            write_bench_file(record, project.results / "bench")
    return written[0], written[1]


def _copy_atomically(source: Path, target: Path) -> None:
    """A copy under a temporary name, renamed into place: a file there is replaced, never written through."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".part")
    os.close(fd)
    try:
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
