"""Executors: where a plan's pieces run. One interface, chosen with ``posbench run --executor``.

* ``local``  in this process, or ``--jobs N`` worker processes on this machine (:mod:`.local`)
* ``slurm``  one SLURM job array over the pending training runs (:mod:`.slurm`); it
  submits and returns (``submits = True``), so ``run`` does not ingest: the records
  arrive later, and ``posbench status GRID --ingest`` builds the database

An executor is a class registered in :data:`EXECUTORS` (the decorator sits on the
class, in its own module; the registry imports the modules on first lookup) with ``add_arguments(parser)`` for its options and
``run(plan, project, console, args) -> int`` (an exit code). Pieces coordinate
through claims (:mod:`suite.execution.claims`) and record files, so any number of executors,
processes or cluster tasks can work on one results folder; the database is built
once, afterwards, by ``posbench ingest`` (``run`` does it when it is done).
"""

from __future__ import annotations

import argparse

from suite.core.registry import Registry


class Executor:
    """Base class of every executor (see the module docstring)."""

    submits = False  # True: run() hands the work to a scheduler and returns before it is done

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """The executor's own options on `posbench run`."""

    def run(self, plan, project, console, args) -> int:
        raise NotImplementedError


EXECUTORS: Registry[Executor] = Registry("executor", Executor, members=(
    "suite.execution.executors.local", "suite.execution.executors.slurm"))
