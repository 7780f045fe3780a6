"""Claims: how concurrent processes on one grid divide the work without a server.

A piece of work (a training run, an evaluation) is claimed by creating
``results/claims/<kind>-<id>.json`` with ``O_CREAT | O_EXCL`` (atomic on POSIX
filesystems, NFS v3+ included), holding the owner's host, pid and a random token.
While the owner works, a thread touches the file (the heartbeat). A claim is stale
when its heartbeat is older than ``stale_after`` seconds, or when its owner ran on
this host and that pid is gone or a zombie (a SIGKILLed worker not yet reaped).

Taking over a stale claim is one step with one winner: a taker first creates the takeover
lock of that stale claim (``.takeover-<name>-<its token>``, again ``O_EXCL``), checks under it
that the claim is still the stale one it judged (same token), removes it and claims afresh
with ``O_EXCL``. Judging "stale" and removing are separate steps, so without the lock two
takers that both judged the old claim stale could each remove a claim, the second removing
the first's fresh one, and both would hold the piece. A lock whose taker died is itself stale
by the same rule, and is broken by renaming it aside and checking that the renamed file is the
dead one (:func:`break_lock`), never by a check-then-unlink.
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
    """Whether ``pid`` runs: a zombie (dead, not yet waited for by its parent) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # /proc/<pid>/stat: "pid (name) S ...": the state follows the name's closing parenthesis
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _token(path: Path) -> str | None:
    try:
        return json.loads(path.read_text() or "{}").get("token")
    except (OSError, ValueError, AttributeError):
        return None


def is_stale(path: Path, stale_after: float = STALE_AFTER_S) -> bool:
    try:
        age = time.time() - path.stat().st_mtime
        info = json.loads(path.read_text() or "{}")
    except FileNotFoundError:
        return False  # released meanwhile: not stale, simply gone
    except (OSError, ValueError):
        return True  # unreadable: its writer died mid-write
    if not isinstance(info, dict):
        return True
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


def _create(path: Path, body: str) -> bool:
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as f:
        f.write(body)
    return True


def try_claim(directory: Path, name: str, stale_after: float = STALE_AFTER_S) -> Claim | None:
    """Claim ``name`` in ``directory``; None when a live owner holds it (or another process is
    taking over its stale claim at this moment)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    token = uuid.uuid4().hex
    body = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "token": token, "since": time.time()})
    if _create(path, body):
        return Claim(path, token, stale_after)
    stale = _token(path)
    if not is_stale(path, stale_after):
        return None
    # one lock per stale claim (named by its token): only takers of that same claim compete for it
    lock = directory / f".takeover-{name}-{stale if isinstance(stale, str) and stale.isalnum() else 'unreadable'}.json"
    if not _create(lock, body):
        holder = _token(lock)
        if is_stale(lock, stale_after):
            break_lock(lock, holder)  # its taker died mid-takeover; the next attempt takes the lock
        return None  # else another taker holds the lock: it wins or finds the claim live
    try:
        if _token(path) != stale or not is_stale(path, stale_after):
            return None  # taken over (or renewed) between our look and our lock
        path.unlink(missing_ok=True)
        return Claim(path, token, stale_after) if _create(path, body) else None
    finally:
        lock.unlink(missing_ok=True)


def break_lock(lock: Path, holder: str | None) -> None:
    """Remove a dead taker's lock, and only that one: renamed aside first (one renamer wins), then
    removed if it is the lock judged dead (``holder``, its token); a live taker's lock that took
    the name meanwhile is put back (a hard link fails if yet another took the name since)."""
    aside = lock.with_name(f".broken-{uuid.uuid4().hex}-{lock.name}")
    try:
        os.rename(lock, aside)
    except FileNotFoundError:
        return  # broken by another already
    if _token(aside) != holder:
        try:
            os.link(aside, lock)
        except FileExistsError:
            pass
    aside.unlink(missing_ok=True)


def held_by_others(directory: Path, name: str, stale_after: float = STALE_AFTER_S) -> bool:
    path = directory / f"{name}.json"
    return path.exists() and not is_stale(path, stale_after)
