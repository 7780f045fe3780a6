"""The submission commands of `posbench`: new-encoding, verify and submit."""

from __future__ import annotations

import json
from pathlib import Path

from suite.cli.common import console, err_console, project_of, quiet_libraries


def cmd_new_encoding(args) -> int:
    from suite.submission.scaffold import ScaffoldError, new_encoding

    try:
        written = new_encoding(project_of(args), args.name, args.family)
    except ScaffoldError as exc:
        err_console.print(f"error: {exc}", markup=False, soft_wrap=True)
        return 1
    for path in written:
        console.print(f"wrote {path}", markup=False, soft_wrap=True)
    spec, test = (p.relative_to(project_of(args).root) for p in (written[0], written[2]))
    console.print(f"next: cite the paper in {spec} (its `paper:` is a placeholder `validate` refuses) and edit the "
                  f"implementation, then `posbench validate --import {spec}` and "
                  f"`python -m pytest {test}`; see CONTRIBUTING.md", markup=False, soft_wrap=True)
    return 0


def cmd_verify(args) -> int:
    from suite.core import numerics
    from suite.results.records import read_record
    from suite.submission.verify import RecordError, numerics_of, record_path, verify

    quiet_libraries()
    project = project_of(args)
    path = record_path(args.record, project)
    try:
        if not path.exists():
            _add_the_published_records(project)
        wanted = numerics_of(read_record(path, "training_run"))
        if wanted != numerics.requested():  # ATen's SIMD level is fixed at a process's first kernel
            return _verify_in_a_process_with(wanted, args, project, path)
        result = verify(path, project, evaluations=not args.no_evals,
                        log=lambda line: console.print(line, markup=False, soft_wrap=True))
    except (RecordError, ValueError) as exc:
        err_console.print(f"error: {exc}", markup=False, soft_wrap=True)
        return 1
    if args.json:
        Path(args.json).write_text(json.dumps(result.summary(), indent=1) + "\n")
    for line in result.lines:
        console.print(line, markup=False, soft_wrap=True)
    verdict = "MISMATCH" if result.mismatches else "match"
    console.print(f"{verdict}: {result.matched} of {result.compared} figure(s) match, {result.identical} bit for bit"
                  + (f"; {result.mismatches} problem(s)" if result.mismatches else ""), markup=False, soft_wrap=True)
    if result.numerics_differ:
        console.print("the re-run's numerics differ from the record's: " + "; ".join(result.numerics_differ),
                      markup=False, soft_wrap=True)
    console.print(f"machine class: {result.machine_class}" + ("" if result.machine_class.startswith("the same") else
                  ": figures are compared within the measured cross-class tolerances (suite/results/tolerances.yaml)"),
                  markup=False, soft_wrap=True)
    return 1 if result.mismatches else 0


def _add_the_published_records(project) -> None:
    """A run that is not in results/ may be a published one (a fresh clone has only leaderboard/):
    the snapshot's records are added to results/ first, as ``run --with-published`` adds them
    (checked whole before anything is written; a record already there is kept)."""
    from suite.results.snapshot import unpack

    folder = project.root / "leaderboard"
    if (folder / "SNAPSHOT.json").is_file():
        runs, evals = unpack(folder, project)
        console.print(f"not in results/: added the published snapshot's records first (leaderboard/: {runs} training "
                      f"run(s), {evals} evaluation(s) written)", markup=False, soft_wrap=True)


def _verify_in_a_process_with(wanted, args, project, path) -> int:
    """``posbench verify`` again, in a process that exports the record's numerics first."""
    import os
    import subprocess
    import sys

    from suite.core import numerics

    console.print(f"re-running in a process with the record's numerics: {numerics.describe(wanted)}",
                  markup=False, soft_wrap=True)
    command = [sys.executable, "-m", "suite.cli.main", "--root", str(project.root), "verify", str(path)]
    command += ["--no-evals"] if args.no_evals else []
    command += ["--json", str(Path(args.json).resolve())] if args.json else []
    return subprocess.run(command, env={**os.environ, **wanted.variables()}).returncode


def cmd_replicate(args) -> int:
    """Exit 0 when every sampled piece reproduces (bit for bit or within tolerance) and every
    headline holds; 1 otherwise."""
    from suite.results.records import RecordError
    from suite.submission.replicate import DIFFERENT, FAILED, IDENTICAL, WITHIN, replicate

    quiet_libraries()
    if args.sample < 1:
        err_console.print("error: --sample must be at least 1", markup=False)
        return 1
    project = project_of(args)
    folder = (project.root / args.snapshot).resolve()
    try:
        result = replicate(folder, project, args.sample, args.seed, args.cheapest,
                           set(args.grids) if args.grids else None, this_cpu=args.cpu == "this",
                           log=lambda line: console.print(line, markup=False, soft_wrap=True))
    except (FileNotFoundError, RecordError, ValueError) as exc:
        err_console.print(f"error: {exc}", markup=False, soft_wrap=True)
        return 1
    n = len(result.outcomes)
    console.print(f"{result.count(IDENTICAL)} of {n} piece(s) bit-identical, {result.count(WITHIN)} within tolerance, "
                  f"{result.count(DIFFERENT)} different, {result.count(FAILED)} could not be re-run",
                  markup=False, soft_wrap=True)
    known = 0
    changed_claims = {board for board, *_ in result.headlines_changed}
    for board, before, after in result.headlines:
        state = ("holds" if before == after
                 else f"holds, its quoted figures moved: {after}" if board not in changed_claims
                 else f"CHANGED to: {after or 'no headline'}")
        if board in changed_claims and result.stated(board):
            known += 1
            state += " (the board says it is arithmetic-sensitive or does not hold on this machine class)"
        console.print(f"headline {board}: {before or 'none'}: {state}", markup=False, soft_wrap=True)
    changed = len(result.headlines_changed)
    console.print(f"headlines: {len(result.headlines) - changed} hold, {changed} changed"
                  + (f", {known} of them as their boards state for this machine class" if known else ""),
                  markup=False)
    if args.json:
        Path(args.json).write_text(json.dumps(result.as_json(), indent=1, sort_keys=True))
    bad = result.count(DIFFERENT) + result.count(FAILED) + changed - known
    return 1 if bad else 0


def cmd_submit(args) -> int:
    """Write submissions/NAME/: spec, plugin, tests, the encoding's records and a verify result."""
    from suite.submission.bundle import SubmitError, submit

    quiet_libraries()
    project = project_of(args)
    try:
        bundle = submit(project, args.name, verify_log=lambda line: None, grid=args.grid)
    except SubmitError as exc:
        err_console.print(f"error: {exc}", markup=False, soft_wrap=True)
        return 1
    console.print(f"{bundle.folder}: {bundle.runs} training run(s), {bundle.evaluations} evaluation(s); verify: "
                  f"{'reproduced' if bundle.verified else 'NOT reproduced (see verify.txt)'}", markup=False)
    for path in bundle.files:
        console.print(f"  {path.relative_to(project.root)}", markup=False)
    console.print("open a pull request with this folder (CONTRIBUTING.md, 'Submit')", markup=False)
    return 0 if bundle.verified or not bundle.runs else 1
