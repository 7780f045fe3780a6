"""`posbench ingest`, `site` and `leaderboard`: records into DuckDB, DuckDB into the site and the terminal."""

from __future__ import annotations

import contextlib
from pathlib import Path

from suite.cli.common import console, ingest_records, project_of, render_site
from suite.execution.tuned import sweep_chooser


def cmd_ingest(args) -> int:
    ingest_records(project_of(args))
    return 0


def cmd_site(args) -> int:
    if args.published:
        return site_published(project_of(args), args.published)
    console.print(f"site: {render_site(project_of(args))}")
    return 0


@contextlib.contextmanager
def published_database(project, folder: str):
    """The published snapshot (``leaderboard/``) as a DuckDB file, without training and without
    touching results/: built once per snapshot content into .cache/published/
    (suite.results.snapshot_cache), then read from there; yields (database, SNAPSHOT.json, runs,
    evaluations)."""
    from suite.results.snapshot import read_info
    from suite.results.snapshot_cache import published_database as cached

    source = (project.root / folder).resolve()
    info = read_info(source)
    built = cached(source, project.root / ".cache" / "published")  # a snapshot with any problem: RecordErrors
    yield built.database, info, built.runs, built.evaluations


def site_published(project, folder: str) -> int:
    """Render the published snapshot into site/published/ (its own folder: the site of one's own
    results in site/_build/ stays as it is)."""
    from suite.cli.common import err_console
    from suite.report.site import render

    try:
        with published_database(project, folder) as (database, info, runs, evals):
            index = render(database, project.published_site, snapshot=info)
    except FileNotFoundError as exc:
        err_console.print(str(exc), markup=False)
        return 1
    console.print(f"published snapshot {Path(folder).name}/ ({runs} training runs, {evals} evaluations, commit "
                  f"{(info.get('git_commit') or '?')[:12]}): {index}", markup=False)
    return 0


def cmd_publish(args) -> int:
    """Write the records of GRIDs' plans (of ``--size`` only, when given) into the published
    snapshot folder."""
    from suite.cli.common import err_console
    from suite.plan.grid import load_plan
    from suite.results.snapshot import publish

    project = project_of(args)
    plans, left_out, sizes = {}, {}, set()
    for grid in args.grids:
        loaded, plan = load_plan(Path(grid), project, tuned=sweep_chooser(project))  # a tuned grid's chosen runs too
        sizes |= {s.name for s in loaded.sizes}
        plan = plan.of_sizes(args.size)
        if args.whole_sizes:
            plan, left = plan.at_whole_sizes([s.name for s in loaded.sizes], lambda piece: _recorded(project, piece),
                                             lambda run: _failed(project, run))
            if left:
                left_out[loaded.spec.name] = list(left)
                for size, n in left.items():
                    console.print(f"{grid}: size {size} left out, {n} of its pieces not recorded yet", markup=False)
        plans[loaded.spec.name] = plan
    unknown = [size for size in args.size or [] if size not in sizes]
    for size in unknown:
        err_console.print(f"--size {size[:40]!r} is not a size of {', '.join(args.grids)} ({', '.join(sorted(sizes))})",
                          markup=False)
    if unknown:
        return 1
    out = (project.root / args.out).resolve()
    done = publish(project, plans, out, sizes_left_out=left_out)
    console.print(f"published {done.runs} training runs, {done.evaluations} evaluations, {done.samples} per-sample "
                  f"files of {', '.join(plans)} and {done.bench} bench record(s) into {out} "
                  f"({done.bytes / 2**20:.1f} MiB)", markup=False)
    return 0


def _recorded(project, piece) -> bool:
    """Whether ``project`` holds the record of a planned piece (the path its id gives, as publish reads it)."""
    from suite.execution.runner import eval_path, run_path
    from suite.plan.grid import TrainingRun

    return (run_path(project, piece) if isinstance(piece, TrainingRun) else eval_path(project, piece)).is_file()


def _failed(project, run) -> bool:
    """Whether ``run``'s record in ``project`` says its training failed."""
    from suite.execution.runner import run_path
    from suite.results.records import status_of

    return status_of(run_path(project, run), "training_run") == "failed"


def cmd_leaderboard(args) -> int:
    """The boards of one's own results, or (``--published``) of the published snapshot: the
    same boards the published site shows."""
    from suite.cli.common import err_console
    from suite.report.terminal import leaderboard

    if not args.published:
        return leaderboard(project_of(args).database, args.board, args.format, every=args.all)
    try:
        with published_database(project_of(args), args.published) as (database, *_):
            return leaderboard(database, args.board, args.format, every=args.all)
    except FileNotFoundError as exc:
        err_console.print(str(exc), markup=False)
        return 1


def cmd_rescore(args) -> int:
    """Recompute every task figure from its stored per-sample outputs, without a model, and
    compare it with the figure stored in the record: exit 1 on any difference."""
    from suite.cli.common import err_console
    from suite.results.record_checks import samples_path
    from suite.results.records import scan
    from suite.results.samples import read_samples, rescore

    project = project_of(args)
    records = [r for r in scan(project.evals, "evaluation").records if r.status == "done"]
    wanted = set(args.eval_ids)
    unknown = wanted - {r.eval_id for r in records}
    if unknown:
        err_console.print(f"no finished evaluation record {', '.join(sorted(unknown))} in {project.evals}")
        return 1
    chosen = [r for r in records if r.eval_id in wanted] if wanted else [r for r in records if r.samples]
    without = [r.eval_id for r in chosen if not r.samples]
    if without:
        err_console.print(f"no per-sample outputs for {', '.join(without)} (only task evaluations store them)")
        return 1
    checked = differ = 0
    for record in chosen:
        for result in rescore(list(record.metrics), read_samples(samples_path(project.samples, record.eval_id))):
            checked += 1
            if not result.equal:
                differ += 1
                console.print(f"{record.eval_id} {result.stored.task} {result.stored.metric} at {result.stored.scale}x: "
                              f"stored {result.stored.value!r} +- {result.stored.stderr!r}, from the samples "
                              f"{result.value!r} +- {result.stderr!r}", markup=False)
    console.print(f"rescored {checked} figure(s) of {len(chosen)} evaluation(s) from their samples: "
                  + ("all equal to the stored figures" if not differ else f"{differ} differ"))
    return 1 if differ else 0
