"""`posbench plan`, `run` and `eval`: a grid's work, shown, run, or extended by lm-eval tasks."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from suite.cli.common import console, err_console, ingest_and_render, load_grid_plan, project_of, quiet_libraries
from suite.execution.tuned import sweep_chooser


def cmd_plan(args) -> int:
    from suite.plan.estimate import estimate
    from suite.results.records import status_of
    from suite.execution.runner import eval_path, run_path

    project, grid, plan = load_grid_plan(args)
    if not known_sizes(args, grid):
        return 1
    plan = plan.of_sizes(args.size)
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
        trained_as = run.encoding.name if run.parent is None else \
            f"{run.encoding.name} [dim](from {run.parent.run_id}, {run.extension_factor:g}x L)[/]"
        table.add_row(run.run_id, trained_as, names, run.size.name, run.task.name, str(run.seed),
                      f"[{colors[st]}]{st}[/]", shown)
    console.print(table)
    console.print("training runs: " + ", ".join(f"{v} {k}" for k, v in trained.items()))
    console.print("evaluations: " + ", ".join(f"{v} {k}" for k, v in totals.items()))
    if plan.pending:
        console.print(f"{len(plan.pending)} group(s) wait for their learning-rate sweep (shown above); their runs at "
                      f"every seed are planned once it has chosen: {', '.join(plan.pending)}", markup=False)
    for group in plan.untunable:
        console.print(f"{group}: every learning rate of its sweep failed; it has no runs", markup=False)
    whole = plan
    if plan.pending:  # the runs that wait cost what they will whichever rate is chosen: count them too
        from suite.plan.grid import expand

        whole = expand(grid, tuned=lambda sweep: sweep[0].train.lr)
        whole = whole.of_sizes(args.size)
        console.print(f"the estimate below counts the {len(whole.runs) - len(plan.runs)} run(s) that wait for their "
                      "sweep too", markup=False)
    of = f"the pieces of size {', '.join(args.size)}" if args.size else "the whole grid"
    console.print(estimate(whole.runs, whole.evaluations, grid.spec.device).headline(of), markup=False)
    return 0


def known_sizes(args, grid) -> bool:
    """Whether every ``--size`` names a size of the grid; one message for each that does not."""
    from suite.core.registry import did_you_mean

    known = [s.name for s in grid.sizes]
    unknown = [s for s in getattr(args, "size", None) or [] if s not in known]
    for name in unknown:
        err_console.print(f"{args.grid}: --size {name[:40]!r} is not a size of the grid ({', '.join(known)})"
                          f"{did_you_mean(name, known)}", markup=False)
    return not unknown


def cmd_run(args) -> int:
    from suite.execution.executors.base import EXECUTORS
    from suite.execution.runner import failed_pieces, pending
    from suite.plan.grid import load_plan

    quiet_libraries()  # (a bad POSBENCH_RESUME_EVERY_S is refused before this: suite.cli.main)
    if args.dry_run and args.executor != "slurm":  # it would be ignored, and the whole grid would run
        err_console.print("--dry-run writes a SLURM submission without submitting it (with --executor slurm); "
                          "`posbench plan GRID` shows what a local run would do")
        return 1
    project, grid, plan = load_grid_plan(args)
    sizes = getattr(args, "size", None)
    if not known_sizes(args, grid):
        return 1
    plan = plan.of_sizes(sizes)
    if args.with_published:
        from suite.results.snapshot import unpack

        runs, evals = unpack(project.root / args.with_published, project)
        console.print(f"published snapshot {args.with_published}/: {runs} training run(s) and {evals} evaluation(s) "
                      "added to results/ (they count as done)")
    work = pending(plan, project, args.retry_failed)
    n_evals = sum(len(v) for v in work.values())
    console.print(f"grid [bold]{grid.spec.name}[/]: {len(plan.runs)} training runs, {len(plan.evaluations)} evaluations; "
                  f"{len(work)} run(s) with work to do, {n_evals} evaluation(s) to run")
    executor = EXECUTORS.get(args.executor)()
    code = executor.run(plan, project, console, args)
    if executor.submits:  # handed to a scheduler: the records arrive later (`posbench status GRID --ingest`)
        if plan.pending:
            console.print(f"{len(plan.pending)} group(s) wait for their learning-rate sweep (suite.plan.tuning): "
                          "submit the grid again once the sweep's records are in")
        return code
    # a tuned grid: the sweeps just trained choose the rates of the runs that waited (a --jobs
    # worker runs one round: this command starts the next)
    while plan.pending and not getattr(args, "one_round", False):
        waiting = len(plan.pending)
        _, plan = load_plan(Path(args.grid), project, tuned=sweep_chooser(project))
        plan = plan.of_sizes(sizes)
        if len(plan.pending) >= waiting:
            break  # a sweep that did not finish (a failure without a record): its group stays pending
        console.print(f"learning rates chosen for {waiting - len(plan.pending)} group(s): their runs at every seed")
        code = executor.run(plan, project, console, args) or code
    for group in plan.untunable:
        err_console.print(f"[red]{group}[/]: every learning rate of its sweep failed; it has no runs")
    if not args.no_ingest:
        ingest_and_render(project, args)
    failed = failed_pieces(plan, project)
    if failed:
        err_console.print(f"[red]{failed} piece(s) failed[/]; their reasons are in the records and on the site; "
                          "`posbench run --retry-failed` tries them again")
    return 1 if failed or code else 0


def parse_scales(text: str) -> list[int]:
    """``--scales 1,2,4``: distinct whole multiples of the training length, 1 to MAX_SCALE; ValueError
    naming the first that is not (a 0 or a -1 would write failed records, not be refused)."""
    from suite.specs.base import MAX_SCALE

    scales = []
    for part in text.split(","):
        if not part.strip().isdigit() or not 1 <= int(part) <= MAX_SCALE:
            raise ValueError(f"{part.strip()[:40]!r} is not a whole number from 1 to {MAX_SCALE}")
        if int(part) not in scales:
            scales.append(int(part))
    return scales


def cmd_eval(args) -> int:
    """lm-eval tasks on one trained run: each (task, scale) an evaluation with its own record."""
    from suite.data.synthetic import TASKS
    from suite.plan.grid import TrainingRun, evaluations_for
    from suite.results.records import RecordError, read_record
    from suite.core.registry import did_you_mean
    from suite.execution.runner import evaluate, report_evaluation
    from suite.specs import load_encoding
    from suite.plan.task_kinds import EvalRequest
    from suite.training.checkpoints import load_checkpoint

    try:  # the arguments first: nothing is read before they are known to be sound
        scales = parse_scales(args.scales)
    except ValueError as exc:
        err_console.print(f"--scales: {exc}", markup=False)
        return 1
    quiet_libraries()
    project = project_of(args)
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
    from suite.specs.project_code import check_record_code, check_record_data

    try:
        record = read_record(project.runs / f"{args.run}.json", "training_run")
        check_record_code(record.run, project.root, "run")  # a record chooses no code: before anything is imported
        check_record_data(record.run, project.root, "run")  # nor the data it reads
        run = TrainingRun.from_dict(record.run)
    except (RecordError, ValueError) as exc:
        err_console.print(f"error: {exc}", markup=False)
        return 1
    encoding = load_encoding(project.spec_path("encodings", args.encoding, project.root)) if args.encoding else run.encoding
    requests = [EvalRequest("lmeval_task", {"task": t, "examples": args.examples}) for t in tasks]
    try:
        module = load_checkpoint(checkpoint)
    except Exception as exc:  # truncated, corrupt, not a checkpoint: whatever torch or Lightning raises
        first = (str(exc).splitlines() or [""])[0][:300]  # torch's messages run over many lines
        err_console.print(f"error: {checkpoint}: cannot be read ({type(exc).__name__}: {first}); `posbench run` of "
                          "its grid trains the run again", markup=False, soft_wrap=True)
        return 1
    console.print(f"evaluating {run.label} [dim]{run.run_id}[/] as {encoding.name} on {', '.join(tasks)} at {scales}x")
    for evaluation in evaluations_for(run, [encoding], requests, scales):
        report_evaluation(console, evaluate(evaluation, module, project, log=console.print))
    ingest_and_render(project, args)
    return 0
