"""The ``posbench`` command.

    posbench validate PATH...   check spec files without training anything
    posbench plan GRID          the grid's cells and their status
    posbench run GRID           run every cell not done yet, then ingest and render the site
    posbench eval CELL --tasks  lm-eval tasks on one trained cell, stored with its record
    posbench ingest             run records -> results/posbench.duckdb
    posbench site               DuckDB -> site/_build/
    posbench leaderboard        the leaderboard as a table in the terminal

Bad input gets ``file:line: field: message`` on stderr and exit code 1, and nothing
is trained or written.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .specs import Project, SpecErrors

# piped or redirected output gets a wide table instead of rich's 80-column default
console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, highlight=False)


def _project(args) -> Project:
    return Project(Path(args.root).resolve())


def _load_cells(args):
    from .grid import cell_status, expand
    from .specs import load_grid

    project = _project(args)
    grid = load_grid(Path(args.grid), project)
    cells = expand(grid)
    return project, grid, cells, {c.cell_id: cell_status(c, project.runs) for c in cells}


def cmd_validate(args) -> int:
    from .specs import validate_path

    errors = []
    for path in args.paths:
        try:
            kind = validate_path(Path(path), _project(args))
            console.print(f"[green]ok[/] {path} ({kind})")
        except SpecErrors as exc:
            errors += exc.errors
    return _report(errors)


def cmd_plan(args) -> int:
    project, grid, cells, status = _load_cells(args)
    table = Table(title=f"grid {grid.spec.name}: {len(cells)} cells x {len(grid.spec.scales)} scales")
    for col in ("cell id", "encoding", "size", "task", "seed", "status", "not applicable at"):
        table.add_column(col)
    from .records import read_record

    colors = {"done": "green", "failed": "red", "todo": "yellow"}
    for cell in cells:
        st = status[cell.cell_id]
        na = ""
        if st == "done":
            rec = read_record(project.runs / f"{cell.cell_id}.json")
            na = ", ".join(f"{m['scale']}x" for m in rec["metrics"] if m["status"] == "not_applicable")
        table.add_row(cell.cell_id, cell.encoding.name, cell.size.name, cell.task.name, str(cell.seed),
                      f"[{colors.get(st, 'white')}]{st}[/]", na)
    console.print(table)
    counts = {s: list(status.values()).count(s) for s in ("done", "todo", "failed")}
    console.print(", ".join(f"{v} {k}" for k, v in counts.items()))
    return 0


def cmd_run(args) -> int:
    from .executors.local import run_local

    project, grid, cells, status = _load_cells(args)
    todo = [c for c in cells if status[c.cell_id] == "todo" or (status[c.cell_id] == "failed" and args.retry_failed)]
    console.print(f"grid [bold]{grid.spec.name}[/]: {len(cells)} cells, {len(cells) - len(todo)} done, {len(todo)} to run")
    records = run_local(todo, project, console, progress_bar=not args.quiet) if todo else []
    _ingest_and_render(project, args)
    failed = [r for r in records if r["status"] == "failed"]
    if failed:
        err_console.print(f"[red]{len(failed)} cell(s) failed[/]; their reasons are in the records and on the site")
    return 1 if failed else 0


def _ingest_and_render(project: Project, args) -> None:
    from .site import render
    from .store import ingest

    n = ingest(project.runs, project.database)
    console.print(f"ingested {n} record(s) into {project.database}")
    if not getattr(args, "no_site", False):
        index = render(project.database, project.site)
        console.print(f"site: {index}")


def cmd_eval(args) -> int:
    """lm-eval on one trained cell; the rows join the cell's record, then ingest and render."""
    from .data.synthetic import TASKS
    from .records import read_record, write_record
    from .registry import did_you_mean
    from .evaluation.lmeval_tasks import evaluate_tasks
    from .train import load_checkpoint

    project = _project(args)
    checkpoint = Path(args.cell) if args.cell.endswith(".ckpt") else project.checkpoints / f"{args.cell}.ckpt"
    if not checkpoint.is_file():
        known = [p.stem for p in project.checkpoints.glob("*.ckpt")]
        raise FileNotFoundError(f"no checkpoint {checkpoint}{did_you_mean(args.cell, known)}")
    tasks = [t for t in args.tasks.split(",") if t]
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        for t in unknown:
            err_console.print(f"--tasks: unknown task '{t}'{did_you_mean(t, TASKS)}; known: {', '.join(TASKS)}", markup=False)
        return 1
    module = load_checkpoint(checkpoint)
    cell = module.cell
    scales = [int(s) for s in args.scales.split(",")] if args.scales else list(cell.scales)
    console.print(f"evaluating {cell.label} [dim]{cell.cell_id}[/] on {', '.join(tasks)} at {scales}x")
    rows = evaluate_tasks(module.model, cell.train.seq_len, tasks, scales, n=args.examples, seed=cell.seed,
                          workdir=project.results / "lmeval" / cell.cell_id, batch_size=cell.eval.batch_size)
    for row in rows:
        if row["metric"] == "acc":
            console.print(f"  {row['task']:<16} {row['scale']:>3}x  acc {_fmt(row['value'])}")
    record_path = project.runs / f"{cell.cell_id}.json"
    if record_path.is_file():
        record = read_record(record_path)
        replaced = {(r["task"], r["metric"], r["scale"]) for r in rows}
        record["metrics"] = [m for m in record["metrics"] if (m["task"], m["metric"], m["scale"]) not in replaced] + rows
        write_record(record, project.runs)
        _ingest_and_render(project, args)
    else:
        console.print(f"[yellow]no run record {record_path}: figures printed, not stored[/]")
    return 0


