"""The published snapshot's DuckDB file, built once per content: `posbench leaderboard --published`
and `posbench site --published` read the snapshot (``leaderboard/``) as a database, and building
it is most of their time (about 12 of 16 s on the 1,764-run snapshot; docs/benchmarks.md).

The file is kept in ``.cache/published/<key>.duckdb`` (results/ is left alone), where the key
hashes every file of the snapshot (its name and bytes) and the source of this stage
(``suite/results``: the code that turns records into tables), so an edited snapshot or an edited
ingest builds anew, never reads a stale file. Only the latest key is kept. A snapshot with a
record DuckDB could not hold is not cached: its problems are reported on every call, as without a
cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from suite.core.boundary.atomic import stale_aside, write_atomic

STAGE = Path(__file__).parent  # suite/results: the code whose output the cached file is
CHUNK = 1 << 20


@dataclass(frozen=True)
class Cached:
    database: Path
    runs: int
    evaluations: int
    problems: list  # RecordError: only for a build that was not cached


def content_key(folder: Path) -> str:
    """A hash of the snapshot's files (relative name and bytes) and of this stage's source."""
    h = hashlib.sha256()
    for root, label in ((Path(folder), "snapshot"), (STAGE, "code")):
        files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        for path in files:
            h.update(f"{label}/{path.relative_to(root).as_posix()}\0".encode())
            with open(path, "rb") as f:
                while block := f.read(CHUNK):
                    h.update(block)
            h.update(b"\0")
    return h.hexdigest()[:20]


def published_database(folder: Path, cache: Path) -> Cached:
    """The database of the snapshot ``folder``, from ``cache`` when its key is there, else built
    (suite.results.store.ingest_snapshot) and, when it had no problem, kept there."""
    from suite.results.store import ingest_snapshot

    key = content_key(folder)
    database, counts = cache / f"{key}.duckdb", cache / f"{key}.json"
    if database.is_file() and counts.is_file():
        known = json.loads(counts.read_text())
        return Cached(database, known["runs"], known["evaluations"], [])
    # built in a scratch folder outside the project: a snapshot refused half-way, or one with
    # problems, leaves nothing in the project (the caller removes the scratch folder of the latter)
    scratch = Path(tempfile.mkdtemp(prefix="posbench-published-"))
    staging = scratch / "posbench.duckdb"
    try:
        report = ingest_snapshot(folder, staging)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    if report.problems:  # reported by the caller on every call: nothing kept to hide them
        return Cached(staging, report.runs, report.evaluations, report.problems)
    cache.mkdir(parents=True, exist_ok=True)
    part = cache / f".tmp-{os.getpid()}-{key}.duckdb"
    shutil.move(staging, part)  # across file systems; then renamed in one step
    shutil.rmtree(scratch, ignore_errors=True)
    os.replace(part, database)  # the counts last: a database without them is rebuilt
    write_atomic(counts, json.dumps({"runs": report.runs, "evaluations": report.evaluations}))
    # only the latest key is kept: an older snapshot's files go, and what a killed build left; not
    # the folder (another render of this snapshot may be reading this key's file, or writing its
    # own part: two renders at once, tests/e2e/test_site_concurrency.py)
    for old in cache.glob("*"):
        if old.is_file() and not old.name.startswith((key, ".tmp-")):
            old.unlink(missing_ok=True)
    stale_aside(cache, ".tmp-")
    return Cached(database, report.runs, report.evaluations, [])
