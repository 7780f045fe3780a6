"""Setting a file aside instead of overwriting or deleting it.

A done record is a result: when the runner must redo its piece (its checkpoint is gone or
cannot be loaded), the old record is moved to ``results/aside/`` with the reason beside it,
and the run says so; likewise an unloadable checkpoint or a Lightning resume folder that
cannot be resumed. Nothing a grid computed disappears without a line saying where it went.
"""

from __future__ import annotations

import datetime
import os
import shutil
from pathlib import Path


def aside_folder(results: Path) -> Path:
    return results / "aside"


def set_aside(path: Path, results: Path, reason: str) -> Path | None:
    """Move ``path`` (a file or a folder) into ``results/aside/``, named with the time, and write
    the reason beside it; returns where it went, or None when it is gone already (another
    process set it aside first)."""
    folder = aside_folder(results)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S")
    target = folder / f"{stamp}-{os.getpid()}-{path.name}"
    try:
        if path.is_dir():
            shutil.move(str(path), str(target))
        else:
            os.replace(path, target)
    except FileNotFoundError:
        return None
    target.with_name(target.name + ".reason").write_text(reason.rstrip() + "\n")
    return target
