"""What every command shares: the consoles, the project, loading a grid, ingesting and rendering."""

from __future__ import annotations

import logging
import sys
import warnings
from pathlib import Path

from suite.core.boundary.terminal import TerminalConsole as Console
from suite.core.boundary.terminal import one_line
from suite.execution.tuned import sweep_chooser
from suite.specs import Project

# piped or redirected output gets a wide table instead of rich's 80-column default
console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)  # an error is one line, however long


def project_of(args) -> Project:
    return Project(Path(args.root).resolve())


def load_grid_plan(args):
    from suite.plan.grid import load_plan

    project = project_of(args)
    grid, plan = load_plan(Path(args.grid), project, tuned=sweep_chooser(project))
    return project, grid, plan


def ingest_records(project: Project) -> None:
    from suite.results.store import ingest

    report = ingest(project.runs, project.evals, project.database)
    for problem in report.problems:
        err_console.print(f"skipped {problem}", markup=False, soft_wrap=True)
    console.print(f"ingested {report.runs} training run(s) and {report.evaluations} evaluation(s) into {project.database}"
                  + (f"; {len(report.problems)} unusable record(s) skipped" if report.problems else ""))


def ingest_and_render(project: Project, args) -> None:
    ingest_records(project)
    if not getattr(args, "no_site", False):
        console.print(f"site: {render_site(project)}")


def render_site(project: Project) -> Path:
    """Render the site; concurrent processes take turns (an advisory lock beside the site)."""
    import fcntl

    from suite.report.site import render

    project.site.parent.mkdir(parents=True, exist_ok=True)
    with open(project.site.parent / ".render.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return render(project.database, project.site, published=published_or_none(project))


def published_or_none(project: Project) -> set[str] | None:
    """The published snapshot's evaluation ids, to mark the rows computed here beside it. The
    site of one's own results does not need the snapshot: an unusable one is a one-line warning."""
    from suite.results.records import RecordError
    from suite.results.snapshot import published_ids

    try:
        return published_ids(project.root / "leaderboard")
    except RecordError as exc:
        err_console.print(f"warning: {exc}; the site does not mark which rows the published snapshot lacks",
                          markup=False, soft_wrap=True)
        return None


def report_errors(errors) -> int:
    """One line per error: a newline in a file's name or a value is shown, not printed."""
    for e in errors:
        err_console.print(one_line(str(e)), markup=False, soft_wrap=True)
    return 1 if errors else 0


def executor_classes():
    from suite.execution.executors.base import EXECUTORS

    return [EXECUTORS.get(name) for name in EXECUTORS.names()]


def executor_names() -> list[str]:
    from suite.execution.executors.base import EXECUTORS

    return EXECUTORS.names()


def quiet_libraries() -> None:
    # Lightning's tips and PyTorch's deprecation chatter would bury the progress lines.
    # Lightning sets its loggers' levels when imported, so import it first.
    import lightning  # noqa: F401

    for name in ("lightning", "lightning.pytorch", "lightning.fabric", "lightning_utilities", "lm_eval", "lm-eval"):
        logging.getLogger(name).setLevel(logging.WARNING)
    import datasets

    datasets.disable_progress_bar()  # lm-eval loads each generated test file through datasets
    datasets.utils.logging.set_verbosity_error()
    warnings.filterwarnings("ignore", category=UserWarning, module="lightning")
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message=".*does not have many workers.*")
    warnings.filterwarnings("ignore", message=".*LeafSpec.*")
    warnings.filterwarnings("ignore", message=".*srun.*")  # the local executor's processes are not SLURM tasks
