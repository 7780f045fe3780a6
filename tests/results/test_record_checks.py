"""The checks every record passes where it is read: ids and names as the planner and the specs
make them, paths only as the ids give them, and the links and file names built from them."""

from __future__ import annotations

import dataclasses

import pytest

from suite.plan.grid import content_id
from suite.report.links import encoding_href, run_href
from suite.results.machine_paths import without_machine_paths
from suite.results.record_checks import ID, NAME, is_id, is_name, samples_path
from suite.results.record_types import RecordContentError, from_json, to_json
from suite.results.records import write_record
from suite.specs.grid import SPEC_NAME

from tests.results.test_records import E1, R1, evaluation, training


def test_the_patterns_are_the_planners_and_the_specs():
    assert ID.fullmatch(content_id({"any": "content"}))
    assert NAME.pattern == SPEC_NAME.pattern


@pytest.mark.parametrize("value", ["../x", "a/b", ".hidden", "-flag", "javascript:alert(1)", "", "x" * 201, "a b", None, 3])
def test_what_is_not_a_name(value):
    assert not is_name(value)


@pytest.mark.parametrize("value", ["0123456789ABCDEF", "0123456789abcde", "../0123456789abc", "0123456789abcdef0"])
def test_what_is_not_an_id(value):
    assert not is_id(value)


@pytest.mark.parametrize("record, edit, reason", [
    (training(), {"size": "../tiny"}, "size: '../tiny' is not a spec name"),
    (training(), {"family": "javascript:x"}, "family: 'javascript:x' is not a spec name"),
    (training(), {"status": "pwned"}, "status: 'pwned' is not one of done, failed"),
    (training(), {"lineage": {"parent_run_id": "../x"}}, "lineage.parent_run_id"),
    (training(), {"lineage": {"parent_run_id": R1, "parent_encoding": "/etc"}}, "lineage.parent_encoding"),
    (training(), {"checkpoint": "/etc/passwd"}, "checkpoint: '/etc/passwd' is not 'results/checkpoints/"),
    (training(), {"log": "results/logs/eval-x.log"}, "log: "),
    (evaluation(), {"run_id": "r1"}, "run_id: 'r1' is not an id"),
    (evaluation(), {"task": "a/b"}, "task: 'a/b' is not a spec name"),
    (evaluation(), {"samples": f"results/samples/../../{E1}.parquet"}, "samples: "),
])
def test_a_record_holds_no_path_and_no_link_but_its_own(record, edit, reason):
    data = to_json(dataclasses.replace(record, **edit))
    with pytest.raises(RecordContentError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        from_json(data)


def test_the_paths_a_record_may_name_are_its_own():
    assert from_json(to_json(evaluation())).samples is None
    record = dataclasses.replace(evaluation(), samples=f"results/samples/{E1}.parquet")
    assert from_json(to_json(record)) == record
    assert samples_path("x", E1).as_posix() == f"x/{E1}.parquet"
    with pytest.raises(ValueError):
        samples_path("x", "../evil")


def test_a_record_is_never_written_under_a_name_that_is_not_an_id(tmp_path):
    with pytest.raises(ValueError, match="not an id"):
        write_record(dataclasses.replace(training(), run_id="../../escape"), tmp_path / "runs")
    assert not list(tmp_path.rglob("*escape*"))


def test_links_are_built_from_names_and_ids_only():
    assert encoding_href("rope", "../encodings/") == "../encodings/rope.html" and run_href(R1, "") == f"{R1}.html"
    for bad in ("javascript:alert(1)", "../../x", "a/b", None):
        assert encoding_href(bad) == "#" and run_href(bad) == "#"


@pytest.mark.parametrize("text, shown", [
    ("/home/someone/posbench/encodings/rope.yaml", "encodings/rope.yaml"),
    ("folder /home/someone/corpus (3 files)", "folder .../corpus (3 files)"),
    ("**/*.py", "**/*.py"),  # a glob: hashed into a run's id, never touched
    ("zeta^((n - m)/512), 1/sqrt(d), d'/2, bits/byte", "zeta^((n - m)/512), 1/sqrt(d), d'/2, bits/byte"),
    ("https://arxiv.org/abs/2104.09864", "https://arxiv.org/abs/2104.09864"),
])
def test_machine_paths_are_shortened_and_nothing_else(text, shown):
    assert without_machine_paths({"a": [text]}) == {"a": [shown]}
