"""The two kinds of record as typed values, and the one place they become JSON and back.

* :class:`TrainingRecord` (``results/runs/<run_id>.json``): a training run's resolved spec,
  provenance, status (``done``, or ``failed`` with the reason and step), its checkpoint.
* :class:`EvaluationRecord` (``results/evals/<eval_id>.json``): an evaluation of a run
  (evaluator, settings, encoding as evaluated, scale), its metric rows in long form and its
  loss-vs-position curves.

:func:`to_json` and :func:`from_json` are the only code that knows the files' layout;
the DuckDB tables' columns (suite.results.store) derive from these fields.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

import pydantic

from suite.results.record_checks import json_problem, problem
from suite.results.rows import CurveRow, MetricRow

SCHEMA_VERSION = 2


@dataclass(frozen=True)
class Provenance:
    """Where and how a piece was computed: recorded, never hashed."""

    git_commit: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    wall_s: float | None = None  # the whole piece, from start to record
    # the computing process's CPU time over the piece (time.process_time): what the piece cost,
    # unmoved by other processes sharing the cores (a busy machine stretches wall_s, not this)
    cpu_s: float | None = None
    finished_at: str | None = None
    peak_memory_mb: float | None = None  # this piece's own peak (suite.core.runtime.reset_peak_memory)
    # threads, SIMD level, MKL branch, CPU and libraries it computed with (suite.core.numerics.measured);
    # None in records older than that: posbench verify then re-runs them with the standard numerics
    numerics: dict | None = None

    @property
    def cpu(self) -> str | None:
        """The CPU model the piece was computed on (part of its machine class), if recorded."""
        return (self.numerics or {}).get("cpu")


@dataclass(frozen=True)
class TrainingProvenance(Provenance):
    """A training run's: also the data it read (suite.plan.task_kinds) and what fit measured (suite.training.fit)."""

    corpus: str | None = None
    corpus_fingerprint: str | None = None
    train_wall_s: float | None = None
    train_tokens_per_s: float | None = None
    final_train_loss: float | None = None
    n_params: int | None = None
    device: str | None = None
    precision: str | None = None
    attention_path: str | None = None
    compiled: bool | None = None
    data_wait_s: float | None = None
    data_wait_share: float | None = None
    world_size: int | None = None
    resumed_from_step: int | None = None
    # the git commits of the code that trained the steps before resumed_from_step, where they are
    # not git_commit, comma-separated in the order they trained ("not recorded": a checkpoint from
    # before checkpoints named it)
    resumed_from_commit: str | None = None
    # the trained weights' sha256 (suite.training.checkpoints.weights_sha256): a run trained again
    # keeps its earlier evaluations only when this matches; None in records from before it
    weights_sha256: str | None = None
    # what a calibrating encoding searched on the parent's weights before fine-tuning
    # (suite.training.calibration: LongRoPE's factors and the search's losses)
    calibration: dict | None = None


@dataclass(frozen=True)
class Failure:
    """Why a piece failed: the reason, the training step (None outside training), the
    traceback, and the log file holding it."""

    reason: str
    step: int | None = None
    traceback: str | None = None
    log: str | None = None


_STRICT = pydantic.ConfigDict(extra="forbid")  # an unknown key in a record file is an error, not ignored


@dataclass(frozen=True)
class TrainingRecord:
    __pydantic_config__ = _STRICT
    kind: ClassVar[str] = "training_run"
    id_field: ClassVar[str] = "run_id"

    run_id: str
    run: dict[str, Any]  # suite.plan.grid.TrainingRun.to_dict: enough to rebuild the run anywhere
    content: dict[str, Any]  # what its id hashes
    encoding: str
    display_name: str
    family: str
    size: str
    task: str
    seed: int
    status: str  # done, failed
    reason: str | None = None
    checkpoint: str | None = None  # relative to the project root
    step: int | None = None  # failed: the step training stopped at
    traceback: str | None = None
    log: str | None = None
    # suite.training.learning_curve: {"step": [...], "train_loss": [...], "heldout_exact_match": [...]}
    learning_curve: dict[str, list[int | float]] = field(default_factory=dict)
    # a fine-tuned child's parent and extension (suite.plan.grid.TrainingRun.lineage); None: trained from scratch
    lineage: dict[str, Any] | None = None
    provenance: TrainingProvenance = field(default_factory=TrainingProvenance)

    @property
    def id(self) -> str:
        return self.run_id


