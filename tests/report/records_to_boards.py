"""The leaderboard a folder of records makes: written as record files, ingested into a DuckDB file,
built as the site builds it (tests of what a board says of the machines that computed it)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from suite.report.leaderboard import Leaderboard, build
from suite.results.records import write_record
from suite.results.store import connect_readonly, ingest


def leaderboard_of(root: Path, runs: list, evals: list) -> Leaderboard:
    """The boards of these training and evaluation records (per-sample outputs left out)."""
    for r in runs:
        write_record(r, root / "runs")
    for e in evals:
        write_record(dataclasses.replace(e, samples=None), root / "evals")
    ingest(root / "runs", root / "evals", root / "db.duckdb")
    con = connect_readonly(root / "db.duckdb")
    try:
        return build(con)
    finally:
        con.close()
