"""A tuned grid's chooser of each group's learning rate from its sweep runs' records in a
project's results (suite.plan.tuning.chooser reading them): how ``posbench run``, ``plan``,
``submit`` and ``replicate`` plan a tuned grid once its sweep is recorded. It lives in the
execution stage, which reads both plans and records; the plan stage reads no records
(tests/test_layout.py)."""

from __future__ import annotations

from suite.plan.tuning import Chooser, chooser
from suite.results.records import RecordError, read_record
from suite.specs import Project


def sweep_chooser(project: Project) -> Chooser:
    """A :data:`suite.plan.tuning.Chooser` reading the sweep runs' records in ``project``'s
    results, as ``posbench run`` plans: an unreadable record counts as missing and is redone like
    one (suite.results.records.status_of)."""

    def read(run_id: str):
        path = project.runs / f"{run_id}.json"
        try:
            return read_record(path, "training_run") if path.is_file() else None
        except RecordError:
            return None

    return chooser(read)
