"""Records -> DuckDB: schema, ingest, leaderboard views.

The record files are the source of truth; the database is rebuilt from them at
will. ``ingest`` builds a complete new database beside the old one and renames it
into place: readers see the old file or the new one, never half of one; a corrupt
database or one of another schema is simply replaced; two ingests at once each
build their own and the last rename wins. Cluster tasks write record files and
never touch the database.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from suite.core.boundary.atomic import stale_aside

from suite.results.bench_records import BENCH_SCHEMA_VERSION, read_bench_record  # noqa: F401 (re-exported)
from suite.results.record_checks import samples_path
from suite.results.records import RecordError, scan
from suite.results.columns import CURVES, EVALUATIONS, METRICS, RUNS, SAMPLES, curve_rows, eval_row, metric_rows, run_row
from suite.results.rows import metric_info

SCHEMA = "\n".join(t.create() for t in (RUNS, EVALUATIONS, METRICS, CURVES, SAMPLES)) + """
CREATE TABLE bench (
    bench_id VARCHAR, created_at VARCHAR, device VARCHAR, machine VARCHAR, size VARCHAR, d_model INTEGER,
    n_layers INTEGER, n_heads INTEGER, seq_len INTEGER, batch INTEGER, encoding VARCHAR, display_name VARCHAR,
    attention_path VARCHAR, n_params BIGINT, metric VARCHAR, scale INTEGER, value DOUBLE, unit VARCHAR,
    vs_nope DOUBLE, matmul_peak_flops DOUBLE, config JSON, clock VARCHAR
);
CREATE TABLE metric_meta (
    metric VARCHAR PRIMARY KEY, display_name VARCHAR, description VARCHAR, lower_is_better BOOLEAN, unit VARCHAR,
    chance DOUBLE
);
"""

VIEWS = """
-- every figure with the entry it belongs to: the encoding as evaluated, on its run
CREATE VIEW figures AS
SELECT e.encoding, e.display_name, e.family, e.trained_as, e.checkpoint_level, e.size, e.seed, e.run_id, e.eval_id,
       e.evaluator, m.task, m.metric, m.scale, m.eval_len, m.value, m.stderr, m.n, m.status, m.source, m.chance
FROM metrics m JOIN evaluations e USING (eval_id)
WHERE e.status = 'done';

-- the encodings evaluated on each run (a checkpoint-level figure, e.g. GLUE-style, belongs to all of them)
CREATE VIEW entries AS
SELECT DISTINCT run_id, encoding, display_name, family, trained_as FROM evaluations WHERE NOT checkpoint_level;

-- bits per byte per (encoding, size, task, scale), mean over seeds, with the
-- extrapolation ratio bpb(s x L) / bpb(L) of the same models.
CREATE VIEW lm_scale AS
WITH agg AS (
    SELECT encoding, any_value(display_name) AS display_name, any_value(family) AS family,
           any_value(trained_as) AS trained_as, size, task, scale, any_value(eval_len) AS eval_len, avg(value) AS bpb,
           CASE WHEN count(value) > 1 THEN stddev_samp(value) / sqrt(count(value)) ELSE max(stderr) END AS stderr,
           count(value) AS n_seeds, bool_and(status = 'not_applicable') AS not_applicable
    FROM figures WHERE metric = 'bpb' GROUP BY encoding, size, task, scale
)
SELECT a.*, a.bpb / b.bpb AS ratio
FROM agg a LEFT JOIN agg b ON a.encoding = b.encoding AND a.size = b.size AND a.task = b.task AND b.scale = 1;

-- length-dependent metrics other than bpb (synthetic tasks through lm-eval), mean over seeds
CREATE VIEW task_scale AS
SELECT encoding, any_value(display_name) AS display_name, any_value(trained_as) AS trained_as, size, task, metric,
       scale, any_value(eval_len) AS eval_len, avg(value) AS value,
       CASE WHEN count(value) > 1 THEN stddev_samp(value) / sqrt(count(value)) ELSE max(stderr) END AS stderr,
       count(value) AS n_seeds, bool_and(status = 'not_applicable') AS not_applicable, any_value(source) AS source
FROM figures WHERE scale IS NOT NULL AND metric NOT IN ('bpb', 'bpb_lmeval')
GROUP BY encoding, size, task, metric, scale;

