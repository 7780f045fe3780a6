"""The snapshot reader on whatever a stranger's file holds (hypothesis draws the lines): every
outcome is the records or one RecordError naming the file, never another exception."""

from __future__ import annotations

import gzip
import json

from hypothesis import HealthCheck, given, settings, strategies as st

from suite.results.records import RecordError
from suite.results.snapshot_files import read_records

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children,
                                                                                       max_size=4), max_leaves=20)
RECORDISH = st.fixed_dictionaries({"schema_version": st.sampled_from([2, 3, "2", None]),
                                   "kind": st.sampled_from(["training_run", "evaluation", "x"])}, optional={
    "run_id": st.sampled_from(["0123456789abcdef", "../x", "\x1b"]), "display_name": st.text(max_size=30),
    "status": st.sampled_from(["done", "failed", "?"]), "metrics": st.lists(JSON, max_size=2)})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(JSON.map(json.dumps), RECORDISH.map(json.dumps), st.binary(max_size=30).map(
    lambda b: b.decode("latin-1"))), max_size=5))
def test_any_lines_give_records_or_one_record_error(tmp_path, lines):
    path = tmp_path / "runs.jsonl.gz"
    path.write_bytes(gzip.compress("\n".join(lines).encode("utf-8", "surrogateescape")))
    try:
        read_records(path, "training_run")
    except RecordError as exc:
        assert str(exc).startswith(str(path))
