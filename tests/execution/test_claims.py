"""Claims divide a grid's pieces between processes: a stale claim is taken over by exactly
one taker, whatever the interleaving, and a dead worker's claim is stale at once."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from suite.execution import claims
from suite.execution.executors import local


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def wait_until_zombie(pid: int) -> None:
    """Dead and not yet reaped: /proc says state Z (bounded by a count of polls, not by time)."""
    for _ in range(10_000):
        if Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z":
            return
        time.sleep(0.001)
    raise AssertionError(f"process {pid} did not die")


def stale_claim(directory, name="run-0123456789abcdef"):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    path.write_text(json.dumps({"host": socket.gethostname(), "pid": dead_pid(), "token": "old", "since": 0}))
    return path


def test_two_takers_that_both_judged_a_claim_stale_do_not_both_win(tmp_path, monkeypatch):
    """B judges the claim stale, then A takes it over before B acts: B must not take A's fresh claim."""
    path = stale_claim(tmp_path)
    b_judged, a_done = threading.Event(), threading.Event()
    original = claims.is_stale

    def is_stale(p, stale_after=claims.STALE_AFTER_S):
        verdict = original(p, stale_after)
        if threading.current_thread().name == "B" and p == path and not b_judged.is_set():
            b_judged.set()
            a_done.wait(10)  # the interleaving: A's whole takeover happens here
        return verdict

    monkeypatch.setattr(claims, "is_stale", is_stale)
    won = {}

    def take(who):
        won[who] = claims.try_claim(tmp_path, path.stem)

    b = threading.Thread(target=take, args=("B",), name="B")
    b.start()
    assert b_judged.wait(10)
    take("A")
    a_done.set()
    b.join(10)
    assert won["A"] is not None and won["B"] is None
    assert json.loads(path.read_text())["token"] == won["A"].token
    won["A"].release()
    assert not list(tmp_path.glob("*.json")) and not list(tmp_path.glob(".takeover-*"))


def test_many_takers_of_one_stale_claim_one_wins(tmp_path):
    path = stale_claim(tmp_path)
    barrier, won = threading.Barrier(8), []

    def take():
        barrier.wait()
        claim = claims.try_claim(tmp_path, path.stem)
        if claim is not None:
            won.append(claim)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(won) == 1


def test_a_killed_unreaped_worker_is_not_alive_and_its_claim_is_stale_at_once(tmp_path):
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    path = tmp_path / "run-x.json"
    path.write_text(json.dumps({"host": socket.gethostname(), "pid": worker.pid, "token": "t", "since": 0}))
    assert not claims.is_stale(path)
    worker.send_signal(signal.SIGKILL)
    wait_until_zombie(worker.pid)
    assert not claims._alive(worker.pid)
    assert worker.returncode is None  # nobody has waited for it yet
    assert claims.is_stale(path)
    worker.wait()


def test_the_executor_reaps_every_dead_worker_while_another_still_runs():
    """The progress loop asks every worker (not only up to the first live one) whether it has
    ended, so a killed worker is reaped while the other goes on."""
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    killed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    killed.kill()
    wait_until_zombie(killed.pid)
    try:
        assert local.any_running([alive, killed])
        assert killed.returncode == -signal.SIGKILL  # waited for: no zombie left
    finally:
        alive.kill()
        alive.wait()


def test_breaking_a_dead_takers_lock_never_removes_a_live_takers_lock(tmp_path):
    """D judged the lock dead (holder token 'dead'); meanwhile C broke it and E took the name. D's
    break must leave E's lock in place; a break of the dead lock itself removes it."""
    lock = tmp_path / ".takeover-run-x-old.json"
    lock.write_text(json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "token": "E", "since": 0}))
    claims.break_lock(lock, holder="dead")
    assert json.loads(lock.read_text())["token"] == "E" and not list(tmp_path.glob(".broken-*"))
    lock.write_text(json.dumps({"host": socket.gethostname(), "pid": dead_pid(), "token": "dead", "since": 0}))
    claims.break_lock(lock, holder="dead")
    assert not lock.exists() and not list(tmp_path.glob(".broken-*"))


def test_a_claim_whose_taker_died_holding_the_lock_is_taken_on_a_later_attempt(tmp_path):
    path = stale_claim(tmp_path)
    lock = tmp_path / f".takeover-{path.stem}-old.json"  # the stale claim's token is "old"
    lock.write_text(json.dumps({"host": socket.gethostname(), "pid": dead_pid(), "token": "T", "since": 0}))
    assert claims.try_claim(tmp_path, path.stem) is None  # breaks the dead taker's lock
    won = claims.try_claim(tmp_path, path.stem)
    assert won is not None and json.loads(path.read_text())["token"] == won.token
    won.release()