def cmd_ingest(args) -> int:
    from .store import ingest

    project = _project(args)
    n = ingest(project.runs, project.database)
    console.print(f"ingested {n} record(s) into {project.database}")
    return 0


def cmd_site(args) -> int:
    from .site import render

    project = _project(args)
    console.print(f"site: {render(project.database, project.site)}")
    return 0


def cmd_leaderboard(args) -> int:
    from .site import attach_glue, glue_boards, leaderboard_rows
    from .store import connect_readonly

    project = _project(args)
    with connect_readonly(project.database) as con:
        boards = leaderboard_rows(con)
        attach_glue(boards, glue_boards(con))
    for board in boards:
        table = Table(title=f"{board['title']}: bits per byte (lower is better); ratios are on the site")
        table.add_column("encoding")
        for s in board["scales"]:
            table.add_column(f"{s}x bpb", justify="right")
        table.add_column("extrap. score", justify="right")
        table.add_column("eff. length", justify="right")
        if board["has_glue"]:
            table.add_column("GLUE-style", justify="right")
        for row in board["rows"]:
            cells = [row["display_name"]]
            cells += [_fmt(row["value"].get(s)) for s in board["scales"]]
            cells += [_fmt(row["extrapolation_score"], 2),
                      "n/a" if row["effective_length"] is None else f"{row['effective_length']}x"]
            cells += [_fmt(row["glue_score"])] if board["has_glue"] else []
            table.add_row(*cells)
        console.print(table)
    if not boards:
        console.print("no results yet: run `posbench run grids/quick.yaml`")
    return 0


def _fmt(value, digits=3) -> str:
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}"


def _report(errors) -> int:
    for e in errors:
        err_console.print(str(e), markup=False, soft_wrap=True)
    return 1 if errors else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="posbench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.environ.get("POSBENCH_ROOT", "."),
                        help="project root holding encodings/, grids/, results/ (default: current directory)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("validate", help="check spec files (encodings, grids, sizes, tasks) without training")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("plan", help="show a grid's cells and their status (done / todo / failed / not applicable)")
    p.add_argument("grid", metavar="GRID")
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("run", help="run every cell of GRID not done yet, then ingest and render the site")
    p.add_argument("grid", metavar="GRID")
    p.add_argument("--no-retry-failed", dest="retry_failed", action="store_false", help="leave failed cells as they are")
    p.add_argument("--no-site", action="store_true", help="ingest but do not render the site")
    p.add_argument("--quiet", action="store_true", help="no per-step training progress bar")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("eval", help="run lm-eval tasks on one trained cell and store the results with its record")
    p.add_argument("cell", metavar="CELL", help="a cell id (results/checkpoints/CELL.ckpt) or a checkpoint path")
    p.add_argument("--tasks", required=True, help="comma-separated synthetic tasks, e.g. copy,passkey")
    p.add_argument("--scales", help="comma-separated scales (default: the cell's grid scales)")
    p.add_argument("--examples", type=int, default=64, help="test examples per task and scale (default 64)")
    p.add_argument("--no-site", action="store_true", help="ingest but do not render the site")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("ingest", help="build results/posbench.duckdb from results/runs/*.json (idempotent)")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("site", help="render the static leaderboard site into site/_build/")
    p.set_defaults(func=cmd_site)

    p = sub.add_parser("leaderboard", help="print the leaderboard in the terminal")
    p.set_defaults(func=cmd_leaderboard)
    return parser


def _quiet_libraries() -> None:
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


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "quiet", False):
        os.environ["TQDM_DISABLE"] = "1"  # also lm-eval's request bars
    _quiet_libraries()
    try:
        return args.func(args)
    except SpecErrors as exc:
        return _report(exc.errors)
    except FileNotFoundError as exc:
        err_console.print(f"error: {exc}", markup=False)
        return 1


if __name__ == "__main__":
    sys.exit(main())
