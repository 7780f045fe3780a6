"""The bounds a per-sample file from a snapshot is held to before it enters the database
(suite.results.store._oversized_samples): rows, the data Parquet stores, each value's characters
and a file's text in all. Files written by DuckDB itself, as publish writes them."""

from __future__ import annotations

import duckdb

from suite.results import store


def write(path, rows: int, target: str) -> str:
    duckdb.sql(f"COPY (SELECT 'local' AS task, 1 AS scale, 32 AS eval_len, 'acc' AS metric, range AS doc_id, "
               f"'h' AS prompt_hash, {target} AS target, 1.0 AS correct FROM range({rows})) "
               f"TO '{path}' (FORMAT parquet)")
    return str(path)


def test_a_published_sized_file_passes_and_each_bound_is_named(tmp_path):
    con = duckdb.connect()
    fine = write(tmp_path / "fine.parquet", 400, "'t'")
    rows = write(tmp_path / "rows.parquet", store.SAMPLE_ROWS + 1, "'t'")
    value = write(tmp_path / "value.parquet", 2, f"repeat('A', {store.SAMPLE_VALUE + 1})")
    total = write(tmp_path / "total.parquet", 400, f"repeat('B', {store.SAMPLE_TEXT // 400 + 1})")  # one value, stored once
    found = store._oversized_samples(con, [fine, rows, value, total, str(tmp_path / "missing.parquet")])
    assert set(found) == {rows, value, total}  # a missing file is left to the reading, which names it
    assert f"{store.SAMPLE_ROWS + 1:,} rows" in found[rows]
    assert f"a value of {store.SAMPLE_VALUE + 1:,} characters" in found[value]
    other = len("local") + len("acc") + len("h")  # the row's other text
    assert f"{400 * (store.SAMPLE_TEXT // 400 + 1 + other):,} in all" in found[total]


def test_a_column_of_ours_stored_as_bytes_or_a_list_is_named(tmp_path):
    """Measured as text only where it is text: a binary or list ``target`` escaped the measure, and
    the reading converted it to text on the way in."""
    con = duckdb.connect()
    fine = write(tmp_path / "fine.parquet", 4, "'t'")
    binary = write(tmp_path / "binary.parquet", 4, "CAST('t' AS BLOB)")
    nested = write(tmp_path / "nested.parquet", 4, "['t']")
    found = store._oversized_samples(con, [fine, binary, nested])
    assert found == {binary: "column 'target' is BYTE_ARRAY, not text",
                     nested: "column 'target' holds nested values: a per-sample file's columns are plain"}


def test_files_each_within_bounds_are_refused_past_the_snapshots_bound(tmp_path, monkeypatch):
    """300 files each just under a file's bounds held 4.8 billion characters (the render died at
    6 GB): a snapshot's files have a bound of their own, named on each file past it."""
    monkeypatch.setattr(store, "SAMPLES_TEXT", 1000)
    con = duckdb.connect()
    files = [write(tmp_path / f"{i}.parquet", 4, "repeat('x', 100)") for i in range(4)]  # 4 rows x 109 characters
    found = store._oversized_samples(con, files)
    assert sorted(found) == files[2:] and "hold 1,308 characters" in found[files[2]]
