"""The ``posbench`` command.

    posbench validate PATH...   check spec files without training anything (--import: load and run plugin code)
    posbench new-encoding NAME  write a spec, an implementation skeleton and its test (see CONTRIBUTING.md)
    posbench verify RECORD      re-train a run record and compare its figures within stated tolerances
    posbench plan GRID          the grid's training runs and evaluations, and their status
    posbench run GRID           train and evaluate what is missing, then ingest and render the site
                                (--executor slurm: submit it as one job array and return)
    posbench run-one MANIFEST I one entry of a submitted manifest (a SLURM array task)
    posbench status GRID        done / running / pending / failed, and the SLURM arrays (--ingest)
    posbench eval RUN --tasks   lm-eval tasks on one trained run, each an evaluation record
    posbench ingest             run records -> results/posbench.duckdb
    posbench site               DuckDB -> site/_build/
    posbench leaderboard        the leaderboard as a table in the terminal
    posbench bench              what each encoding costs: training and evaluation speed, memory, MFU

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

from suite.specs import Project, SpecErrors

# piped or redirected output gets a wide table instead of rich's 80-column default
console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, highlight=False)


def _project(args) -> Project:
    return Project(Path(args.root).resolve())


def _load_plan(args):
    from suite.plan.grid import load_plan

    project = _project(args)
    grid, plan = load_plan(Path(args.grid), project)
    return project, grid, plan


def cmd_validate(args) -> int:
    """Check spec files; without --import no code from outside the package runs."""
    import contextlib

    from suite.plan.grid import check_grid
    from suite.core.registry import no_imports
    from suite.plan.limits import unchecked
    from suite.specs import validate_path

    project, errors = _project(args), []
    for path in args.paths:
        with contextlib.nullcontext() if args.import_code else no_imports():
            try:
                kind, spec = validate_path(Path(path), project)
                if kind == "grid":  # the checks that need the registries: evaluators, limits, shared checkpoints
                    problems = check_grid(spec)
                    if problems:
                        raise SpecErrors(problems)
                skipped = unchecked(spec.encodings if kind == "grid" else [spec] if kind == "encoding" else [])
                extra = _submission_checks(spec) if args.import_code and kind == "encoding" else ""
            except SpecErrors as exc:
                errors += exc.errors
                continue
        note = f"; params of {', '.join(skipped)} not checked: run with --import" if skipped else ""
        console.print(f"[green]ok[/] {path} ({kind}{note}){extra}", soft_wrap=True)
    return _report(errors)


def _submission_checks(spec) -> str:
    """The contract checks and a CPU smoke run of an imported encoding (suite.submission.contract)."""
    from suite.submission.contract import CHECKS, contract_problems, smoke_run
    from suite.core.yamldoc import read_yaml

    doc = read_yaml(Path(spec.source))
    problems = [doc.error(("impl",), p) for p in contract_problems(spec)]
    if problems:
        raise SpecErrors(problems)
    try:
        smoke = smoke_run(spec)
    except Exception as exc:
        raise SpecErrors([doc.error(("impl",), f"smoke run: {type(exc).__name__}: {exc}")]) from None
    bpb = ", ".join(f"{s}x {'n/a' if v is None else format(v, '.3f')}" for s, v in smoke.bpb.items())
    return (f"\n  contract: {len(CHECKS)} checks passed\n  smoke run: trained 20 steps with suite.training.fit.fit in "
            f"{smoke.wall_s:.1f}s (final loss {smoke.final_loss:.3f}); held-out bits per byte {bpb}")


def cmd_plan(args) -> int:
    from suite.plan.estimate import estimate
    from suite.results.records import status_of
    from suite.execution.runner import eval_path, run_path

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
    cost = estimate(plan.runs, plan.evaluations)
    console.print("estimated GPU cost of the whole grid (from FLOPs and a vendor peak at an assumed MFU, "
                  "not measured: suite/plan/estimate.py): " + "; ".join(cost.lines()), markup=False)
    return 0


def cmd_run(args) -> int:
    from suite.execution.executors import EXECUTORS
    from suite.execution.runner import failed_pieces, pending

    _quiet_libraries()
    project, grid, plan = _load_plan(args)
    work = pending(plan, project, args.retry_failed)
    n_evals = sum(len(v) for v in work.values())
    console.print(f"grid [bold]{grid.spec.name}[/]: {len(plan.runs)} training runs, {len(plan.evaluations)} evaluations; "
                  f"{len(work)} run(s) with work to do, {n_evals} evaluation(s) to run")
    executor = EXECUTORS.get(args.executor)()
    code = executor.run(plan, project, console, args)
    if executor.submits:  # handed to a scheduler: the records arrive later (`posbench status GRID --ingest`)
        return code
    if not args.no_ingest:
        _ingest_and_render(project, args)
    failed = failed_pieces(plan, project)
    if failed:
        err_console.print(f"[red]{failed} piece(s) failed[/]; their reasons are in the records and on the site; "
                          "`posbench run --retry-failed` tries them again")
    return 1 if failed or code else 0


def _ingest(project: Project) -> None:
    from suite.results.store import ingest

    report = ingest(project.runs, project.evals, project.database)
    for problem in report.problems:
        err_console.print(f"skipped {problem}", markup=False, soft_wrap=True)
    console.print(f"ingested {report.runs} training run(s) and {report.evaluations} evaluation(s) into {project.database}"
                  + (f"; {len(report.problems)} unusable record(s) skipped" if report.problems else ""))


def _ingest_and_render(project: Project, args) -> None:
    _ingest(project)
    if not getattr(args, "no_site", False):
        console.print(f"site: {_render(project)}")


def _render(project: Project) -> Path:
    """Render the site; concurrent processes take turns (an advisory lock beside the site)."""
    import fcntl

    from suite.report.site import render

    project.site.parent.mkdir(parents=True, exist_ok=True)
    with open(project.site.parent / ".render.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return render(project.database, project.site)


def cmd_eval(args) -> int:
    """lm-eval tasks on one trained run: each (task, scale) an evaluation with its own record."""
    from suite.data.synthetic import TASKS
    from suite.plan.grid import TrainingRun, evaluations_for
    from suite.results.records import RecordError, read_record
    from suite.core.registry import did_you_mean
    from suite.execution.runner import evaluate, report_evaluation
    from suite.specs import load_encoding
    from suite.plan.task_kinds import EvalRequest
    from suite.training.fit import load_checkpoint

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
    console.print(f"site: {_render(_project(args))}")
    return 0


def cmd_leaderboard(args) -> int:
    from suite.report.terminal import leaderboard

    return leaderboard(_project(args).database, args.board, args.format)


def cmd_bench(args) -> int:
    """Time and measure encodings in this process (suite.bench.run); a record in results/bench/."""
    from suite.bench.run import DEFAULT_ENCODINGS, BenchConfig, run_bench, tables, write_bench_record

    _quiet_libraries()
    project = _project(args)
    cfg = BenchConfig(encodings=tuple(e for e in (args.encodings or ",".join(DEFAULT_ENCODINGS)).split(",") if e),
                      size=args.size, seq_len=args.seq_len, batch=args.batch, device=args.device, steps=args.steps,
                      warmup=args.warmup, scales=tuple(int(s) for s in args.scales.split(",")),
                      eval_batch=args.eval_batch, eval_repeats=args.eval_repeats, query_chunk=args.query_chunk,
                      threads=args.threads, compile=args.compile)
    record = run_bench(cfg, project, log=lambda m: console.print(m, markup=False))
    for table in tables(record):
        console.print(table)
    console.print(f"record: {write_bench_record(record, project.results / 'bench')}")
    return 0


def _report(errors) -> int:
    for e in errors:
        err_console.print(str(e), markup=False, soft_wrap=True)
    return 1 if errors else 0


def build_parser() -> argparse.ArgumentParser:
    from suite.cli.cluster import cmd_run_one, cmd_status  # their modules import this one
    from suite.cli.submit import cmd_new_encoding, cmd_verify

    parser = argparse.ArgumentParser(prog="posbench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.environ.get("POSBENCH_ROOT", "."),
                        help="project root holding encodings/, grids/, results/ (default: current directory)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("validate", help="check spec files (encodings, grids, sizes, tasks) without training")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--import", dest="import_code", action="store_true",
                   help="import external implementations (module:Class, file.py:Class) and check them; for an "
                        "encoding file also run the plugin contract and a CPU smoke run")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("new-encoding", help="write a spec, an implementation skeleton and a test for a new encoding")
    p.add_argument("name", metavar="NAME", help="the encoding's name (lower case, digits, '-' and '_')")
    p.add_argument("--family", required=True, choices=("rotary", "bias", "absolute", "contextual"),
                   help="which hook the skeleton implements")
    p.set_defaults(func=cmd_new_encoding)

    p = sub.add_parser("verify", help="re-train a training-run record (and re-run its evaluations) and compare the figures")
    p.add_argument("record", metavar="RECORD", help="results/runs/<run_id>.json, or a run id")
    p.add_argument("--no-evals", action="store_true", help="compare the training loss only")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("plan", help="show a grid's training runs and evaluations and their status")
    p.add_argument("grid", metavar="GRID")
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("run", help="train and evaluate what GRID lacks, then ingest and render the site")
    p.add_argument("grid", metavar="GRID")
    p.add_argument("--retry-failed", action="store_true", help="train and evaluate failed pieces again")
    p.add_argument("--no-site", action="store_true", help="ingest but do not render the site")
    p.add_argument("--no-ingest", action="store_true", help="write records only (workers; ingest once at the end)")
    p.add_argument("--quiet", action="store_true", help="no per-step training progress bar")
    p.add_argument("--executor", default="local", choices=_executor_names(), help="where pieces run (default local)")
    for executor in _executor_classes():
        executor.add_arguments(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("run-one", help="one entry of a submitted manifest (what a SLURM array task runs)")
    p.add_argument("manifest", metavar="MANIFEST", help="results/slurm/<timestamp>/manifest.json")
    p.add_argument("index", metavar="INDEX", type=int, help="the entry: $SLURM_ARRAY_TASK_ID")
    p.add_argument("--devices", type=int, default=1,
                   help="train with DDP over N devices (CPU processes, or GPUs) per node (default 1); sets POSBENCH_DEVICES")
    p.add_argument("--nodes", type=int, default=1, help="nodes the run trains across (default 1); sets POSBENCH_NODES")
    p.set_defaults(func=cmd_run_one)

    p = sub.add_parser("status", help="done / running / pending / failed pieces of GRID, and its SLURM arrays")
    p.add_argument("grid", metavar="GRID")
    p.add_argument("--ingest", action="store_true", help="then build results/posbench.duckdb from the records")
    p.set_defaults(func=cmd_status)

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

    p = sub.add_parser("leaderboard", help="print every board of the leaderboard in the terminal")
    p.add_argument("--board", metavar="NAME", help="print only this board (its name is printed above each board)")
    p.add_argument("--format", default="table", choices=("table", "csv", "markdown"), help="output format (default table)")
    p.set_defaults(func=cmd_leaderboard)

    p = sub.add_parser("bench", help="measure what each encoding costs (training and evaluation speed, memory, MFU)")
    p.add_argument("--encodings", help="comma-separated encoding specs (default: nope,rope,alibi,t5,kerple-log,fire,"
                                       "sandwich,cope,xpos,addrope); NoPE is always measured, for the ratios")
    p.add_argument("--size", help="a size in sizes/ (default: d_model 256, 4 layers, 4 heads, d_ff 1024)")
    p.add_argument("--seq-len", type=int, default=256, help="training length T (default 256)")
    p.add_argument("--batch", type=int, default=16, help="training batch (default 16)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    p.add_argument("--steps", type=int, default=3, help="timed training steps per loop (default 3; 0: no training)")
    p.add_argument("--warmup", type=int, default=1, help="untimed training steps first (default 1)")
    p.add_argument("--scales", default="1,4,16", help="evaluation lengths as multiples of T (default 1,4,16)")
    p.add_argument("--eval-batch", type=int, default=1, help="sequences per evaluation forward (default 1)")
    p.add_argument("--eval-repeats", type=int, default=1, help="timed evaluation forwards per scale (default 1)")
    p.add_argument("--query-chunk", type=int, help="queries per chunk in long evaluation (default: the model's; 0: never)")
    p.add_argument("--threads", type=int, help="torch threads (default: torch's; 1 is steadier on a shared machine)")
    p.add_argument("--compile", action="store_true", help="torch.compile the model, as a recipe's compile: true")
    p.set_defaults(func=cmd_bench)
    return parser


def _executor_classes():
    from suite.execution.executors import EXECUTORS

    return [EXECUTORS.get(name) for name in EXECUTORS.names()]


def _executor_names() -> list[str]:
    from suite.execution.executors import EXECUTORS

    return EXECUTORS.names()


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
