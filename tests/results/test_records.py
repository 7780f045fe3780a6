"""Typed records: the one serialization round-trips, a bad file is refused with its reason,
and the DuckDB tables' columns are the records' fields."""

from __future__ import annotations

import dataclasses
import json

import duckdb
import pytest

from suite.results.columns import EVALUATIONS, NOT_STORED, RUNS
from suite.results.record_types import (EvaluationRecord, Failure, Provenance, TrainingProvenance, TrainingRecord,
                                        failed, from_json, to_json)
from suite.results.records import RecordError, read_record, write_record
from suite.results.rows import MetricRow
from suite.results.store import ingest


R1, E1 = "0123456789abcdef", "fedcba9876543210"


def training(run_id=R1, **changes) -> TrainingRecord:
    record = TrainingRecord(run_id=run_id, run={"seed": 0}, content={"encoding": {"params": {"base": 10000}}},
                            encoding="rope", display_name="RoPE", family="rotary", size="tiny", task="lm", seed=0,
                            status="done", checkpoint=f"results/checkpoints/{run_id}.ckpt",
                            provenance=TrainingProvenance(git_commit="abc", versions={"torch": "2.13.0"}, wall_s=1.5,
                                                          final_train_loss=2.25, n_params=1000, compiled=False))
    return dataclasses.replace(record, **changes)


def evaluation(eval_id=E1, run_id=R1) -> EvaluationRecord:
    return EvaluationRecord(eval_id=eval_id, run_id=run_id, evaluation={"encoding": {"name": "rope"}},
                            content={"encoding": {"params": {}}}, evaluator="extrapolation", settings={"tokens": 64},
                            scale=2, encoding="rope", display_name="RoPE", family="rotary", paper="Su et al.",
                            trained_as="rope", checkpoint_level=False, size="tiny", task="lm", seed=0, status="done",
                            metrics=(MetricRow("lm", "bpb", 3.5, 64, scale=2, eval_len=64),),
                            provenance=Provenance(wall_s=0.5))


def test_a_record_round_trips_through_its_file(tmp_path):
    for record, folder in ((training(), "runs"), (evaluation(), "evals")):
        path = write_record(record, tmp_path / folder)
        assert path.name == f"{record.id}.json"
        assert read_record(path, record.kind) == record


def test_the_file_holds_what_it_held_before_types(tmp_path):
    """The layout of a record file is unchanged: absent failure fields, provenance without
    unmeasured figures, the schema version and kind."""
    data = json.loads(write_record(training(), tmp_path).read_text())
    assert data["schema_version"] == 2 and data["kind"] == "training_run" and data["reason"] is None
    assert not {"step", "traceback", "log"} & set(data)
    assert data["provenance"] == {"git_commit": "abc", "versions": {"torch": "2.13.0"}, "wall_s": 1.5,
                                  "final_train_loss": 2.25, "n_params": 1000, "compiled": False}


def test_a_failed_record_keeps_why(tmp_path):
    record = failed(training(checkpoint=None), Failure("FloatingPointError: diverged", step=25, traceback="tb",
                                                           log=f"results/logs/run-{R1}.log"))
    data = json.loads(write_record(record, tmp_path).read_text())
    assert (data["status"], data["reason"], data["step"], "checkpoint" in data) == ("failed", "FloatingPointError: diverged",
                                                                                  25, False)


@pytest.mark.parametrize("edit, reason", [
    (lambda d: d.update(seed="zero"), "seed: Input should be a valid integer"),
    (lambda d: d.pop("encoding"), "encoding: Field required"),
    (lambda d: d.update(colour="red"), "colour: a key this posbench does not know"),
    (lambda d: d.update(run_id="0" * 16, checkpoint=f"results/checkpoints/{'0' * 16}.ckpt"), "does not match the file name"),
])
def test_a_bad_record_file_is_refused_with_its_reason(tmp_path, edit, reason):
    data = to_json(training())
    edit(data)
    path = tmp_path / f"{R1}.json"
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError, match=reason):
        read_record(path, "training_run")


def test_provenance_a_later_version_added_is_dropped_not_refused():
    data = to_json(training())
    data["provenance"]["gpu_temperature"] = 71
    assert from_json(data) == training()


def test_every_stored_field_is_a_column_of_its_table(tmp_path):
    write_record(training(), tmp_path / "runs")
    write_record(evaluation(), tmp_path / "evals")
    report = ingest(tmp_path / "runs", tmp_path / "evals", tmp_path / "db.duckdb")
    assert (report.runs, report.evaluations, report.problems) == (1, 1, [])
    con = duckdb.connect(str(tmp_path / "db.duckdb"), read_only=True)
    for table, record_cls, provenance_cls in ((RUNS, TrainingRecord, TrainingProvenance),
                                              (EVALUATIONS, EvaluationRecord, Provenance)):
        fields = [f.name for f in dataclasses.fields(record_cls) if f.name not in NOT_STORED]
        columns = [row[0] for row in con.execute(f"DESCRIBE {table.name}").fetchall()]
        assert set(fields) | {f.name for f in dataclasses.fields(provenance_cls)} <= set(columns)
    assert con.execute("SELECT final_train_loss, compiled, json_extract(params, '$.base') FROM runs").fetchone() == \
        (2.25, False, "10000")
    assert con.execute("SELECT value, scale FROM metrics").fetchone() == (3.5, 2)


def test_replacing_an_evaluations_metrics_gives_the_database_a_fresh_ingest_gives(tmp_path):
    """replace_metrics (what posbench replicate puts in the database for a re-run piece) leaves
    every table and view as ingesting the changed records from scratch does."""
    from suite.results.store import replace_metrics

    E2 = "00000000000000e2"
    write_record(training(), tmp_path / "runs")
    for eval_id in (E1, E2):
        write_record(evaluation(eval_id), tmp_path / "evals")
    ingest(tmp_path / "runs", tmp_path / "evals", tmp_path / "patched.duckdb")
    changed = dataclasses.replace(evaluation(E1), metrics=(MetricRow("lm", "bpb", 2.5, 64, scale=2, eval_len=64),
                                                           MetricRow("lm", "loss", 1.7, 64, scale=2, eval_len=64)))
    replace_metrics(tmp_path / "patched.duckdb", [changed])
    write_record(changed, tmp_path / "evals")
    ingest(tmp_path / "runs", tmp_path / "evals", tmp_path / "fresh.duckdb")

    def figures(name):
        with duckdb.connect(str(tmp_path / name), read_only=True) as con:
            return con.execute("SELECT * FROM figures ORDER BY eval_id, metric").fetchall()

    assert figures("patched.duckdb") == figures("fresh.duckdb")
    assert [(row[8], row[11], row[14]) for row in figures("fresh.duckdb")] == [(E2, "bpb", 3.5), (E1, "bpb", 2.5),
                                                                               (E1, "loss", 1.7)]
