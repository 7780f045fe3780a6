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
            bpb = {m["scale"]: m["value"] for m in record["metrics"] if m["metric"] == "bpb"}
            shown = "  ".join(f"{s}x={'n/a' if v is None else f'{v:.3f}'}" for s, v in bpb.items())
            console.print(f"  [green]done[/] in {record['provenance']['wall_s']:.1f}s  bpb {shown}")
        records.append(record)
    return records
