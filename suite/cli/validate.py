"""`posbench validate`: spec files checked without training anything."""

from __future__ import annotations

from pathlib import Path

from suite.specs import SpecErrors

from suite.cli.common import console, project_of, quiet_libraries, report_errors


def cmd_validate(args) -> int:
    """Check spec files; without --import no code from outside the package runs."""
    import contextlib

    from suite.plan.checks import check_grid
    from suite.core.registry import no_imports
    from suite.plan.limits import unchecked
    from suite.specs import validate_path

    project, errors = project_of(args), []
    if args.import_code:
        quiet_libraries()  # the smoke run trains with Lightning: its tips would bury the report
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
    return report_errors(errors)


def _submission_checks(spec) -> str:
    """The contract checks and a CPU smoke run of an imported encoding (suite.submission.contract)."""
    from suite.submission.contract import CHECKS, contract_problems, smoke_run
    from suite.core.yamldoc import read_yaml

    doc = read_yaml(Path(spec.source))
    from suite.submission.weights import weight_problem

    problems = [doc.error(("impl",), p) for p in contract_problems(spec)]
    if weight := weight_problem(spec):
        problems.append(doc.error(("kind",), weight))
    if problems:
        raise SpecErrors(problems)
    try:
        smoke = smoke_run(spec)
    except Exception as exc:
        raise SpecErrors([doc.error(("impl",), f"smoke run: {type(exc).__name__}: {exc}")]) from None
    bpb = ", ".join(f"{s}x {'n/a' if v is None else format(v, '.3f')}" for s, v in smoke.bpb.items())
    return (f"\n  contract: {len(CHECKS)} checks passed\n  smoke run: trained 20 steps with suite.training.fit.fit in "
            f"{smoke.wall_s:.1f}s (final loss {smoke.final_loss:.3f}); held-out bits per byte {bpb}")
