"""The local executor: a plan's pending work in this process, with progress."""

from __future__ import annotations

from rich.console import Console

from ..grid import Plan
from ..runner import Progress, run_plan
from ..specs import Project


def run_local(plan: Plan, project: Project, console: Console, retry_failed: bool = True,
              progress_bar: bool = True) -> Progress:
    return run_plan(plan, project, console, retry_failed=retry_failed, progress_bar=progress_bar)