@dataclass(frozen=True)
class EvaluationRecord:
    __pydantic_config__ = _STRICT
    kind: ClassVar[str] = "evaluation"
    id_field: ClassVar[str] = "eval_id"

    eval_id: str
    run_id: str
    evaluation: dict[str, Any]  # suite.plan.grid.Evaluation.to_dict
    content: dict[str, Any]
    evaluator: str
    settings: dict[str, Any]
    scale: int | None
    encoding: str  # as evaluated
    display_name: str
    family: str
    paper: str
    trained_as: str  # the encoding of the checkpoint
    checkpoint_level: bool  # a figure of the checkpoint (GLUE-style), not of the encoding as evaluated
    size: str
    task: str
    seed: int
    status: str  # done, failed
    reason: str | None = None
    metrics: tuple[MetricRow, ...] = ()
    curves: tuple[CurveRow, ...] = ()
    samples: str | None = None  # its per-example outcomes (suite.results.samples), relative to the project root
    scale_behaviour: str | None = None
    max_length: int | None = None
    step: int | None = None
    traceback: str | None = None
    log: str | None = None
    provenance: Provenance = field(default_factory=Provenance)

    @property
    def id(self) -> str:
        return self.eval_id


Record = Union[TrainingRecord, EvaluationRecord]
KINDS: dict[str, type] = {TrainingRecord.kind: TrainingRecord, EvaluationRecord.kind: EvaluationRecord}
# keys a file holds only when they have a value (a done run has no step, a failed one no checkpoint)
_OMITTED_WHEN_NONE = {"checkpoint", "step", "traceback", "log", "scale_behaviour", "max_length", "samples"}


def failed(record: Record, failure: Failure) -> Record:
    return dataclasses.replace(record, status="failed", **dataclasses.asdict(failure))


def to_json(record: Record) -> dict:
    """The record as its file holds it (provenance without the figures nobody measured)."""
    out = {"schema_version": SCHEMA_VERSION, "kind": record.kind, **dataclasses.asdict(record)}
    out["provenance"] = {k: v for k, v in out["provenance"].items() if v is not None}
    return {k: v for k, v in out.items() if not (k in _OMITTED_WHEN_NONE and v is None)}


class RecordContentError(ValueError):
    """Content of the right kind that does not make a record (a field missing or of the wrong type)."""


class NewerRecordError(RecordContentError):
    """A record a later version wrote (a newer schema version, a key this one does not know):
    refused, and never redone over as if it were missing (suite.results.records.status_of)."""


def check_version(data: dict) -> None:
    """:class:`RecordContentError` unless ``data`` is a record of this schema version."""
    found = data.get("schema_version")
    if found == SCHEMA_VERSION and not isinstance(found, bool):
        return
    if "schema_version" not in data:
        raise RecordContentError("no schema_version: not a record file")
    if isinstance(found, int) and not isinstance(found, bool) and found > SCHEMA_VERSION:
        raise NewerRecordError(f"schema version {found}, newer than this posbench's ({SCHEMA_VERSION}): "
                               "a later posbench wrote it; update posbench to read it")
    hint = " (a per-cell record of the previous layout: rerun its grid to train and evaluate it again)" if found == 1 else ""
    raise RecordContentError(f"schema version {found!r}, expected {SCHEMA_VERSION}{hint}")


def from_json(data: dict) -> Record:
    """The record a file's JSON object holds, checked where its ids, names and paths are used as
    file names and links (suite.results.record_checks); :class:`RecordContentError` names what is
    wrong. Provenance figures this version does not know are dropped (they are only provenance);
    any other key it does not know is refused (:class:`NewerRecordError`)."""
    if not isinstance(data, dict):
        raise RecordContentError("not a JSON object")
    check_version(data)
    cls = KINDS.get(data.get("kind")) if isinstance(data.get("kind"), str) else None
    if cls is None:
        raise RecordContentError(f"record kind {data.get('kind')!r}, expected {' or '.join(KINDS)!r}")
    unknown = sorted(set(data) - {"schema_version", "kind"} - {f.name for f in dataclasses.fields(cls)}, key=str)
    if unknown:
        raise NewerRecordError(f"{unknown[0]}: a key this posbench does not know (a record of a later version? "
                               "update posbench)")
    if found := json_problem(data):
        raise RecordContentError(found)
    fields = {k: v for k, v in data.items() if k not in ("schema_version", "kind")}
    provenance = TrainingProvenance if cls is TrainingRecord else Provenance
    known = {f.name for f in dataclasses.fields(provenance)}
    given = fields.get("provenance") or {}
    fields["provenance"] = {k: v for k, v in given.items() if k in known} if isinstance(given, dict) else given
    try:
        record = _adapter(cls).validate_python(fields)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise RecordContentError(f"{where}: {first['msg']}" + (f" (and {exc.error_count() - 1} more)"
                                                               if exc.error_count() > 1 else "")) from None
    found = problem(record)
    if found:
        raise RecordContentError(found)
    return record


_ADAPTERS: dict[type, pydantic.TypeAdapter] = {}


def _adapter(cls: type) -> pydantic.TypeAdapter:
    if cls not in _ADAPTERS:
        _ADAPTERS[cls] = pydantic.TypeAdapter(cls)
    return _ADAPTERS[cls]
