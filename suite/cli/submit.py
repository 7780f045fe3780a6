"""The submission commands of `posbench`: new-encoding and verify."""

from __future__ import annotations

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
    console.print(f"next: edit the implementation, then `posbench validate --import {spec}` and "
                  f"`python -m pytest {test}`; see CONTRIBUTING.md", markup=False, soft_wrap=True)
    return 0


def cmd_verify(args) -> int:
    from suite.submission.verify import RecordError, record_path, verify

    quiet_libraries()
    project = project_of(args)
    path = record_path(args.record, project)
    try:
        result = verify(path, project, evaluations=not args.no_evals,
                        log=lambda line: console.print(line, markup=False, soft_wrap=True))
    except (RecordError, ValueError) as exc:
        err_console.print(f"error: {exc}", markup=False, soft_wrap=True)
        return 1
    for line in result.lines:
        console.print(line, markup=False, soft_wrap=True)
    verdict = "MISMATCH" if result.mismatches else "match"
    console.print(f"{verdict}: {result.matched} of {result.compared} figure(s) match"
                  + (f"; {result.mismatches} problem(s)" if result.mismatches else ""), markup=False, soft_wrap=True)
    return 1 if result.mismatches else 0
