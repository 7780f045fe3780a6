"""Run records -> DuckDB: schema, idempotent ingest, leaderboard views.

The record files are the source of truth; the database is rebuilt from them at
will. ``ingest`` is the only function that opens the database read-write (DuckDB
allows one writer, and while it writes nobody else can read), so cluster tasks
write record files and never touch the database.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import duckdb
import pyarrow as pa
import yaml

from .records import iter_records

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    cell_id VARCHAR PRIMARY KEY, encoding VARCHAR, display_name VARCHAR, family VARCHAR, paper VARCHAR,
    size VARCHAR, task VARCHAR, seed INTEGER, status VARCHAR, reason VARCHAR, scale_behaviour VARCHAR,
    max_length INTEGER, git_commit VARCHAR, device VARCHAR, precision VARCHAR, attention_path VARCHAR,
    corpus VARCHAR, corpus_fingerprint VARCHAR, wall_s DOUBLE, train_wall_s DOUBLE,
    train_tokens_per_s DOUBLE, peak_memory_mb DOUBLE, n_params BIGINT, final_train_loss DOUBLE,
    finished_at VARCHAR, versions JSON, params JSON, cell JSON
);
CREATE TABLE IF NOT EXISTS metrics (
    cell_id VARCHAR, task VARCHAR, metric VARCHAR, scale INTEGER, eval_len INTEGER, value DOUBLE,
    stderr DOUBLE, n BIGINT, status VARCHAR, window_policy VARCHAR, source VARCHAR
);
CREATE TABLE IF NOT EXISTS curves (
    cell_id VARCHAR, task VARCHAR, scale INTEGER, eval_len INTEGER, bucket INTEGER,
    pos_start INTEGER, pos_end INTEGER, value DOUBLE, n BIGINT
);
CREATE TABLE IF NOT EXISTS metric_meta (
    metric VARCHAR PRIMARY KEY, display_name VARCHAR, description VARCHAR, lower_is_better BOOLEAN, unit VARCHAR
);
"""

VIEWS = """
-- bits per byte per (encoding, size, task, scale), mean over seeds, with the
-- extrapolation ratio bpb(s x L) / bpb(L) of the same models.
CREATE OR REPLACE VIEW lm_scale AS
WITH per_seed AS (
    SELECT r.encoding, r.display_name, r.family, r.size, m.task, r.seed, m.scale, m.eval_len, m.value, m.stderr, m.status
    FROM metrics m JOIN runs r USING (cell_id)
    WHERE r.status = 'done' AND m.metric = 'bpb'
), agg AS (
    SELECT encoding, any_value(display_name) AS display_name, any_value(family) AS family, size, task, scale,
           any_value(eval_len) AS eval_len, avg(value) AS bpb,
           CASE WHEN count(value) > 1 THEN stddev_samp(value) / sqrt(count(value)) ELSE max(stderr) END AS stderr,
           count(value) AS n_seeds, bool_and(status = 'not_applicable') AS not_applicable
    FROM per_seed GROUP BY encoding, size, task, scale
)
SELECT a.*, a.bpb / b.bpb AS ratio
FROM agg a LEFT JOIN agg b ON a.encoding = b.encoding AND a.size = b.size AND a.task = b.task AND b.scale = 1;

-- synthetic-task metrics (through lm-eval) per (encoding, size, task, metric, scale), mean over seeds
CREATE OR REPLACE VIEW task_scale AS
SELECT r.encoding, any_value(r.display_name) AS display_name, r.size, m.task, m.metric, m.scale,
       any_value(m.eval_len) AS eval_len, avg(m.value) AS value,
       CASE WHEN count(m.value) > 1 THEN stddev_samp(m.value) / sqrt(count(m.value)) ELSE max(m.stderr) END AS stderr,
       count(m.value) AS n_seeds, bool_and(m.status = 'not_applicable') AS not_applicable, any_value(m.source) AS source
FROM metrics m JOIN runs r USING (cell_id)
WHERE r.status = 'done' AND m.scale IS NOT NULL AND m.metric <> 'bpb'
GROUP BY r.encoding, r.size, m.task, m.metric, m.scale;

-- GLUE-style scores per (encoding, size, task, metric), mean over seeds
CREATE OR REPLACE VIEW glue_scores AS
SELECT r.encoding, any_value(r.display_name) AS display_name, r.size, m.task, m.metric, avg(m.value) AS value,
       CASE WHEN count(m.value) > 1 THEN stddev_samp(m.value) / sqrt(count(m.value)) ELSE NULL END AS stderr,
       count(m.value) AS n_seeds, any_value(m.status) AS status, any_value(m.source) AS source
FROM metrics m JOIN runs r USING (cell_id)
WHERE r.status = 'done' AND (m.task = 'glue' OR m.task LIKE 'glue/%')
GROUP BY r.encoding, r.size, m.task, m.metric;

-- one row per cell of the coverage matrix
CREATE OR REPLACE VIEW coverage AS
SELECT r.encoding, r.size, r.task, r.seed, r.status, m.scale, m.status AS scale_status
FROM runs r LEFT JOIN metrics m ON m.cell_id = r.cell_id AND m.scale IS NOT NULL AND m.metric IN ('bpb', 'acc');
"""


