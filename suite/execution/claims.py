"""Claims: how concurrent processes on one grid divide the work without a server.

A piece of work (a training run, an evaluation) is claimed by creating
``results/claims/<kind>-<id>.json`` with ``O_CREAT | O_EXCL`` (atomic on POSIX
filesystems, NFS v3+ included), holding the owner's host, boot id, pid, the pid's start time and a random token.
While the owner works, a thread touches the file (the heartbeat).

Whether a claim is stale is decided by whether its owner lives, never by this process's clock
(a second ``run`` whose clock runs ahead must not take a live worker's piece):

* an owner on this host, in this boot: stale exactly when its pid is gone, a zombie (a
  SIGKILLed worker not yet reaped), or another process that took its number (another start
  time). A live owner's claim is never stale, however old its heartbeat;
* an owner on this host in an earlier boot: stale (it died with the boot);
* an owner on another host (a cluster node): stale when its heartbeat is older than
  ``stale_after`` seconds, both times read from the file system that holds the claims (the
  heartbeat's mtime against the mtime of a file written there now), so neither machine's
  clock is compared with the other's.

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

from suite.core.boundary.bounded import SMALL_JSON, Refused, read_json

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


def boot_id() -> str | None:
    """This boot of this host (Linux); None where there is none to read."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def started(pid: int) -> str | None:
    """When ``pid`` started, in clock ticks since boot (/proc/<pid>/stat's 22nd field): with the pid
    and the boot it names one process, where a pid alone may be reused."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return None


def owner() -> dict:
    """What a claim says of the process that holds it."""
    return {"host": socket.gethostname(), "boot_id": boot_id(), "pid": os.getpid(), "started": started(os.getpid())}


def file_system_now(directory: Path) -> float:
    """The time of the file system that holds ``directory``: the mtime of a file written there now
    (the file server's clock on NFS, this kernel's on a local disk; never this process's)."""
    probe = directory / f".clock-{os.getpid()}-{uuid.uuid4().hex}"
    fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    try:
        return os.fstat(fd).st_mtime
    finally:
        os.close(fd)
        probe.unlink(missing_ok=True)


def read_claim(path: Path):
    """A claim's JSON, read bounded (suite.core.boundary.bounded): a FIFO or a folder named like a
    claim is refused (``Refused``, a ValueError), never waited on; FileNotFoundError when gone."""
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(path)
    try:
        return read_json(path, SMALL_JSON)
    except Refused as exc:
        if str(exc) == "missing":
            raise FileNotFoundError(path) from None
        if str(exc) == "empty file":
            return {}
        raise


def _token(path: Path) -> str | None:
    try:
        info = read_claim(path)
        return info.get("token") if isinstance(info, dict) else None
    except (OSError, ValueError):
        return None


def is_stale(path: Path, stale_after: float = STALE_AFTER_S) -> bool:
    """Whether the claim (or takeover lock) at ``path`` belongs to no live owner (module docstring)."""
    try:
        mtime = path.stat().st_mtime
        info = read_claim(path)
    except FileNotFoundError:
        return False  # released meanwhile: not stale, simply gone
    except (OSError, ValueError):
        return True  # unreadable: its writer died mid-write
    if not isinstance(info, dict):
        return True
    pid = info.get("pid")
    if info.get("host") == socket.gethostname() and isinstance(pid, int) and not isinstance(pid, bool):
        here = boot_id()
        if info.get("boot_id") and here and info["boot_id"] != here:
            return True  # its owner ran in an earlier boot of this host
        if not _alive(pid):
            return True
        if info.get("started") is not None and info["started"] != started(pid):
            return True  # the pid is another process's now
        if info.get("boot_id") and info["boot_id"] == here:
            return False  # its owner lives: its claim holds, whatever any clock says
    try:
        return file_system_now(path.parent) - mtime > stale_after
    except OSError:
        return False  # cannot tell (a read-only folder): a claim is kept rather than taken twice


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
            if _token(self.path) == self.token:  # never remove another's claim
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
    body = json.dumps({**owner(), "token": token, "since": time.time()})
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
        _remove(path)
        return Claim(path, token, stale_after) if _create(path, body) else None
    finally:
        lock.unlink(missing_ok=True)


def _remove(path: Path) -> None:
    """Remove a stale claim; what is no claim file (a folder, a FIFO named like one) is set aside
    into results/aside/ with the reason, not deleted."""
    if path.is_file() or path.is_symlink():
        path.unlink(missing_ok=True)
    elif path.exists():
        from suite.core.aside import set_aside

        set_aside(path, path.parent.parent, f"{path.name} was not a claim file but a {'folder' if path.is_dir() else 'special file'}"
                                            " named like one: set aside so that the piece could be claimed")


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
