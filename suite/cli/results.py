"""`posbench ingest`, `site` and `leaderboard`: records into DuckDB, DuckDB into the site and the terminal."""

from __future__ import annotations

from suite.cli.common import console, ingest_records, project_of, render_site


def cmd_ingest(args) -> int:
    ingest_records(project_of(args))
    return 0


def cmd_site(args) -> int:
    console.print(f"site: {render_site(project_of(args))}")
    return 0


def cmd_leaderboard(args) -> int:
    from suite.report.terminal import leaderboard

    return leaderboard(project_of(args).database, args.board, args.format)
