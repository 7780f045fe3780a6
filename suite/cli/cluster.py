"""The cluster commands of `posbench`: run-one (a SLURM array task) and status."""

from __future__ import annotations

import os
from pathlib import Path

from rich.table import Table

from suite.cli.common import console, err_console, ingest_records, load_grid_plan, project_of, quiet_libraries
from suite.specs import Project


def cmd_run_one(args) -> int:
    """One manifest entry (a job-array task): its training run, then its evaluations;
    record files only. Exit 1 when a piece of the entry is recorded as failed."""
    from suite.execution.manifest import read_entry
    from suite.execution.runner import failed_pieces, run_plan
    from suite.core.runtime import DEVICES_ENV, NODES_ENV, launched_rank

    quiet_libraries()
    os.environ[DEVICES_ENV], os.environ[NODES_ENV] = str(args.devices), str(args.nodes)  # also for launched ranks
    project = project_of(args)
    try:
        plan, retry_failed = read_entry(Path(args.manifest), args.index)
    except (ValueError, IndexError) as exc:
        err_console.print(f"error: {exc}", markup=False)
        return 1
    if launched_rank() > 0:
        return _follow(plan.runs[0], project, retry_failed)
    console.print(f"{args.manifest} entry {args.index}: {plan.runs[0].label} [dim]{plan.runs[0].run_id}[/], "
                  f"{len(plan.evaluations)} evaluation(s)")
    run_plan(plan, project, console, retry_failed=retry_failed, progress_bar=False)
    return 1 if failed_pieces(plan, project) else 0


def _follow(run, project: Project, retry_failed: bool) -> int:
    """A rank > 0 of a distributed training run: trains beside rank 0, which holds the
    claim and writes the records; this rank writes nothing."""
    from suite.execution.runner import needs_training
    from suite.training.fit import TrainingFailed, fit

    if not needs_training(run, project, retry_failed):
        return 0
    try:
        fit(run, project.checkpoints, progress_bar=False)
    except TrainingFailed:
        return 1  # rank 0 records it
    return 0


def cmd_status(args) -> int:
    """Done / running / pending / failed from the records and claims, and the state of
    every submitted array in squeue/sacct."""
    from suite.execution.claims import held_by_others
    from suite.execution.executors.slurm import job_states, submitted_jobs
    from suite.results.records import status_of
    from suite.execution.runner import eval_path, run_path

    project, grid, plan = load_grid_plan(args)
    table = Table(title=f"grid {grid.spec.name}")
    for col in ("", "done", "running", "pending", "failed"):
        table.add_column(col, justify="right")
    pieces = [("training runs", plan.runs, "training_run", "run", run_path, lambda r: r.run_id),
              ("evaluations", plan.evaluations, "evaluation", "eval", eval_path, lambda e: e.eval_id)]
    for title, items, kind, prefix, path_of, id_of in pieces:
        counts = {"done": 0, "running": 0, "pending": 0, "failed": 0}
        for item in items:
            state = status_of(path_of(project, item), kind)
            if state == "todo":
                state = "running" if held_by_others(project.claims, f"{prefix}-{id_of(item)}") else "pending"
            counts[state] += 1
        table.add_row(title, *(str(v) for v in counts.values()))
    console.print(table)
    for folder, job_id in submitted_jobs(project):
        states = job_states(job_id)
        shown = ", ".join(f"{n} {s.lower()}" for s, n in sorted(states.items())) or "not in squeue/sacct (finished)"
        console.print(f"array {job_id} ({folder.relative_to(project.root)}): {shown}")
    if args.ingest:
        ingest_records(project)
    return 0
