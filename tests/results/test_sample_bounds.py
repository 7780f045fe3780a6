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
