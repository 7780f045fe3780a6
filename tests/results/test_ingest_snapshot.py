"""The published snapshot straight into DuckDB (suite.results.store.ingest_snapshot) against the
way it was done before and is still done for one's own results: unpacked into record files,
then ingested. On the default job's part of the committed snapshot (its per-sample files
included) every table must hold the same rows. And per-sample files read in one statement
must still be reported one by one when some are unusable."""

from __future__ import annotations

import gzip
import json
import shutil

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from suite.results.record_checks import samples_path
from suite.results.records import RecordError
from suite.results.snapshot import unpack
from suite.results.store import ingest, ingest_snapshot
from suite.specs import Project
from tests.snapshot_cut import cut_snapshot, planned_by

TABLES = ("runs", "evaluations", "metrics", "curves", "samples", "bench", "metric_meta")


def rows(database, table: str) -> list[tuple]:
    with duckdb.connect(str(database), read_only=True) as con:
        return con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()


def copy_results(source: Project, root) -> Project:
    """A project whose results/ is a copy of ``source``'s record files (no database)."""
    project = Project(root)
    for kind in ("runs", "evals", "samples", "bench"):
        shutil.copytree(source.results / kind, project.results / kind)
    return project


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """The default job's runs and evaluations of the committed snapshot, unpacked and ingested as
    record files: (snapshot folder, project)."""
    root = tmp_path_factory.mktemp("ingest")
    cut_snapshot(root / "quick", ["quick"], planned_by("quick"))
    project = Project(root / "project")
    unpack(root / "quick", project)
    assert not ingest(project.runs, project.evals, project.database).problems
    return root / "quick", project


def test_a_snapshot_ingested_directly_holds_what_unpacking_and_ingesting_it_holds(quick, tmp_path):
    folder, project = quick
    report = ingest_snapshot(folder, tmp_path / "direct.duckdb")
    assert (report.runs, report.evaluations, report.problems) == (60, len(rows(project.database, "evaluations")), [])
    assert len(rows(project.database, "samples")) > 10_000  # flip-flop's per-sample outputs are in it
    for table in TABLES:
        assert rows(tmp_path / "direct.duckdb", table) == rows(project.database, table), table


def test_unusable_per_sample_files_are_each_named_and_the_others_kept(quick, tmp_path):
    _, source = quick
    project = copy_results(source, tmp_path / "project")
    with duckdb.connect(str(source.database), read_only=True) as con:
        counts = dict(con.execute("SELECT eval_id, count(*) FROM samples GROUP BY eval_id ORDER BY eval_id").fetchall())
    garbled, partial = sorted(counts)[:2]
    samples_path(project.samples, garbled).write_bytes(b"not parquet")
    table = pq.read_table(samples_path(project.samples, partial))
    pq.write_table(table.drop_columns(["correct"]), samples_path(project.samples, partial))

    report = ingest(project.runs, project.evals, project.database)
    named = sorted(str(p.path) for p in report.problems)
    assert named == sorted(str(samples_path(project.samples, e)) for e in (garbled, partial))
    assert all("per-sample outputs of" in str(p) and "unusable" in str(p) for p in report.problems)
    with duckdb.connect(str(project.database), read_only=True) as con:
        kept = dict(con.execute("SELECT eval_id, count(*) FROM samples GROUP BY eval_id ORDER BY eval_id").fetchall())
    assert kept == {e: n for e, n in counts.items() if e not in (garbled, partial)}


def test_per_sample_files_with_their_columns_in_another_order_are_read_by_name(quick, tmp_path):
    """One statement reads every file; a file whose columns are in another order (as another
    writer may save them) still gives each value to its own column."""
    _, source = quick
    project = copy_results(source, tmp_path / "project")
    first = sorted(p for p in project.samples.iterdir())[0]
    table = pq.read_table(first)
    pq.write_table(pa.table({name: table[name] for name in reversed(table.column_names)}), first)
    report = ingest(project.runs, project.evals, project.database, bench_dir=source.results / "bench")
    assert not report.problems
    assert rows(project.database, "samples") == rows(source.database, "samples")


def test_a_seed_duckdb_cannot_hold_is_refused_with_its_file_and_line(quick, tmp_path):
    """An integer beyond 64 bits is refused where the record is read (suite.results.record_checks),
    like any other content no field may hold, before the database is touched."""
    folder, project = quick
    cut = tmp_path / "cut"
    cut.mkdir()
    for path in folder.iterdir():
        if path.is_file():
            (cut / path.name).write_bytes(path.read_bytes())
    shutil.copytree(folder / "samples", cut / "samples")
    with gzip.open(folder / "runs.jsonl.gz", "rt") as f:
        runs = [json.loads(line) for line in f]
    runs[0]["seed"] = 2**64
    with gzip.open(cut / "runs.jsonl.gz", "wt") as f:
        f.writelines(json.dumps(r) + "\n" for r in runs)
    with pytest.raises(RecordError, match=f"runs.jsonl.gz: line 1: seed: {2**64} does not fit a 64-bit integer"):
        ingest_snapshot(cut, tmp_path / "direct.duckdb")
    assert not (tmp_path / "direct.duckdb").exists()
