"""Writing a file aside and renaming it into place: a reader sees the old file or the new
one, never half of one, and a kill leaves at most a ``.tmp-*`` file no reader matches."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: str | bytes, *, fsync: bool = False) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.name[:100]}-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where the system or
    the file system cannot."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    return renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0


def replace_folder(new: Path, target: Path) -> None:
    """``new`` (a complete folder, written aside in ``target``'s parent) becomes ``target`` in one
    step: a reader or a kill sees the old folder or the new one, never a mix. The old one is
    removed after (a kill before that leaves it under ``new``'s name, removed by the next writer)."""
    import shutil

    new, target = Path(new), Path(target)
    if not target.exists():
        os.rename(new, target)
        return
    if not _exchange(new, target):  # no atomic swap here: the two renames, the shortest window there is
        old = new.with_name(new.name + ".old")
        os.rename(target, old)
        os.rename(new, target)
        new = old
    shutil.rmtree(new, ignore_errors=True)


def stale_aside(parent: Path, prefix: str) -> None:
    """Remove the files and folders ``prefix<pid>-*`` in ``parent`` whose writer (the pid) is no
    longer alive: what a killed writer left aside (a SIGKILL runs no ``finally``)."""
    import shutil

    for path in Path(parent).glob(f"{prefix}*"):
        pid = path.name[len(prefix):].split("-")[0]
        if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
