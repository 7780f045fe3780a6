"""`posbench run --jobs N` starts N workers that each plan the grid again: they must plan the
same part of it as the command that started them (a ladder's rung with ``--size``), or they
train every size of the ladder while the progress display counts one."""

from __future__ import annotations

from suite.cli.main import build_parser
from suite.execution.executors.local import worker_command
from suite.specs import Project

from tests.conftest import REPO


def worker_args(*argv: str):
    args = build_parser().parse_args(["run", "grids/ladder-lm.yaml", "--jobs", "2", *argv])
    command = worker_command(Project(REPO), args)
    assert command[1:3] == ["-m", "suite.cli.main"]
    return build_parser().parse_args(command[3:])


def test_a_worker_runs_the_sizes_it_was_started_for():
    worker = worker_args("--size", "tiny", "--size", "small")
    assert worker.size == ["tiny", "small"] and worker.jobs == 1 and worker.grid == "grids/ladder-lm.yaml"
    assert worker.one_round  # the next round of a tuned grid is started (and counted) by the command


def test_a_worker_of_a_whole_grid_runs_every_size_and_retries_when_asked():
    worker = worker_args("--retry-failed")
    assert worker.size is None and worker.retry_failed and worker.no_ingest and worker.quiet
