"""Claims: how concurrent processes on one grid divide the work without a server.

A piece of work (a training run, an evaluation) is claimed by creating
``results/claims/<kind>-<id>.json`` with ``O_CREAT | O_EXCL`` (atomic on POSIX
filesystems, NFS v3+ included), holding the owner's host, pid and a random token.
While the owner works, a thread touches the file (the heartbeat). A claim is stale
when its heartbeat is older than ``stale_after`` seconds, or when its owner ran on
this host and that pid is gone (a SIGKILLed process); a stale claim is taken over
by renaming it aside (only one renamer can win) and claiming afresh.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from pathlib import Path

STALE_AFTER_S = 120.0  # a live owner touches its claim every STALE_AFTER_S / 4


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_stale(path: Path, stale_after: float = STALE_AFTER_S) -> bool:
    try:
        age = time.time() - path.stat().st_mtime
        info = json.loads(path.read_text() or "{}")
    except FileNotFoundError:
        return False  # released meanwhile: not stale, simply gone
    except (OSError, ValueError):
        return True  # unreadable: its writer died mid-write
    if info.get("host") == socket.gethostname() and isinstance(info.get("pid"), int) and not _alive(info["pid"]):
        return True
    return age > stale_after


class Claim:
    """A held claim; release it (or use it as a context manager) when the work is recorded."""

    def __init__(self, path: Path, token: str, stale_after: float):
        self.path, self.token = path, token
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, args=(stale_after / 4,), daemon=True)
        self._thread.start()

    def _beat(self, every: float) -> None:
        while not self._stop.wait(every):
            try:
                os.utime(self.path)
            except FileNotFoundError:
                return

    def release(self) -> None:
        self._stop.set()
        try:
            if json.loads(self.path.read_text()).get("token") == self.token:  # never remove another's claim
                self.path.unlink()
        except (OSError, ValueError):
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def try_claim(directory: Path, name: str, stale_after: float = STALE_AFTER_S) -> Claim | None:
    """Claim ``name`` in ``directory``; None when a live owner holds it."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    token = uuid.uuid4().hex
    body = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "token": token, "since": time.time()})
    for _ in range(2):  # a second try after taking over a stale claim
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if not is_stale(path, stale_after):
                return None
            try:  # exactly one process wins this rename; the others see FileNotFoundError
                os.rename(path, directory / f".stale-{token}-{name}.json")
            except FileNotFoundError:
                continue
            (directory / f".stale-{token}-{name}.json").unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w") as f:
            f.write(body)
        return Claim(path, token, stale_after)
    return None


def held_by_others(directory: Path, name: str, stale_after: float = STALE_AFTER_S) -> bool:
    path = directory / f"{name}.json"
    return path.exists() and not is_stale(path, stale_after)
