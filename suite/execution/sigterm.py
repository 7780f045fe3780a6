"""A SIGTERM (kill, a scheduler's cancel or time limit) as an exception: ``SystemExit(143)``.

Python's default for SIGTERM ends the process where it stands, so no ``finally`` runs: claims
stay on disk until they go stale, worker processes outlive their parent. Raised as an
exception instead, the signal unwinds the stack like any error, and the exit status is still
the shell's ``128 + 15``. Inside a Lightning fit, Lightning composes this handler with its own
(``_SignalConnector`` keeps the handler it found), so its launcher still passes the signal on
to the other ranks before this one raises."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager


_received: list[int] = []  # the SIGTERMs this process got inside sigterm_exits


def _exit(signum, frame):
    _received.append(signum)
    raise SystemExit(128 + signum)


def exit_if_terminated() -> None:
    """Raise the ``SystemExit(143)`` of a SIGTERM that a library turned into its own error on the
    way through: DuckDB, interrupted by the handler's exception during a query, raises "Query
    interrupted" instead. A piece that failed so was not at fault; the process still exits 143
    and records nothing (called before a failure is recorded: suite.execution.runner)."""
    if _received:
        raise SystemExit(128 + _received[-1])


@contextmanager
def sigterm_exits():
    """While inside: a SIGTERM raises ``SystemExit(143)`` wherever it lands. Python delivers
    signals to the main thread only, so elsewhere (a thread that runs a plan) this changes
    nothing; the handler found is restored on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _exit)
    _received.clear()
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        _received.clear()
