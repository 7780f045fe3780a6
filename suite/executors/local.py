"""The local executor: cells one after another in this process, with progress."""

from __future__ import annotations

from rich.console import Console

from ..cell_runner import run_cell
from ..grid import Cell
from ..specs import Project


def run_local(cells: list[Cell], project: Project, console: Console, progress_bar: bool = True) -> list[dict]:
    records = []
    for i, cell in enumerate(cells, 1):
        console.print(f"[bold]cell {i}/{len(cells)}[/] {cell.label} [dim]{cell.cell_id}[/]")
        record = run_cell(cell, project, progress_bar=progress_bar)
        if record["status"] == "failed":
            console.print(f"  [red]failed[/]: {record['reason']}")
        else:
            console.print(f"  [green]done[/] in {record['provenance']['wall_s']:.1f}s  {summary_line(record)}")
        records.append(record)
    return records


def summary_line(record: dict) -> str:
    """The headline figure at every scale: bpb for language modelling, accuracy for tasks."""
    metric = "bpb" if any(m["metric"] == "bpb" for m in record["metrics"]) else "acc"
    by_scale = {m["scale"]: m["value"] for m in record["metrics"] if m["metric"] == metric and m["task"] == record["task"]}
    shown = "  ".join(f"{s}x={'n/a' if v is None else f'{v:.3f}'}" for s, v in sorted(by_scale.items()))
    glue = next((m["value"] for m in record["metrics"] if m["metric"] == "glue_score"), None)
    return f"{metric} {shown}" + (f"  glue {glue:.3f}" if glue is not None else "")
