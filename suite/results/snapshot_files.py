"""The files of a snapshot folder (``leaderboard/``, a submission bundle's ``records/``), read as
data from strangers: every file and every line checked, and :class:`~suite.results.records.RecordError`
naming the file, the line and what is wrong, never a traceback.

A snapshot comes in a pull request. Its gzip streams may be truncated or not gzip at all, a
line may not be JSON or not a record this version reads, its SNAPSHOT.json may be anything,
and a per-sample file may be a link to a file elsewhere on the reader's machine. Each is
refused here; the records that pass are checked as every record is
(:func:`suite.results.record_types.from_json`). Records are written out without the absolute
paths of the machine that computed them (suite.results.machine_paths).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Annotated, Iterator

import pydantic
from pydantic import Field, StringConstraints

from suite.core.boundary.bounded import SMALL_JSON, SNAPSHOT_LINES, Refused, json_lines, read_json
from suite.core.boundary.fields import Label, Name
from suite.results.bench_records import Amount, Count, check_bench
from suite.results.machine_paths import without_machine_paths
from suite.results.record_checks import ID_FORM, is_id, samples_path
from suite.results.record_types import Record, RecordContentError, from_json, to_json
from suite.results.records import RecordError

SNAPSHOT = "SNAPSHOT.json"
RUNS, EVALS, SAMPLES = "runs.jsonl.gz", "evals.jsonl.gz", "samples"
BENCH = "bench.jsonl.gz"  # posbench bench records (suite.results.bench_records); a snapshot may hold none


def public_json(record: Record) -> dict:
    """A record as it leaves this machine: its file's JSON without the machine's absolute paths."""
    return without_machine_paths(to_json(record))


def write_lines(path: Path, records: list) -> None:
    """``records`` as gzip JSON lines, sorted by id, with no timestamp: the same records, the same bytes."""
    tmp = path.with_name(f".tmp-{path.name}")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
        for record in sorted(records, key=lambda r: r.id):
            f.write((json.dumps(public_json(record), sort_keys=True, separators=(",", ":")) + "\n").encode())
    os.replace(tmp, path)


def read_lines(path: Path) -> Iterator[tuple[int, object]]:
    """(line number, JSON value) of every non-blank line of a gzip JSON-lines file, one at a time,
    within the snapshot's bounds (suite.core.boundary.bounded.SNAPSHOT_LINES: a gzip bomb is
    refused having read at most its decompressed bytes, one line at a time)."""
    if not path.is_file() and not path.is_symlink():
        raise RecordError(path, "missing: a snapshot holds runs.jsonl.gz and evals.jsonl.gz beside SNAPSHOT.json")
    try:
        yield from json_lines(path, SNAPSHOT_LINES)
    except Refused as exc:
        raise RecordError(path, str(exc)) from None


def read_records(path: Path, kind: str) -> list[Record]:
    """Every record of a snapshot file, each checked; the first bad one is refused with its line.
    An id twice is refused too: publish writes each record once, and the two could differ."""
    records, seen = [], {}
    for number, data in read_lines(path):
        try:
            record = from_json(data)
        except RecordContentError as exc:
            raise RecordError(path, f"line {number}: {exc}") from None
        if record.kind != kind:
            raise RecordError(path, f"line {number}: a {record.kind} record where {kind} records belong")
        if record.id in seen:
            raise RecordError(path, f"line {number}: {record.id_field} {record.id} twice (line {seen[record.id]} too)")
        seen[record.id] = number
        records.append(record)
    return records


def write_bench_lines(path: Path, records: list[dict]) -> None:
    """Bench records as gzip JSON lines, sorted by id, with no timestamp and no machine path;
    no records: no file (a snapshot without bench records is one an older posbench wrote)."""
    if not records:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(f".tmp-{path.name}")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
        for record in sorted(records, key=lambda r: r["bench_id"]):
            f.write((json.dumps(without_machine_paths(record), sort_keys=True, separators=(",", ":")) + "\n").encode())
    os.replace(tmp, path)


def read_bench(folder: Path, listed: list[str]) -> list[dict]:
    """The snapshot's bench records, each checked (suite.results.bench_records.check_bench), and
    the ids SNAPSHOT.json lists (``listed``) exactly those the file holds. No file and none
    listed: none (a snapshot an older posbench wrote). The file is the folder's own, never a link."""
    path = Path(folder) / BENCH
    if path.is_symlink():
        raise RecordError(path, "a link, not a file: a snapshot's bench records are a file of its own")
    if not path.is_file():
        if listed:
            raise RecordError(path, f"missing: {SNAPSHOT} lists {len(listed)} bench record(s)")
        return []
    records, seen = [], set()
    for number, data in read_lines(path):
        try:
            record = check_bench(data)
        except ValueError as exc:
            raise RecordError(path, f"line {number}: {exc}") from None
        if record["bench_id"] in seen:
            raise RecordError(path, f"line {number}: bench_id {record['bench_id']} twice")
        seen.add(record["bench_id"])
        records.append(record)
    if sorted(seen) != sorted(listed):
        raise RecordError(path, f"holds bench records {', '.join(sorted(seen)) or 'none'}, {SNAPSHOT} lists "
                                f"{', '.join(sorted(map(str, listed))) or 'none'}")
    return records


