"""What a record may hold where the project uses it as a name: the checks every record passes
when it is read (:func:`suite.results.record_types.from_json`), and the paths derived from its ids.

Records come from strangers (a pull request's snapshot, a submission bundle), and their ids
and names become file names, page names and links. So an id is what the planner makes
(:data:`ID`, the 16 hex digits of ``suite.plan.grid.content_id``), a name is what a spec file
may be called (:data:`NAME`, ``suite.specs.grid.SPEC_NAME``: no ``/``, no leading ``.``, no
URL scheme), and a path a record names (``checkpoint``, ``samples``, ``log``) is only ever the
one its ids give: the code derives every path from the ids (:func:`samples_path`), and a
record holding any other value is refused, so what the site displays is the derived value too.
The name pattern is the boundary's (suite.core.boundary.names); the id pattern repeats the
planner's (results import only core), and a test holds them equal.
"""

from __future__ import annotations

import re
from pathlib import Path

from suite.core.boundary.names import MAX_NAME, NAME, is_name
from suite.core.boundary.text import MAX_LABEL, MAX_TEXT, text_problem
from suite.results.record_numbers import number_problem

ID = re.compile(r"[0-9a-f]{16}")
ID_FORM = "16 lowercase hex digits"
STATUSES = ("done", "failed")

_NAMES = {"training_run": ("encoding", "family", "size", "task"),
          "evaluation": ("encoding", "trained_as", "family", "size", "task")}
_IDS = {"training_run": ("run_id",), "evaluation": ("eval_id", "run_id")}


def is_id(value) -> bool:
    return isinstance(value, str) and ID.fullmatch(value) is not None


def checkpoint_file(run_id: str) -> str:
    """A run's checkpoint, relative to the project root (the runner writes it there)."""
    return f"results/checkpoints/{run_id}.ckpt"


def samples_file(eval_id: str) -> str:
    """An evaluation's per-sample outputs, relative to the project root."""
    return f"results/samples/{eval_id}.parquet"


def log_file(kind: str, piece_id: str) -> str:
    """A failed piece's traceback log, relative to the project root (suite.execution.runner)."""
    return f"results/logs/{'run' if kind == 'training_run' else 'eval'}-{piece_id}.log"


def samples_path(samples_dir: Path, eval_id: str) -> Path:
    """Where an evaluation's per-sample outputs lie in a project's (or a snapshot's) samples
    folder: from its id alone, never from what a record says."""
    if not is_id(eval_id):
        raise ValueError(f"{eval_id!r} is not an evaluation id ({ID_FORM})")
    return Path(samples_dir) / f"{eval_id}.parquet"


def problem(record) -> str | None:
    """The first thing in ``record`` that a name, an id or a path may not be; None when it is sound."""
    for field in _IDS[record.kind]:
        value = getattr(record, field)
        if not is_id(value):
            return f"{field}: {value!r} is not an id ({ID_FORM})"
    for field in _NAMES[record.kind]:
        value = getattr(record, field)
        if not is_name(value):
            return f"{field}: {value!r} is not a spec name (letters, digits, '_', '.', '-'; not starting with '.' or '-')"
    for field, limit in (("display_name", MAX_LABEL), ("paper", MAX_TEXT), ("family", MAX_LABEL)):
        value = getattr(record, field, None)
        if value is not None and (found := text_problem(value, limit)):  # shown in tables, pages and terminals
            return f"{field}: {found}"
    if found := _text_problem(record) or number_problem(record):
        return found
    if record.status not in STATUSES:
        return f"status: {record.status!r} is not one of {', '.join(STATUSES)}"
    if record.kind == "evaluation" and record.status == "done" and not record.metrics:
        return "metrics: none, but the status is done: a done evaluation names its figures (the piece is redone)"
    lineage = getattr(record, "lineage", None)
    if lineage is not None:
        if not is_id(lineage.get("parent_run_id")):
            return f"lineage.parent_run_id: {lineage.get('parent_run_id')!r} is not a run id ({ID_FORM})"
        if "parent_encoding" in lineage and not is_name(lineage["parent_encoding"]):
            return f"lineage.parent_encoding: {lineage['parent_encoding']!r} is not a spec name"
    derived = {"checkpoint": checkpoint_file(record.id) if record.kind == "training_run" else None,
               "samples": samples_file(record.id) if record.kind == "evaluation" else None,
               "log": log_file(record.kind, record.id)}
    for field, expected in derived.items():
        value = getattr(record, field, None)
        if value is not None and value != expected:
            return f"{field}: {value!r} is not {expected!r}, the only path its id gives (a record names no other path)"
    return None