-- checkpoint-level scores (GLUE-style) of every encoding evaluated on the checkpoint, mean over seeds
CREATE VIEW glue_scores AS
SELECT coalesce(x.encoding, f.encoding) AS encoding, any_value(coalesce(x.display_name, f.display_name)) AS display_name,
       any_value(f.encoding) AS trained_as, f.size, f.task, f.metric, avg(f.value) AS value,
       CASE WHEN count(f.value) > 1 THEN stddev_samp(f.value) / sqrt(count(f.value)) ELSE NULL END AS stderr,
       count(f.value) AS n_seeds, any_value(f.status) AS status, any_value(f.source) AS source
FROM figures f LEFT JOIN entries x ON x.run_id = f.run_id
WHERE f.checkpoint_level
GROUP BY coalesce(x.encoding, f.encoding), f.size, f.task, f.metric;

-- one row per (entry, scale) of the coverage matrix
CREATE VIEW coverage AS
SELECT e.encoding, e.size, e.task, e.seed, coalesce(r.status, 'pending') AS status, e.scale,
       CASE WHEN e.status <> 'done' THEN e.status
            WHEN bool_and(m.status = 'not_applicable') THEN 'not_applicable' ELSE 'ok' END AS scale_status
FROM evaluations e LEFT JOIN runs r USING (run_id) LEFT JOIN metrics m USING (eval_id)
WHERE e.scale IS NOT NULL
GROUP BY e.encoding, e.size, e.task, e.seed, r.status, e.scale, e.status;
"""

def _insert(con, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    """Bulk insert through Arrow (row-by-row executemany is slow in DuckDB)."""
    if not rows:
        return
    batch = pa.table({c: [row[i] for row in rows] for i, c in enumerate(columns)})  # noqa: F841 (read by DuckDB)
    con.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(columns)} FROM batch")


BENCH_COLUMNS = ("bench_id", "created_at", "device", "machine", "size", "d_model", "n_layers", "n_heads", "seq_len",
                 "batch", "encoding", "display_name", "attention_path", "n_params", "metric", "scale", "value", "unit",
                 "vs_nope", "matmul_peak_flops", "config", "clock")


def _bench_rows(rec: dict) -> list[tuple]:
    cfg, shape = rec["config"], rec["config"]["shape"]
    machine = rec.get("machine", {})
    head = {"bench_id": rec["bench_id"], "created_at": rec.get("created_at"), "device": cfg["device"],
            "machine": machine.get("gpu") or machine.get("cpu"), "size": cfg["size"], "d_model": shape["d_model"],
            "n_layers": shape["n_layers"], "n_heads": shape["n_heads"], "seq_len": cfg["seq_len"], "batch": cfg["batch"],
            "matmul_peak_flops": rec.get("matmul_peak_flops"), "config": json.dumps(cfg),
            "clock": rec.get("clock")}  # what timed it (suite.bench.probes.CLOCKS); None: wall clock, before it was stated
    out = []
    for row in rec["rows"]:
        for m in row["metrics"]:
            fields = {**head, **{k: row[k] for k in ("encoding", "display_name", "attention_path", "n_params")}, **m}
            out.append(tuple(fields.get(c) for c in BENCH_COLUMNS))
    return out


def _bench_records(directory: Path, problems: list[RecordError]) -> list[list[tuple]]:
    """The rows of every usable bench record in ``directory``; each other one is reported."""
    out = []
    for path in sorted(Path(directory).glob("*.json")):
        try:
            out.append(_bench_rows(read_bench_record(path)))
        except RecordError as exc:
            problems.append(exc)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            problems.append(RecordError(path, f"unusable content: {type(exc).__name__}: {exc}"))
    return out


@dataclass
class IngestReport:
    runs: int
    evaluations: int
    problems: list[RecordError]
    benches: int = 0


def _usable(records: list, problems: list[RecordError], where) -> list:
    """The records DuckDB can hold (their types are checked when read); each other one is reported
    as being in ``where(record)``."""
    out = []
    for rec in records:
        if not -2**63 <= rec.seed < 2**63:
            problems.append(RecordError(where(rec), f"unusable content: seed {rec.seed} does not fit a 64-bit integer"))
            continue
        out.append(rec)
    return out


def ingest(runs_dir: Path, evals_dir: Path, database: Path, bench_dir: Path | None = None) -> IngestReport:
    """Build ``database`` from every usable record; every unusable one is reported, none is fatal.
    Bench records are read from ``bench_dir`` (default: ``bench/`` beside ``runs_dir``)."""
    runs, evals = scan(runs_dir, "training_run"), scan(evals_dir, "evaluation")
    problems = runs.problems + evals.problems
    run_records = _usable(runs.records, problems, lambda rec: Path(runs_dir) / f"{rec.id}.json")
    eval_records = _usable(evals.records, problems, lambda rec: Path(evals_dir) / f"{rec.id}.json")
    benches = _bench_records(bench_dir or Path(runs_dir).parent / "bench", problems)
    samples_dir = Path(evals_dir).parent / "samples"
    _build(database, run_records, eval_records, benches, lambda eval_id: samples_path(samples_dir, eval_id), problems)
    return IngestReport(len(run_records), len(eval_records), problems, len(benches))


def ingest_snapshot(folder: Path, database: Path) -> IngestReport:
    """Build ``database`` from a published snapshot folder (``leaderboard/``) directly, with no
    record file written: what unpacking it into a scratch project and ingesting that gives
    (suite.results.snapshot.unpack, then :func:`ingest`), in a fraction of the time; the
    published site is rendered this way. The snapshot is a stranger's and is checked as unpack
    checks it: one bad line, file or per-sample link refuses all of it (RecordError naming the
    file and line) before the database is touched. As in :func:`ingest`, a record DuckDB cannot
    hold or a per-sample file it cannot read or that is over its bounds is reported in the
    report's problems; the published database refuses a snapshot with any
    (suite.results.snapshot_cache)."""
    from suite.results.snapshot_files import EVALS, RUNS, read_bench, read_info, read_records, sample_source

    folder = Path(folder)
    info = read_info(folder)
    runs, evals = read_records(folder / RUNS, "training_run"), read_records(folder / EVALS, "evaluation")
    benches = [_bench_rows(record) for record in read_bench(folder, info["bench"])]
    sources = {r.eval_id: sample_source(folder, r.eval_id) for r in evals if r.samples}
    problems: list[RecordError] = []
    run_records = _usable(runs, problems, lambda rec: f"{folder / RUNS} ({rec.id_field} {rec.id})")
    eval_records = _usable(evals, problems, lambda rec: f"{folder / EVALS} ({rec.id_field} {rec.id})")
    _build(database, run_records, eval_records, benches, sources.__getitem__, problems)
    return IngestReport(len(run_records), len(eval_records), problems, len(benches))


def _build(database: Path, run_records: list, eval_records: list, benches: list[list[tuple]], samples_of,
           problems: list[RecordError]) -> None:
    """Write ``database`` anew from checked records (module docstring: built beside, renamed into
    place). ``samples_of(eval_id)``: the per-sample file of an evaluation that has one."""
    database.parent.mkdir(parents=True, exist_ok=True)
    stale_aside(database.parent, ".tmp-")  # a killed ingest's database and WAL
    staging = database.with_name(f".tmp-{os.getpid()}-{database.name}")
    staging.unlink(missing_ok=True)
    try:
        with duckdb.connect(str(staging)) as con:
            con.execute(SCHEMA)
            _insert(con, "metric_meta", ("metric", "display_name", "description", "lower_is_better", "unit", "chance"),
                    [(m.name, m.display_name, m.description, m.lower_is_better, m.unit, m.chance)
                     for m in metric_info().values()])
            _insert(con, RUNS.name, RUNS.names, [run_row(r) for r in run_records])
            _insert(con, EVALUATIONS.name, EVALUATIONS.names, [eval_row(r) for r in eval_records])
            _insert(con, METRICS.name, METRICS.names, [row for r in eval_records for row in metric_rows(r)])
            _insert(con, CURVES.name, CURVES.names, [row for r in eval_records for row in curve_rows(r)])
            _insert(con, "bench", BENCH_COLUMNS, [row for rows in benches for row in rows])
            _insert_samples(con, eval_records, samples_of, problems)
            con.execute(VIEWS)
        Path(f"{database}.wal").unlink(missing_ok=True)  # a crashed writer's log must not replay into the new file
        os.replace(staging, database)
    finally:
        staging.unlink(missing_ok=True)
        Path(f"{staging}.wal").unlink(missing_ok=True)


def replace_metrics(database: Path, records: list) -> None:
    """The metric rows of ``records`` (evaluation records ``database`` already holds, their figures
    changed) in place of the rows it holds for them: what ingesting every record again would give,
    as every view reads the metrics table (suite.submission.replicate re-scores a few re-run
    pieces of a snapshot of thousands)."""
    with duckdb.connect(str(database)) as con:
        con.execute(f"DELETE FROM {METRICS.name} WHERE list_contains(?, eval_id)", [[r.eval_id for r in records]])
        _insert(con, METRICS.name, METRICS.names, [row for r in records for row in metric_rows(r)])


# A per-sample file comes with a snapshot from anyone, and Parquet's dictionary encoding lets a
# file of kilobytes hold gigabytes of text (one long value repeated on every row): bounded before
# any of it enters the database. The published files hold at most 400 rows, 87 KB of data and
# values of 128 characters; these leave them room to grow.
SAMPLE_ROWS = 100_000  # rows of one file
SAMPLE_DATA = 16 << 20  # bytes of one file's data as Parquet stores it, decompressed (its metadata's)
SAMPLE_VALUE = 64 << 10  # characters of one text value
SAMPLE_TEXT = 16 << 20  # characters of one file's text in all, each repeat of a value counted
SAMPLES_TEXT = 1 << 30  # characters of a snapshot's per-sample files in all (the published: 64 million)


def _oversized_samples(con, paths: list[str]) -> dict[str, str]:
    """path -> what is over the bounds above, for the per-sample files that are. The schema is
    read first (our columns stored as ours: text as text, nothing nested), then the metadata (no
    value is read for either), then the text columns' lengths, which DuckDB computes on the
    dictionary without writing a repeated value out (a file of 400 values of 2 MB each: 70 MB of
    memory). One statement each for all files (a statement a file would cost seconds on a
    snapshot); where one fails, file by file, and a file DuckDB cannot read at all is left to the
    reading below, which names it."""
    out: dict[str, str] = {}
    text = [name for name, kind in SAMPLES.columns[2:] if kind == "VARCHAR"]
    metadata = ("SELECT file_name, coalesce(sum(row_group_num_rows) FILTER (WHERE column_id = 0), 0), "
                "coalesce(sum(total_uncompressed_size), 0) FROM parquet_metadata(?) GROUP BY file_name")

    def lengths(columns: list[str]) -> str:
        return (f"SELECT filename, max(greatest(0, {', '.join(f'coalesce(strlen({n}), 0)' for n in columns)})), "
                f"sum(0 + {' + '.join(f'coalesce(strlen({n}), 0)' for n in columns)}) "
                "FROM read_parquet(?, union_by_name = true, filename = true) GROUP BY filename")

    def each(statement, files: list[str]) -> list[tuple]:
        """``statement`` (or, given a file's text columns, the statement for them) over all files in
        one go; file by file where that fails."""
        try:
            return con.execute(statement(text) if callable(statement) else statement, [files]).fetchall()
        except duckdb.Error:
            found = []
            for path in files:
                try:
                    if callable(statement):  # a file may lack a text column (union_by_name fills it in for several)
                        schema = {name for (name,) in con.execute("SELECT name FROM parquet_schema(?)", [path]).fetchall()}
                        if not [n for n in text if n in schema]:
                            continue
                        found += con.execute(statement([n for n in text if n in schema]), [[path]]).fetchall()
                    else:
                        found += con.execute(statement, [[path]]).fetchall()
                except duckdb.Error:
                    pass  # unreadable: named by the reading below
            return found

    # each column of ours as ours is: text stored as text (a binary or list column is not measured
    # as text below, and would be converted to text on the way in), nothing nested
    columns = {name for name, _ in SAMPLES.columns[2:]}
    schema = ("SELECT file_name, name, type, converted_type, logical_type, num_children FROM parquet_schema(?)")
    for path, name, physical, converted, logical, children in each(schema, paths):
        if name in columns and (children or 0) > 0:
            out[path] = f"column {name!r} holds nested values: a per-sample file's columns are plain"
        elif name in text and not (physical == "BYTE_ARRAY" and (converted == "UTF8" or "String" in str(logical or ""))):
            stored = " ".join(str(part) for part in (physical, converted or logical) if part)
            out[path] = f"column {name!r} is {stored}, not text"
    for path, rows, data in each(metadata, [p for p in paths if p not in out]):
        if rows > SAMPLE_ROWS or data > SAMPLE_DATA:
            out[path] = (f"{rows:,} rows and {data:,} bytes of data: a per-sample file holds at most "
                         f"{SAMPLE_ROWS:,} rows and {SAMPLE_DATA:,} bytes")
    so_far = 0
    for path, longest, total in sorted(each(lengths, [p for p in paths if p not in out])):
        so_far += total or 0
        if (longest or 0) > SAMPLE_VALUE or (total or 0) > SAMPLE_TEXT:
            out[path] = (f"a value of {longest or 0:,} characters and {total or 0:,} in all: a per-sample file holds "
                         f"values of at most {SAMPLE_VALUE:,} characters and {SAMPLE_TEXT:,} in all")
        elif so_far > SAMPLES_TEXT:  # every file from the one that passes the snapshot's bound on
            out[path] = (f"the per-sample files up to this one hold {so_far:,} characters: a snapshot's hold at "
                         f"most {SAMPLES_TEXT:,} in all")
    return out


def _insert_samples(con, records: list, samples_of, problems: list[RecordError]) -> None:
    """Every evaluation's per-sample outputs (suite.results.samples) into the samples table, from
    the file its id names (``samples_of(eval_id)``; a record's ``samples`` only says that it has
    one); a file that is missing or unreadable is reported, never fatal.

    All files are read by one statement when every one of them has every column (a statement a
    file costs 3 ms, a third of ingesting the published snapshot); otherwise, or if that
    statement fails, file by file, so that each bad one is named and the others are kept."""
    wanted = [r for r in records if r.samples]
    if not wanted:
        return
    oversized = _oversized_samples(con, [str(samples_of(r.eval_id)) for r in wanted])
    for rec in [r for r in wanted if str(samples_of(r.eval_id)) in oversized]:
        problems.append(RecordError(samples_of(rec.eval_id), f"per-sample outputs of {rec.eval_id} refused: "
                                                             f"{oversized[str(samples_of(rec.eval_id))]}"))
    wanted = [r for r in wanted if str(samples_of(r.eval_id)) not in oversized]
    if not wanted:
        return
    names = [name for name, _ in SAMPLES.columns[2:]]
    files = pa.table({"path": [str(samples_of(r.eval_id)) for r in wanted],  # noqa: F841 (read by DuckDB)
                      "eval_id": [r.eval_id for r in wanted], "run_id": [r.run_id for r in wanted]})
    try:
        found = con.execute("SELECT file_name, list(name) FROM parquet_schema(?) GROUP BY file_name",
                            [files["path"].to_pylist()]).fetchall()
        if len(found) == len(wanted) and all(set(names) <= set(columns) for _, columns in found):
            # by name, not position (union_by_name), each row to its file's evaluation
            con.execute(f"INSERT INTO {SAMPLES.name} SELECT f.eval_id, f.run_id, {', '.join(f'p.{n}' for n in names)} "
                        "FROM read_parquet(?, union_by_name = true, filename = true) p JOIN files f ON p.filename = f.path",
                        [files["path"].to_pylist()])
            return
    except duckdb.Error:
        pass  # one file or more unusable: file by file below names each
    for rec in wanted:
        path = samples_of(rec.eval_id)
        try:
            con.execute(f"INSERT INTO {SAMPLES.name} SELECT ?, ?, {', '.join(names)} FROM read_parquet(?)",
                        [rec.eval_id, rec.run_id, str(path)])
        except duckdb.Error as exc:
            problems.append(RecordError(path, f"per-sample outputs of {rec.eval_id} unusable: {exc}"))


def connect_readonly(database: Path) -> duckdb.DuckDBPyConnection:
    """The database, read-only; FileNotFoundError when there is none, RecordError (one line) when the
    file is no database (empty, garbage): ``posbench ingest`` builds it anew from the records."""
    if not database.exists():
        raise FileNotFoundError(f"{database} does not exist: run `posbench ingest` (or `posbench run`) first")
    try:
        return duckdb.connect(str(database), read_only=True)
    except duckdb.Error as exc:
        raise RecordError(database, f"not a usable database ({str(exc).splitlines()[0][:200]}): `posbench ingest` "
                                    "builds it again from the records") from None
