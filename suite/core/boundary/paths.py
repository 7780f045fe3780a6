"""Paths inside the project, reached through no link.

A folder of the project may come from a clone or a pull request (``submissions/NAME``,
``leaderboard/``), and a link in it could point anywhere on the machine: writing through it
writes outside the project, reading through it reads a file the project does not hold. So a
path that is written or read as the project's own is checked here: every component from the
project root down is a real folder or file, not a link, and it stays inside the root.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class OutsideProject(ValueError):
    """A path that leaves the project or goes through a link; ``str()`` says which and why."""


def own_path(root: Path, path: Path, *, kind: str | None = None) -> Path:
    """``path`` (absolute, or relative to ``root``) when it lies inside ``root`` and no component
    below ``root`` is a link; ``kind`` ('file' or 'dir') also requires what exists there to be one.
    A component that does not exist yet is fine (it will be created as a real one)."""
    root = Path(root).absolute()
    path = Path(path) if Path(path).is_absolute() else root / path
    path = Path(os.path.normpath(path.absolute()))
    if not path.is_relative_to(root) and not path.is_relative_to(Path(os.path.normpath(root))):
        raise OutsideProject(f"{path}: outside the project {root}")
    current = Path(os.path.normpath(root))
    for part in path.relative_to(current).parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return path
        if stat.S_ISLNK(mode):
            raise OutsideProject(f"{current}: a link, not a folder or file of the project's own (it could point "
                                 "anywhere on this machine): refused")
    if kind == "file" and not stat.S_ISREG(os.lstat(path).st_mode):
        raise OutsideProject(f"{path}: not a regular file")
    if kind == "dir" and not stat.S_ISDIR(os.lstat(path).st_mode):
        raise OutsideProject(f"{path}: not a folder")
    return path


def regular_file(path: Path) -> Path:
    """``path`` when it is a regular file and not a link (a FIFO or a device would block or
    never end a read); OSError-free ValueError otherwise."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        raise OutsideProject(f"{path}: missing") from None
    if stat.S_ISLNK(mode):
        raise OutsideProject(f"{path}: a link, not a file of its own: refused")
    if not stat.S_ISREG(mode):
        raise OutsideProject(f"{path}: not a regular file (a FIFO, a folder or a device): refused")
    return Path(path)
