"""Run records: one JSON file per cell, the source of truth for every figure.

``results/runs/<cell_id>.json`` holds the cell (its resolved spec), provenance,
status (``done`` or ``failed`` with the reason), every metric in long form
``(task, metric, scale, eval_len, value, stderr, n, status, window_policy)`` and the
per-position loss curves. Files are written atomically (temp file + rename), so a
crash or preemption never leaves half a record, and a reader never sees one.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import tempfile
from importlib import metadata
from pathlib import Path

SCHEMA_VERSION = 1
TRACKED_PACKAGES = ("torch", "lightning", "lm_eval", "duckdb", "posbench")


def write_record(record: dict, runs_dir: Path) -> Path:
    runs_dir.mkdir(parents=True, exist_ok=True)
    path = runs_dir / f"{record['cell_id']}.json"
    fd, tmp = tempfile.mkstemp(dir=runs_dir, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True, allow_nan=False)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_record(path: Path) -> dict:
    with open(path) as f:
        return json.load(f)


def iter_records(runs_dir: Path):
    for path in sorted(Path(runs_dir).glob("*.json")):
        yield read_record(path)


def git_commit(cwd: Path | None = None) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd, capture_output=True, text=True)
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name.replace("_", "-"))
        except metadata.PackageNotFoundError:
            continue
    return versions