def metric_meta() -> dict[str, dict]:
    return yaml.safe_load(resources.files("suite").joinpath("metrics.yaml").read_text())


def _run_row(rec: dict) -> tuple:
    prov = rec.get("provenance", {})
    return (
        rec["cell_id"], rec["encoding"], rec["display_name"], rec["family"], rec.get("paper"), rec["size"], rec["task"],
        rec["seed"], rec["status"], rec.get("reason"), rec.get("scale_behaviour"), rec.get("max_length"),
        prov.get("git_commit"), prov.get("device"), prov.get("precision"), prov.get("attention_path"),
        prov.get("corpus"), prov.get("corpus_fingerprint"), prov.get("wall_s"), prov.get("train_wall_s"),
        prov.get("train_tokens_per_s"), prov.get("peak_memory_mb"), prov.get("n_params"), prov.get("final_train_loss"),
        prov.get("finished_at"), json.dumps(prov.get("versions", {})),
        json.dumps(rec["content"]["encoding"]["params"]), json.dumps(rec["cell"]),
    )


METRIC_COLUMNS = ("task", "metric", "scale", "eval_len", "value", "stderr", "n", "status", "window_policy", "source")
CURVE_COLUMNS = ("task", "scale", "eval_len", "bucket", "pos_start", "pos_end", "value", "n")


RUN_COLUMNS = (
    "cell_id", "encoding", "display_name", "family", "paper", "size", "task", "seed", "status", "reason",
    "scale_behaviour", "max_length", "git_commit", "device", "precision", "attention_path", "corpus",
    "corpus_fingerprint", "wall_s", "train_wall_s", "train_tokens_per_s", "peak_memory_mb", "n_params",
    "final_train_loss", "finished_at", "versions", "params", "cell",
)


def _insert(con, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    """Bulk insert through Arrow (row-by-row executemany is slow in DuckDB)."""
    if not rows:
        return
    batch = pa.table({c: [row[i] for row in rows] for i, c in enumerate(columns)})  # noqa: F841 (read by DuckDB)
    con.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(columns)} FROM batch")


def ingest(runs_dir: Path, database: Path) -> int:
    """Upsert every record under ``runs_dir`` into ``database``; drop rows of vanished records.

    Idempotent: ingesting the same records twice leaves the same database.
    Returns the number of records ingested.
    """
    database.parent.mkdir(parents=True, exist_ok=True)
    records = list(iter_records(runs_dir))
    con = duckdb.connect(str(database))
    try:
        con.execute("BEGIN")
        con.execute(SCHEMA)
        con.execute("DELETE FROM metric_meta")
        con.executemany("INSERT INTO metric_meta VALUES (?, ?, ?, ?, ?)",
                        [(k, v["display_name"], v["description"], v["lower_is_better"], v.get("unit")) for k, v in metric_meta().items()])
        for table in ("metrics", "curves", "runs"):
            con.execute(f"DELETE FROM {table}")  # records are the truth: rebuild rows from them
        _insert(con, "runs", RUN_COLUMNS, [_run_row(r) for r in records])
        _insert(con, "metrics", ("cell_id",) + METRIC_COLUMNS,
                [(r["cell_id"], *(m.get(c) for c in METRIC_COLUMNS)) for r in records for m in r["metrics"]])
        _insert(con, "curves", ("cell_id",) + CURVE_COLUMNS,
                [(r["cell_id"], *(c.get(k) for k in CURVE_COLUMNS)) for r in records for c in r["curves"]])
        con.execute(VIEWS)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.close()
    return len(records)


def connect_readonly(database: Path) -> duckdb.DuckDBPyConnection:
    if not database.exists():
        raise FileNotFoundError(f"{database} does not exist: run `posbench ingest` (or `posbench run`) first")
    return duckdb.connect(str(database), read_only=True)