def sample_source(folder: Path, eval_id: str) -> Path:
    """The snapshot's per-sample file of ``eval_id``: a plain file inside the folder, never a link
    (a link in a pull request could point at any file of the reader's machine)."""
    path = samples_path(folder / SAMPLES, eval_id)
    if path.is_symlink() or (folder / SAMPLES).is_symlink():
        raise RecordError(path, "a link, not a file: a snapshot's per-sample outputs are files of its own")
    if not path.is_file():
        raise RecordError(path, f"missing: evaluation {eval_id} says it has per-sample outputs")
    return path


# SNAPSHOT.json comes with the snapshot: a grid's name becomes a path (grids/<name>.yaml, which
# replicate plans and so imports what the grid names), the rest is shown on the site and the
# terminal. So names are names, text is one line of text (suite.core.boundary.fields), commits hex.
_Commit = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{7,40}(-dirty)?$")]  # git rev-parse, "-dirty" with changes


class _Machine(pydantic.BaseModel):
    cpu: Label | None = None
    cores: Annotated[int, Field(gt=0, lt=2**31)] | None = None
    memory_gib: Amount | None = None
    system: Label | None = None


class SnapshotInfo(pydantic.BaseModel):
    """What SNAPSHOT.json says, with the types the site's header reads (suite.report.templates.runhead)."""

    model_config = pydantic.ConfigDict(extra="ignore")  # a later version's summary may say more

    grids: list[Name] = Field([], max_length=1_000)
    git_commit: _Commit | None = None
    record_commits: list[_Commit] = Field([], max_length=100_000)
    # the CPU models the records name (their numerics); older snapshots say only the publishing machine's
    record_cpus: list[Label] = Field([], max_length=1_000)
    published_at: Label | None = None
    computed_from: Label | None = None
    computed_to: Label | None = None
    machine: _Machine = _Machine()
    cpu_seconds: Amount = 0.0  # shown as hours of work: finite, not below 0
    training_runs: Count = 0
    evaluations: Count = 0
    pieces_missing: Count = 0
    # grid -> its sizes left out until every piece of them is recorded (posbench publish --whole-sizes)
    sizes_left_out: dict[Name, Annotated[list[Name], Field(min_length=1, max_length=100)]] = \
        Field({}, max_length=1_000)
    bench: list[Name] = Field([], max_length=10_000)  # ids in bench.jsonl.gz


def read_info(folder: Path) -> dict:
    """SNAPSHOT.json of ``folder``; FileNotFoundError when there is none, RecordError when it is unusable."""
    path = Path(folder) / SNAPSHOT
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(f"{path} does not exist: no published snapshot in {folder} (posbench publish writes one)")
    try:
        data = read_json(path, SMALL_JSON)
    except Refused as exc:
        raise RecordError(path, str(exc)) from None
    if not isinstance(data, dict):
        raise RecordError(path, "not a JSON object")
    try:
        return SnapshotInfo.model_validate(data).model_dump()
    except pydantic.ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise RecordError(path, "; ".join(problems)) from None


def published_ids(folder: Path) -> set[str] | None:
    """The evaluation ids of the snapshot in ``folder``, or None where there is none; RecordError
    when the snapshot is unusable (the caller decides whether that stops it)."""
    folder = Path(folder)
    path = folder / EVALS
    if not (folder / SNAPSHOT).is_file() or not path.is_file():
        return None
    read_info(folder)
    ids = set()
    for number, data in read_lines(path):
        eval_id = data.get("eval_id") if isinstance(data, dict) else None
        if not is_id(eval_id):
            raise RecordError(path, f"line {number}: eval_id {eval_id!r} is not an id ({ID_FORM})")
        ids.add(eval_id)
    return ids
