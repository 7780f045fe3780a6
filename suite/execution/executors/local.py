"""The local executor: a plan's pending pieces in this process, or in ``--jobs N`` worker
processes that divide them through claims. Each process computes with the numerics of
suite.core.numerics (one thread by default, whatever the machine's cores), which it
inherits from this one: the figures do not depend on N or on the machine."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

from rich.live import Live
from rich.table import Table
from rich.text import Text

from suite.core import numerics
from suite.execution.progress import GridProgress
from suite.execution.runner import Progress, run_plan
from suite.execution.sigterm import sigterm_exits
from suite.execution.executors.base import EXECUTORS, Executor


def open_log(folder: Path, i: int):
    """Worker ``i``'s log, opened for writing and locked (flock) for as long as the worker holds it:
    ``worker-<i>.log``, or ``worker-<i>-<pid>.log`` while another ``run`` at once has that one, so
    that two runs never write over each other's lines."""
    for name in (f"worker-{i}.log", f"worker-{i}-{os.getpid()}.log"):
        out = open(folder / name, "a")
        try:
            fcntl.flock(out, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            out.close()
            continue
        out.truncate(0)
        return out
    raise OSError(f"{folder}: no free log for worker {i}")


@EXECUTORS.register("local")
class Local(Executor):
    @staticmethod
    def add_arguments(parser) -> None:
        parser.add_argument("--jobs", type=int, default=1, metavar="N",
                            help="local: N worker processes dividing the work (default 1: this process)")

    def run(self, plan, project, console, args) -> int:
        if args.jobs <= 1:
            progress = run_plan(plan, project, console, retry_failed=args.retry_failed, progress_bar=not args.quiet)
            return 1 if progress.failed else 0
        return self.run_workers(plan, project, console, args)

    @staticmethod
    def run_workers(plan, project, console, args, refresh_s: float = 1.0) -> int:
        """``args.jobs`` worker processes, each logging to its own file, and one progress display here."""
        threads = numerics.requested().threads
        env = {**os.environ, **numerics.requested().variables()}
        command = worker_command(project, args)
        project.logs.mkdir(parents=True, exist_ok=True)
        files = [open_log(project.logs, i) for i in range(1, args.jobs + 1)]
        logs = [Path(f.name) for f in files]
        console.print(f"{args.jobs} worker processes, {threads} thread(s) each; their output: "
                      f"{logs[0].parent}/{logs[0].name.replace('-1', '-<i>', 1)}")
        progress = GridProgress(plan, project)
        workers = []
        # A SIGTERM (kill, a scheduler's cancel) ends this process through the finally below, so
        # that it stops its workers too (Ctrl-C reaches them itself: they share the terminal's
        # process group); their claims go stale and a rerun takes them over.
        with sigterm_exits():
            try:
                for out in files:
                    with out:  # the worker holds the file (and its lock) from here
                        workers.append(subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT))
                show(progress, workers, console, refresh_s)
                codes = [w.wait() for w in workers]
            finally:
                stop(workers)
        for log, code in zip(logs, codes):
            if code:
                tail = log.read_text().splitlines()[-15:]
                console.print(f"[red]worker {log.stem} exited with {code}[/]; the end of {log}:", markup=True)
                console.print("\n".join(tail), markup=False)
        return max(codes)


def worker_command(project, args) -> list[str]:
    """One worker's command line: the same grid, the same part of it (``--size``: one rung of a
    ladder; without it a worker would plan and run every size), one process, no site of its own,
    one round (a tuned grid's runs at the chosen rates are the next round, which this process
    starts and its progress display counts; a worker going on to them alone left the display
    at "30/30 pieces" for the rung's longest part)."""
    command = [sys.executable, "-m", "suite.cli.main", "--root", str(project.root), "run", str(args.grid),
               "--quiet", "--no-ingest", "--executor", "local", "--jobs", "1", "--one-round"]
    for size in getattr(args, "size", None) or []:
        command += ["--size", size]
    return command + (["--retry-failed"] if args.retry_failed else [])


def stop(workers: list, grace_s: float = 10.0) -> None:
    """Workers still running get SIGTERM, and SIGKILL after ``grace_s`` (Lightning's own SIGTERM
    handler only stops a fit at the end of its epoch); waited for, so none outlives this process."""
    for w in workers:
        if w.poll() is None:
            w.terminate()
    for w in workers:
        try:
            w.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            w.kill()
            w.wait()


def any_running(workers: list) -> bool:
    """Whether a worker still runs. Every worker is polled, so a dead one is reaped at once: a
    zombie's pid still answers ``kill(pid, 0)``, and its claims would wait out their heartbeat."""
    return any([w.poll() is None for w in workers])  # a list, not a generator: no short-circuit


def show(progress: GridProgress, workers: list, console, refresh_s: float) -> None:
    """Until every worker has exited: one live display on a terminal, otherwise a line each
    time the count of finished pieces changes."""
    pids = [w.pid for w in workers]
    names = {w.pid: f"worker {i}" for i, w in enumerate(workers, 1)}

    def render(snapshot):
        table = Table.grid(padding=(0, 1))
        table.add_row(Text(snapshot.line(), style="bold"))
        for pid in pids:
            table.add_row(Text(f"  {names[pid]}: {snapshot.current.get(pid, 'idle' if workers[pids.index(pid)].poll() is None else 'done')}"))
        return table

    if console.is_terminal:
        with Live(render(progress.snapshot(pids)), console=console, refresh_per_second=4, transient=False) as live:
            while any_running(workers):
                time.sleep(refresh_s)
                live.update(render(progress.snapshot(pids)))
            live.update(render(progress.snapshot(pids)))
        return
    last = None
    while any_running(workers):
        time.sleep(refresh_s)
        snapshot = progress.snapshot(pids)
        if (snapshot.done, snapshot.failed) != last:
            last = (snapshot.done, snapshot.failed)
            console.print(snapshot.line(), markup=False)
    final = progress.snapshot(pids)
    if (final.done, final.failed) != last:
        console.print(final.line(), markup=False)


def run_local(plan, project, console, retry_failed: bool = False, progress_bar: bool = True) -> Progress:
    return run_plan(plan, project, console, retry_failed=retry_failed, progress_bar=progress_bar)
