"""Record files: one JSON file per training run and per evaluation, the source of truth.

* ``results/runs/<run_id>.json``: a :class:`~suite.results.record_types.TrainingRecord`;
* ``results/evals/<eval_id>.json``: an :class:`~suite.results.record_types.EvaluationRecord`.

Files are written atomically (a temporary file that no reader's ``*.json`` matches,
then a rename), so a crash or a kill never leaves half a record and a reader never
sees one. Numbers JSON cannot hold (NaN, infinity) are stored as null. Every reader
goes through :func:`scan`, which reports each file it cannot use (file and reason)
instead of failing on it.
"""

from __future__ import annotations

import json
import math
import platform
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from suite.core.boundary.atomic import write_atomic
from suite.core.boundary.bounded import RECORD_FILE, Refused, read_json
from suite.results.record_checks import ID_FORM, is_id
from suite.results.record_types import (KINDS, NewerRecordError, Record, RecordContentError, check_version, from_json,
                                        to_json)

TRACKED_PACKAGES = ("torch", "lightning", "lm_eval", "duckdb", "posbench")


class RecordError(Exception):
    """A record file that cannot be used; ``str()`` names the file and the reason."""

    def __init__(self, path: Path, reason: str):
        self.path, self.reason = Path(path), reason
        super().__init__(f"{path}: {reason}")


class RecordErrors(RecordError):
    """Several records or files that cannot be used, each a RecordError: a command reports every
    one (a line each) and stops, having changed nothing."""

    def __init__(self, errors: list[RecordError]):
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(first.path, first.reason + (f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""))


class NewerRecord(RecordError):
    """A record file a later posbench wrote (a newer schema version, a key this one does not know):
    :func:`status_of` stops on it instead of redoing the piece over it."""


def _json_safe(value):
    """NaN and infinity become None (JSON has neither); everything else as it is."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def write_record(record: Record, directory: Path, durable: bool = True) -> Path:
    """Write ``record`` as ``directory/<its id>.json``, atomically; the id names a file, so it must be one.
    ``durable``: on disk before this returns (fsync), unless the folder is a scratch one that no
    later process reads (``posbench replicate``'s)."""
    if not is_id(record.id):
        raise ValueError(f"{record.id_field} {record.id!r} is not an id ({ID_FORM}): not written")
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_json_safe(to_json(record)), indent=1, sort_keys=True, allow_nan=False)
    return write_atomic(directory / f"{record.id}.json", text, fsync=durable)  # the aside file never matches *.json


def read_record(path: Path, kind: str | None = None) -> Record:
    """The record in ``path`` (of ``kind``, when given); :class:`RecordError` if unusable."""
    try:  # bounded and streaming-safe: a record a stranger wrote may be a FIFO, a link or a gigabyte
        record = read_json(Path(path), RECORD_FILE)
    except Refused as exc:
        raise RecordError(path, f"{exc}; truncated?" if "not valid JSON" in str(exc) else str(exc)) from None
    if not isinstance(record, dict):
        raise RecordError(path, "not a JSON object")
    try:
        check_version(record)
    except NewerRecordError as exc:
        raise NewerRecord(path, str(exc)) from None
    except RecordContentError as exc:
        raise RecordError(path, str(exc)) from None
    found_kind = record.get("kind")
    if not isinstance(found_kind, str) or found_kind not in KINDS or (kind is not None and found_kind != kind):
        raise RecordError(path, f"record kind {found_kind!r}, expected {kind or ' or '.join(KINDS)!r}")
    try:
        typed = from_json(record)
    except NewerRecordError as exc:
        raise NewerRecord(path, str(exc)) from None
    except RecordContentError as exc:
        raise RecordError(path, f"unusable content: {exc}") from None
    if typed.id != Path(path).stem:
        raise RecordError(path, f"its {typed.id_field} {typed.id!r} does not match the file name")
    return typed


@dataclass
class Scan:
    records: list[Record]
    problems: list[RecordError]


def scan(directory: Path, kind: str) -> Scan:
    """Every usable record of ``kind`` in ``directory``, and a report of every file that is not."""
    out = Scan([], [])
    for path in sorted(Path(directory).glob("*.json")):
        try:
            out.records.append(read_record(path, kind))
        except RecordError as exc:
            out.problems.append(exc)
    return out


def status_of(path: Path, kind: str) -> str:
    """``todo`` (no usable record), or the record's status (``done`` / ``failed``). A record a later
    posbench wrote is not unusable but unread: :class:`NewerRecord` is raised (the command stops,
    naming the file) rather than the piece redone over it."""
    if not path.is_file():
        return "todo"
    try:
        return read_record(path, kind).status
    except NewerRecord:
        raise
    except RecordError:
        return "todo"  # an unreadable record is redone (and ingest reports it)


def git_commit(cwd: Path | None = None, ignore: Path | None = None) -> str | None:
    """HEAD, with "-dirty" when tracked files differ from it (``ignore``: a folder whose changes do
    not count, such as the snapshot a publish is writing)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    spec = ["--", ".", f":(exclude){ignore}"] if ignore is not None else []
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", *spec], cwd=cwd,
                           capture_output=True, text=True)
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name.replace("_", "-"))
        except metadata.PackageNotFoundError:
            continue
    return versions