MAX_TRACEBACK = 100_000  # a failure's traceback: many frames, each a few lines
INT64 = 1 << 63  # the database stores integers in 64 bits


def json_problem(value) -> str | None:
    """The first place in a record's JSON that no field may hold, wherever it is (the run and
    evaluation it came from, settings, learning-curve keys and all): a key or a string with a
    control or bidirectional character (tab and newline allowed: a traceback has lines), an integer
    the database cannot store. The checks of :func:`problem` are the tighter ones of the fields
    shown as names and labels (lengths included: the reader bounds every string)."""
    found = _walk(value)
    if found is None:
        return None
    path, message = found
    return f"{'.'.join(map(str, reversed(path))) or 'value'}: {message}"


_NUMBERS = {float, int, bool, type(None)}


def _text(value: str) -> str | None:
    if value.isascii() and value.isprintable():  # nearly every string: no call further
        return None
    return text_problem(value, MAX_TRACEBACK, lines=True)


def _walk(value) -> tuple[list, str] | None:
    """(the path to the first bad value, innermost first; what is wrong), or None. A string a
    call, a dict or list a call: the published snapshot's 17,000 records hold 7 million values."""
    kind = type(value)
    if kind is str:
        found = _text(value)
        return ([], found) if found else None
    if kind is dict:
        for key, item in value.items():
            if type(key) is str and (found := _text(key)):
                return [f"key {key!r}"], found
            if type(item) in (str, dict, list, int) and (found := _walk(item)) is not None:
                found[0].append(key)
                return found
        return None
    if kind is list:
        if set(map(type, value)) <= _NUMBERS:  # a curve: a whole list at once (most of a record's values)
            ints = [x for x in value if type(x) is int]
            if not ints or (-INT64 <= min(ints) and max(ints) < INT64):
                return None
        for i, item in enumerate(value):
            if (found := _walk(item)) is not None:
                found[0].append(i)
                return found
        return None
    if kind is int and not -INT64 <= value < INT64:
        return [], f"{value} does not fit a 64-bit integer"
    return None


def _strings(value, where: str):
    """(where, string) for every string in a JSON-like value, keys included."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield f"{where} key", key
            yield from _strings(item, f"{where}.{key}")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _strings(item, f"{where}.{i}")


def _text_problem(record) -> str | None:
    """The first free text of ``record`` that may not be shown as it is (suite.core.boundary.text):
    its provenance (commits, corpus, machine class, versions), its figures' labels, its failure's
    reason and traceback.
    Each reaches a page, a table or a terminal; a figure's task and metric also name boards."""
    for i, row in enumerate(getattr(record, "metrics", None) or ()):
        if not all(is_name(part) for part in str(row.task).split("/")) or text_problem(row.task, MAX_LABEL):
            return f"metrics.{i}.task: {row.task!r} is not a task name (names joined by '/')"
        if not is_name(row.metric):
            return f"metrics.{i}.metric: {row.metric!r} is not a name"
        for field in ("source", "window_policy"):
            value = getattr(row, field)
            if value is not None and (found := text_problem(value, MAX_TEXT)):
                return f"metrics.{i}.{field}: {found}"
    provenance = {key: value for key, value in vars(record.provenance).items() if key != "calibration"}
    for where, value in _strings(provenance, "provenance"):
        if found := text_problem(value, MAX_TEXT):
            return f"{where}: {found}"
    for field, limit in (("reason", MAX_TEXT), ("scale_behaviour", MAX_TEXT), ("traceback", MAX_TRACEBACK)):
        value = getattr(record, field, None)
        if value is not None and (found := text_problem(value, limit, lines=True)):
            return f"{field}: {found}"
    return None
