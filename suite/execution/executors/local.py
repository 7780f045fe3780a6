"""The local executor: a plan's pending pieces in this process, or in ``--jobs N`` worker
processes that divide them through claims (each with cores / N threads, so together
they never oversubscribe the machine)."""

from __future__ import annotations

import os
import subprocess
import sys

from suite.execution.runner import Progress, run_plan
from suite.execution.executors.base import EXECUTORS, Executor


def threads_per_job(jobs: int) -> int:
    return max(1, (os.cpu_count() or 1) // jobs)


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
        return self.run_workers(project, console, args)

    @staticmethod
    def run_workers(project, console, args) -> int:
        threads = threads_per_job(args.jobs)
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
        command = [sys.executable, "-m", "suite.cli.main", "--root", str(project.root), "run", str(args.grid),
                   "--quiet", "--no-ingest", "--executor", "local", "--jobs", "1"]
        command += ["--retry-failed"] if args.retry_failed else []
        console.print(f"{args.jobs} worker processes, {threads} thread(s) each")
        workers = [subprocess.Popen(command, env=env) for _ in range(args.jobs)]
        codes = [w.wait() for w in workers]
        return max(codes)


def run_local(plan, project, console, retry_failed: bool = False, progress_bar: bool = True) -> Progress:
    return run_plan(plan, project, console, retry_failed=retry_failed, progress_bar=progress_bar)
