"""`posbench validate`: spec files checked without training anything."""

from __future__ import annotations

from pathlib import Path

from suite.specs import SpecErrors

from suite.cli.common import console, project_of, quiet_libraries, report_errors


def cmd_validate(args) -> int:
    """Check spec files; without --import no code from outside the package runs. Every problem
    of a file is reported in one run: its spec's, the registries' checks of a grid, and an
    encoding's citation (suite.specs.citation)."""
    import contextlib

    from suite.core.registry import no_imports
    from suite.plan.limits import unchecked

    project, errors = project_of(args), []
    if args.import_code:
        quiet_libraries()  # the smoke run trains with Lightning: its tips would bury the report
    for path in args.paths:
        with contextlib.nullcontext() if args.import_code else no_imports():
            problems = _citations(Path(path), project)
            try:
                kind, spec = _checked(Path(path), project)
                skipped = unchecked(spec.encodings if kind == "grid" else [spec] if kind == "encoding" else [])
                extra = _submission_checks(spec) if args.import_code and kind == "encoding" else ""
            except SpecErrors as exc:
                problems = [*exc.errors, *problems]
        if problems:
            ordered = sorted(problems, key=lambda e: (e.file != str(Path(path)), e.file, e.line))  # its own file first
            errors += [e for e in ordered if e not in errors]
            continue
        note = f"; params of {', '.join(skipped)} not checked: run with --import" if skipped else ""
        console.print(f"[green]ok[/] {path} ({kind}{note}){extra}", soft_wrap=True)
    return report_errors(errors)


def _checked(path: Path, project):
    """(kind, spec) of one spec file, a grid loaded and checked together (suite.plan.checks)."""
    from suite.plan.checks import load_checked_grid
    from suite.specs import validate_path

    if path.resolve().parent.name == "grids":
        return "grid", load_checked_grid(path, project)
    return validate_path(path, project)


def _citations(path: Path, project) -> list:
    """The ``paper`` problems of an encoding spec, or of every encoding spec a grid names (a
    grid whose document does not load names none here: its own problems come first)."""
    from suite.core.yamldoc import read_yaml
    from suite.specs.citation import check_paper

    kind = path.resolve().parent.name
    try:
        if kind == "encodings":
            return check_paper(read_yaml(path))
        if kind != "grids":
            return []
        data = read_yaml(path).data
        names = data.get("encodings") if isinstance(data, dict) else None
        specs = [(n, project.spec_path("encodings", n, path.parent)) for n in names if isinstance(n, str)] \
            if isinstance(names, list) else []
        return [e for name, spec in specs if not project.ref_problem(name, spec) and spec.is_file()
                for e in check_paper(read_yaml(spec))]
    except SpecErrors:
        return []  # a file that cannot be read: its loading reports why


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
