"""Per-sample outputs: every test example of a task evaluation, one Parquet file per evaluation
(``results/samples/<eval_id>.parquet``), and :func:`rescore`, which recomputes an evaluation's
figures from them without running a model.

Benchmarks that people trust let anyone check a figure against its examples (HELM and the
Open LLM Leaderboard publish theirs). The file is written atomically before the record that
names it, so a record's samples always exist; DuckDB writes and reads the Parquet.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path

from suite.results.columns import SAMPLES
from suite.results.rows import MetricRow, SampleRow

# the DuckDB table's columns (derived from SampleRow) without the ids the file name carries
FILE_COLUMNS = tuple(column for column in SAMPLES.columns if column[0] not in ("eval_id", "run_id"))
SAMPLE_COLUMNS = tuple(name for name, _ in FILE_COLUMNS)


def write_samples(path: Path, samples: list[SampleRow]) -> Path:
    """``samples`` as one Parquet file at ``path``, atomically (a temporary name, then a rename)."""
    import duckdb  # here, not at the top: the runner imports this module, and only task evaluations write samples

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    os.close(fd)
    try:
        with duckdb.connect() as con:
            con.execute(f"CREATE TABLE samples ({', '.join(f'{name} {sql}' for name, sql in FILE_COLUMNS)})")
            if samples:
                con.executemany(f"INSERT INTO samples VALUES ({', '.join('?' for _ in SAMPLE_COLUMNS)})",
                                [dataclasses.astuple(s) for s in samples])
            # the file name is a value of the relation API, never part of the statement (a quote in a path)
            con.sql("SELECT * FROM samples ORDER BY scale, task, doc_id").write_parquet(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_samples(path: Path) -> list[SampleRow]:
    import duckdb

    with duckdb.connect() as con:
        rows = con.execute(f"SELECT {', '.join(SAMPLE_COLUMNS)} FROM read_parquet(?) ORDER BY scale, task, doc_id",
                           [str(path)]).fetchall()
    return [SampleRow(*r) for r in rows]


@dataclasses.dataclass(frozen=True)
class Rescored:
    stored: MetricRow
    value: float | None
    stderr: float | None

    @property
    def equal(self) -> bool:
        return self.value == self.stored.value and self.stderr == self.stored.stderr


def rescore(metrics: list[MetricRow], samples: list[SampleRow]) -> list[Rescored]:
    """Each stored figure that has samples, beside the figure recomputed from them: lm-eval's
    ``mean`` and ``mean_stderr`` of the per-sample values in the order lm-eval saw them (the
    main metric over all examples; a breakdown row, e.g. ``acc_depth3``, over its group)."""
    from lm_eval.api.metrics import mean, mean_stderr

    groups: dict[tuple, list[float]] = {}
    for s in sorted(samples, key=lambda s: s.doc_id):
        groups.setdefault((s.task, s.scale, s.metric), []).append(s.correct)
        if s.breakdown is not None:
            groups.setdefault((s.task, s.scale, f"{s.metric}_{s.breakdown}{s.breakdown_value}"), []).append(s.correct)
    out = []
    for row in metrics:
        values = groups.get((row.task, row.scale, row.metric))
        if values is None or row.status != "ok":
            continue
        out.append(Rescored(row, mean(values), mean_stderr(values) if len(values) > 1 else None))
    return out
