"""The ``posbench`` command.

    posbench validate PATH...   check spec files without training anything
    posbench plan GRID          the grid's training runs and evaluations, and their status
    posbench run GRID           train and evaluate what is missing, then ingest and render the site
    posbench eval RUN --tasks   lm-eval tasks on one trained run, each an evaluation record
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


def _load_plan(args):
    from .grid import load_plan

    project = _project(args)
    grid, plan = load_plan(Path(args.grid), project)
    return project, grid, plan


def cmd_validate(args) -> int:
    from .grid import check_grid
    from .specs import load_grid, validate_path

    errors = []
    for path in args.paths:
        try:
            kind = validate_path(Path(path), _project(args))
            if kind == "grid":  # the checks that need the registries: evaluators, shared checkpoints
                problems = check_grid(load_grid(Path(path), _project(args)))
                if problems:
                    raise SpecErrors(problems)
            console.print(f"[green]ok[/] {path} ({kind})")
        except SpecErrors as exc:
            errors += exc.errors
    return _report(errors)


def cmd_plan(args) -> int:
    from .records import status_of
    from .runner import eval_path, run_path

    project, grid, plan = _load_plan(args)
    table = Table(title=f"grid {grid.spec.name}: {len(plan.runs)} training runs, {len(plan.evaluations)} evaluations")
    for col in ("run id", "trained as", "evaluated as", "size", "task", "seed", "training", "evaluations"):
        table.add_column(col)
    colors = {"done": "green", "failed": "red", "todo": "yellow"}
    totals = {"done": 0, "todo": 0, "failed": 0}
    trained = {"done": 0, "todo": 0, "failed": 0}
    for run in plan.runs:
        st = status_of(run_path(project, run), "training_run")
        trained[st] += 1
        evals = plan.evaluations_of(run)
        counts = {"done": 0, "todo": 0, "failed": 0}
        for e in evals:
            counts[status_of(eval_path(project, e), "evaluation")] += 1
        for k, v in counts.items():
            totals[k] += v
        shown = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
        names = ", ".join(sorted({e.encoding.name for e in evals if e.encoding.name != run.encoding.name})) or "itself"
        table.add_row(run.run_id, run.encoding.name, names, run.size.name, run.task.name, str(run.seed),
                      f"[{colors[st]}]{st}[/]", shown)
    console.print(table)
    console.print("training runs: " + ", ".join(f"{v} {k}" for k, v in trained.items()))
    console.print("evaluations: " + ", ".join(f"{v} {k}" for k, v in totals.items()))
    return 0


def cmd_run(args) -> int:
    from .executors.local import run_local
    from .runner import pending

    _quiet_libraries()
    project, grid, plan = _load_plan(args)
    work = pending(plan, project, args.retry_failed)
    n_evals = sum(len(v) for v in work.values())
    console.print(f"grid [bold]{grid.spec.name}[/]: {len(plan.runs)} training runs, {len(plan.evaluations)} evaluations; "
                  f"{len(work)} run(s) with work to do, {n_evals} evaluation(s) to run")
    progress = run_local(plan, project, console, retry_failed=args.retry_failed, progress_bar=not args.quiet)
    _ingest_and_render(project, args)
    if progress.failed:
        err_console.print(f"[red]{len(progress.failed)} piece(s) failed[/]; their reasons are in the records and on the site")
    return 1 if progress.failed else 0


def _ingest(project: Project) -> None:
    from .store import ingest

    report = ingest(project.runs, project.evals, project.database)
    for problem in report.problems:
        err_console.print(f"skipped {problem}", markup=False, soft_wrap=True)
    console.print(f"ingested {report.runs} training run(s) and {report.evaluations} evaluation(s) into {project.database}"
                  + (f"; {len(report.problems)} unusable record(s) skipped" if report.problems else ""))


def _ingest_and_render(project: Project, args) -> None:
    from .site import render

    _ingest(project)
    if not getattr(args, "no_site", False):
        index = render(project.database, project.site)
        console.print(f"site: {index}")


def cmd_eval(args) -> int:
    """lm-eval tasks on one trained run: each (task, scale) an evaluation with its own record."""
    from .data.synthetic import TASKS
    from .grid import TrainingRun, evaluations_for
    from .records import RecordError, read_record
    from .registry import did_you_mean
    from .runner import evaluate, report_evaluation
    from .specs import load_encoding
    from .task_kinds import EvalRequest
    from .train import load_checkpoint

    _quiet_libraries()
    project = _project(args)
    checkpoint = project.checkpoints / f"{args.run}.ckpt"
    if not checkpoint.is_file():
        known = [p.stem for p in project.checkpoints.glob("*.ckpt")]
        raise FileNotFoundError(f"no checkpoint {checkpoint}{did_you_mean(args.run, known)}")
    tasks = [t for t in args.tasks.split(",") if t]
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        for t in unknown:
            err_console.print(f"--tasks: unknown task '{t}'{did_you_mean(t, TASKS)}; known: {', '.join(TASKS)}", markup=False)
        return 1
    try:
        run = TrainingRun.from_dict(read_record(project.runs / f"{args.run}.json", "training_run")["run"])
    except RecordError as exc:
        err_console.print(f"error: {exc}", markup=False)
        return 1
    encoding = load_encoding(project.spec_path("encodings", args.encoding, project.root)) if args.encoding else run.encoding
    scales = [int(s) for s in args.scales.split(",")]
    requests = [EvalRequest("lmeval_task", {"task": t, "examples": args.examples}) for t in tasks]
    module = load_checkpoint(checkpoint)
    console.print(f"evaluating {run.label} [dim]{run.run_id}[/] as {encoding.name} on {', '.join(tasks)} at {scales}x")
    for evaluation in evaluations_for(run, [encoding], requests, scales):
        report_evaluation(console, evaluate(evaluation, module, project, log=console.print))
    _ingest_and_render(project, args)
    return 0


def cmd_ingest(args) -> int:
    _ingest(_project(args))
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

    p = sub.add_parser("plan", help="show a grid's training runs and evaluations and their status")
    p.add_argument("grid", metavar="GRID")
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("run", help="train and evaluate what GRID lacks, then ingest and render the site")
    p.add_argument("grid", metavar="GRID")
    p.add_argument("--no-retry-failed", dest="retry_failed", action="store_false", help="leave failed pieces as they are")
    p.add_argument("--no-site", action="store_true", help="ingest but do not render the site")
    p.add_argument("--quiet", action="store_true", help="no per-step training progress bar")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("eval", help="run lm-eval tasks on one trained run; each result is an evaluation record")
    p.add_argument("run", metavar="RUN", help="a training run id (see `posbench plan`)")
    p.add_argument("--tasks", required=True, help="comma-separated synthetic tasks, e.g. copy,passkey")
    p.add_argument("--scales", default="1,2,4,8,16", help="comma-separated scales (default 1,2,4,8,16)")
    p.add_argument("--encoding", help="evaluate as this encoding (a training-free variant of the run's; default: as trained)")
    p.add_argument("--examples", type=int, default=64, help="test examples per task and scale (default 64)")
    p.add_argument("--no-site", action="store_true", help="ingest but do not render the site")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("ingest", help="build results/posbench.duckdb from the records in results/ (idempotent)")
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
    try:
        return args.func(args)
    except SpecErrors as exc:
        return _report(exc.errors)
    except FileNotFoundError as exc:
        err_console.print(f"error: {exc}", markup=False)
        return 1


if __name__ == "__main__":
    sys.exit(main())
