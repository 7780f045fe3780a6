"""The published snapshot's DuckDB file, built once per content: `posbench leaderboard --published`
and `posbench site --published` read the snapshot (``leaderboard/``) as a database, and building
it is most of their time (about 12 of 16 s on the 1,764-run snapshot; docs/benchmarks.md).

The file is kept in ``.cache/published/<key>.duckdb`` (results/ is left alone), where the key
hashes every file of the snapshot (its name and bytes) and the source of this stage
(``suite/results``: the code that turns records into tables), so an edited snapshot or an edited
ingest builds anew, never reads a stale file. Only the latest key is kept. A snapshot with a
record DuckDB cannot hold, or a per-sample file over its bounds, is refused: every such problem is
reported (RecordErrors), nothing is kept, and the command renders nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
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


def _files(root: Path) -> list[Path]:
    """Every file under ``root``, sorted; RecordError at the first link, FIFO or device: a
    snapshot comes from anyone, and a link read here would read whatever it points at (a FIFO
    would never end the read) before any other check of the snapshot has run."""
    from suite.results.records import RecordError

    out = []
    for current, folders, names in os.walk(root):  # links to folders are not followed: checked below
        folders[:] = [name for name in folders if name != "__pycache__"]
        for name in [*folders, *names]:
            path = Path(current) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                raise RecordError(path, "a link, not a file of the snapshot's own: refused")
            if name in names:
                if not stat.S_ISREG(mode):
                    raise RecordError(path, "not a regular file (a FIFO or a device): refused")
                out.append(path)
    return sorted(out)


def content_key(folder: Path) -> str:
    """A hash of the snapshot's files (relative name and bytes) and of this stage's source."""
    h = hashlib.sha256()
    for root, label in ((Path(folder), "snapshot"), (STAGE, "code")):
        for path in _files(root):
            h.update(f"{label}/{path.relative_to(root).as_posix()}\0".encode())
            with open(path, "rb") as f:
                while block := f.read(CHUNK):
                    h.update(block)
            h.update(b"\0")
    return h.hexdigest()[:20]


def published_database(folder: Path, cache: Path) -> Cached:
    """The database of the snapshot ``folder``, from ``cache`` when its key is there, else built
    (suite.results.store.ingest_snapshot) and kept there; RecordErrors naming every problem of
    a snapshot that had any, with nothing kept."""
    from suite.core.boundary.paths import OutsideProject, own_path
    from suite.results.records import RecordError, RecordErrors
    from suite.results.store import ingest_snapshot

    # the cache is written and its old files deleted: a link at it or above it (a clone can hold
    # one) would have them written and deleted wherever it points; the project root is its parent's
    try:
        own_path(cache.parent.parent, cache)
    except OutsideProject:
        raise RecordError(cache, "it, or a folder above it, is a link: the cache's files are written and deleted, "
                                 "which through a link would happen wherever it points; remove the link") from None
    key = content_key(folder)
    database, counts = cache / f"{key}.duckdb", cache / f"{key}.json"
    if database.is_file() and counts.is_file():
        known = json.loads(counts.read_text())
        return Cached(database, known["runs"], known["evaluations"])
    # built in a scratch folder outside the project: a snapshot refused half-way, or one with
    # problems, leaves nothing in the project
    scratch = Path(tempfile.mkdtemp(prefix="posbench-published-"))
    staging = scratch / "posbench.duckdb"
    try:
        report = ingest_snapshot(folder, staging)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    if report.problems:  # a record DuckDB cannot hold, a per-sample file too large: all refused, nothing kept
        shutil.rmtree(scratch, ignore_errors=True)
        raise RecordErrors(report.problems)
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
    return Cached(database, report.runs, report.evaluations)
