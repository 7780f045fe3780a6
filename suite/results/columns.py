"""The DuckDB tables' columns, derived from the record types' fields (suite.results.record_types)
and the row types (suite.results.rows): a field added to a record is a column, with no second list.

A record's plain fields become columns (dicts as JSON), then its provenance's fields; a
few fields are too large or too nested for a table (the hashed content, tracebacks, the
metric rows and curves, which have tables of their own) and some columns are computed
from a record (:data:`RUN_COMPUTED`, :data:`EVAL_COMPUTED`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from typing import Any, Callable

from suite.results.record_types import EvaluationRecord, Provenance, TrainingProvenance, TrainingRecord
from suite.results.rows import CurveRow, MetricRow, SampleRow

NOT_STORED = {"content", "evaluation", "traceback", "log", "metrics", "curves", "provenance"}
_SQL = {str: "VARCHAR", int: "BIGINT", float: "DOUBLE", bool: "BOOLEAN", dict: "JSON"}


def _sql_type(annotation) -> str:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        annotation = args[0]
    if typing.get_origin(annotation) is typing.Literal:
        return "VARCHAR"
    return _SQL.get(typing.get_origin(annotation) or annotation, "JSON")


def _typed_fields(cls, skip=frozenset()) -> list[tuple[str, str]]:
    hints = typing.get_type_hints(cls)
    return [(f.name, _sql_type(hints[f.name])) for f in dataclasses.fields(cls) if f.name not in skip]


def _json(value) -> str:
    return json.dumps(value)


@dataclasses.dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[tuple[str, str], ...]  # (name, SQL type)
    key: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)

    def create(self) -> str:
        cols = ", ".join(f"{n} {t}{' PRIMARY KEY' if n == self.key else ''}" for n, t in self.columns)
        return f"CREATE TABLE {self.name} ({cols});"


RUN_COMPUTED: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "params": ("JSON", lambda r: r.content.get("encoding", {}).get("params", {})),
}
EVAL_COMPUTED: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "params": ("JSON", lambda r: r.content.get("encoding", {}).get("params", {})),
    "spec": ("JSON", lambda r: r.evaluation.get("encoding", {})),
}

RUNS = Table("runs", tuple(_typed_fields(TrainingRecord, NOT_STORED) + _typed_fields(TrainingProvenance)
                           + [(n, t) for n, (t, _) in RUN_COMPUTED.items()]), key="run_id")
EVALUATIONS = Table("evaluations", tuple(_typed_fields(EvaluationRecord, NOT_STORED) + _typed_fields(Provenance)
                                         + [(n, t) for n, (t, _) in EVAL_COMPUTED.items()]), key="eval_id")
METRICS = Table("metrics", (("eval_id", "VARCHAR"), ("run_id", "VARCHAR"), *_typed_fields(MetricRow)))
CURVES = Table("curves", (("eval_id", "VARCHAR"), ("run_id", "VARCHAR"), *_typed_fields(CurveRow)))
SAMPLES = Table("samples", (("eval_id", "VARCHAR"), ("run_id", "VARCHAR"), *_typed_fields(SampleRow)))


def _row(table: Table, record, computed: dict) -> tuple:
    # the provenance's fields as they are: scalars and plain dicts, which _json writes as they
    # stand (dataclasses.asdict deep-copied every dict, half the time of these rows)
    provenance = {f.name: getattr(record.provenance, f.name) for f in dataclasses.fields(record.provenance)}
    fields = {**provenance,
              **{f.name: getattr(record, f.name) for f in dataclasses.fields(record) if f.name not in NOT_STORED}}
    fields.update({name: fn(record) for name, (_, fn) in computed.items()})
    types_of = dict(table.columns)
    return tuple(_json(fields[n]) if types_of[n] == "JSON" and fields[n] is not None else fields[n] for n in table.names)


def run_row(record: TrainingRecord) -> tuple:
    return _row(RUNS, record, RUN_COMPUTED)


def eval_row(record: EvaluationRecord) -> tuple:
    return _row(EVALUATIONS, record, EVAL_COMPUTED)


@functools.lru_cache(maxsize=None)
def _names(cls) -> tuple[str, ...]:
    """A row class's field names in order (``dataclasses.fields`` builds its tuple at every call)."""
    return tuple(f.name for f in dataclasses.fields(cls))


def _values(row) -> tuple:
    """A metric or curve row's fields in order. They are all scalars, so this is what
    ``dataclasses.astuple`` gives without its deep copies (a fifth of ingesting the published
    snapshot's 190,000 curve points)."""
    return tuple(getattr(row, name) for name in _names(type(row)))


def metric_rows(record: EvaluationRecord) -> list[tuple]:
    return [(record.eval_id, record.run_id, *_values(m)) for m in record.metrics]


def curve_rows(record: EvaluationRecord) -> list[tuple]:
    return [(record.eval_id, record.run_id, *_values(c)) for c in record.curves]
