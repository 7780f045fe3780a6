"""The site's downloads: every table of the database as CSV and Parquet, as others may read them.

A table is read into Arrow, every absolute path of the machine that computed it is shortened
(suite.results.machine_paths: a record's ``encoding_source``, a folder corpus's path), and it
is written through DuckDB's relation API, which takes the file name as a value: a project folder
whose path holds a quote is a file name like any other, never part of an SQL statement.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from suite.results.machine_paths import has_machine_path, without_machine_paths

TABLES = ("runs", "evaluations", "metrics", "curves", "samples")


def _shortened(column: pa.ChunkedArray) -> pa.ChunkedArray | None:
    """The column with its absolute paths shortened; None when it holds none (left as it is)."""
    slash = pc.match_substring(column, "/")  # an absolute path has one: the values without are not read in Python
    if not pc.any(slash).as_py():
        return None
    values = column.to_pylist()
    if not any(has_machine_path(v) for v, maybe in zip(values, slash.to_pylist()) if maybe):
        return None
    return pa.chunked_array([pa.array([without_machine_paths(v) for v in values], type=column.type)])


def public_table(con, table: str):
    """``table`` (one of :data:`TABLES`) as a DuckDB relation without machine paths, its columns'
    types as the database has them (a JSON column stays JSON)."""
    if table not in TABLES:
        raise ValueError(f"not a table of the downloads: {table!r}")
    stored = con.table(table)
    json_columns = {name for name, kind in zip(stored.columns, stored.types) if str(kind) == "JSON"}
    arrow = stored.to_arrow_table()
    for i, field in enumerate(arrow.schema):
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            shortened = _shortened(arrow.column(i))
            if shortened is not None:
                arrow = arrow.set_column(i, field, shortened)
    relation = con.from_arrow(arrow)
    if json_columns:  # Arrow holds JSON as text: typed again, so the Parquet says JSON as before (names: the
        # database's own columns, suite.results.columns; no value is ever part of the expression)
        relation = relation.project(", ".join(f'CAST("{name}" AS JSON) AS "{name}"' if name in json_columns
                                              else f'"{name}"' for name in arrow.column_names))
    return relation


def write_tables(con, data: Path) -> list[str]:
    """Every table as ``data/<table>.csv.gz`` and ``data/<table>.parquet``; their names, from the
    site's root. Compressed: the per-sample outputs were 81 MB of CSV and 40 MB of Parquet of the
    site's 240 MB (gzip and zstd, which every CSV and Parquet reader opens, including pandas,
    DuckDB and Arrow)."""
    data.mkdir(parents=True, exist_ok=True)
    names = []
    for table in TABLES:
        relation = public_table(con, table)
        relation.write_csv(str(data / f"{table}.csv.gz"), header=True, sep=",", compression="gzip")
        relation.write_parquet(str(data / f"{table}.parquet"), compression="zstd")
        names += [f"data/{table}.csv.gz", f"data/{table}.parquet"]
    return names
