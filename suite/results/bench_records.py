"""Bench records (``posbench bench``: ``results/bench/<bench_id>.json``, and the published
snapshot's ``bench.jsonl.gz``) read as data from strangers.

A bench record reaches the site (the cost board: its encodings' names become links, its
device and size a page name, its machine a title) and, from a snapshot, the reader's
``results/bench/`` (the file its id names). So every record is checked whole before it is
used: its id is what :func:`suite.bench.run.bench_id` makes, every name is a spec name
(:func:`suite.results.record_checks.is_name`), every figure a finite number or null, every
text short, and a key this version does not know is refused, as in runs and evaluations.
Nothing of a record is ever a path, a link or a command: the file it is written to is
``<bench_id>.json`` in the folder the reader chose. The checks import no torch (the store and
the snapshot read records without it).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Annotated, Literal

import pydantic
from pydantic import AfterValidator, Field

from suite.core.boundary.bounded import RECORD_FILE, Refused, read_json
from suite.core.boundary.text import text_problem
from suite.results.record_checks import is_name
from suite.results.records import RecordError

BENCH_SCHEMA_VERSION = 1  # suite.bench.run writes it (a test holds the two equal)
BENCH_ID = re.compile(r"[0-9]{8}T[0-9]{6}-[0-9a-f]{8}")  # suite.bench.run.bench_id: UTC time, config digest
BENCH_ID_FORM = "YYYYMMDDTHHMMSS-8 hex digits"
DEVICE = re.compile(r"(cpu|cuda|mps)(:[0-9]{1,3})?")


def is_bench_id(value) -> bool:
    return isinstance(value, str) and BENCH_ID.fullmatch(value) is not None


def _name(value: str) -> str:
    if not is_name(value):
        raise ValueError(f"{value!r} is not a spec name (letters, digits, '_', '.', '-'; not starting with '.' or '-')")
    return value


def _device(value: str) -> str:
    if not DEVICE.fullmatch(value):
        raise ValueError(f"{value!r} is not a device (cpu, cuda, cuda:N, mps)")
    return value


def _paths(value: str) -> str:
    # a model whose layers take different attention paths reports them joined by '+', in the
    # order of suite.modeling.model.AttentionPath (a hybrid schedule: "fused+float_mask")
    if not all(is_name(part) for part in value.split("+")):
        raise ValueError(f"{value!r} is not an attention path (spec names joined by '+')")
    return value


Name = Annotated[str, AfterValidator(_name)]
Paths = Annotated[str, AfterValidator(_paths)]


def _text(value: str) -> str:
    # shown on the cost board's page and in the terminal: no control or bidirectional character
    if problem := text_problem(value, 500):
        raise ValueError(problem)
    return value


Text = Annotated[str, AfterValidator(_text)]
Number = Annotated[float, Field(allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0, le=2**53)]
Positive = Annotated[int, Field(gt=0, lt=2**31)]  # the database's 32-bit integers
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]  # speeds, memory, hours, shares of the peak, ratios
Scalar = bool | int | Number | Text | None


class _Strict(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", strict=True)


class BenchMetric(_Strict):
    metric: Name
    scale: Positive | None
    value: Amount | None  # a negative speed gave the cost board negative FLOPs per token
    unit: Text
    vs_nope: Amount | None = None


class BenchRow(_Strict):
    encoding: Name
    display_name: Text
    attention_path: Paths
    n_params: Count
    metrics: list[BenchMetric] = Field(max_length=1000)


class BenchShape(_Strict):
    name: Name
    d_model: Positive
    n_layers: Positive
    n_heads: Positive
    d_ff: Positive
    init: Name = "gpt2"
    description: Text = ""


class BenchSettings(_Strict):
    """suite.bench.run.BenchConfig as the record holds it, with the size's name and shape."""

    encodings: list[Name] = Field(max_length=10_000)
    size: Name
    shape: BenchShape
    seq_len: Positive
    batch: Positive
    device: Annotated[str, AfterValidator(_device)]
    steps: Count
    warmup: Count
    scales: list[Positive] = Field(max_length=100)
    eval_batch: Positive
    eval_repeats: Positive
    query_chunk: Count | None
    threads: Positive | None
    compile: bool
    seed: Count
    rounds: Positive = 1  # records written before rounds existed measured once


class BenchMachine(_Strict):
    cpu: Text | None = None
    cores: Count | None = None
    torch_threads: Count | None = None
    torch: Text | None = None
    python: Text | None = None
    platform: Text | None = None
    gpu: Text | None = None
    numerics: dict[Name, Scalar] = Field({}, max_length=100)


class LoadAverage(_Strict):
    start: list[Number] = Field(max_length=3)
    end: list[Number] = Field(max_length=3)


class FlopFormula(_Strict):
    train: Text
    eval: Text


class BenchRecord(_Strict):
    schema_version: Literal[1]
    kind: Literal["bench"]
    bench_id: str
    created_at: Text
    config: BenchSettings
    machine: BenchMachine
    load_average: LoadAverage
    wall_s: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    matmul_peak_flops: Annotated[float, Field(gt=0, allow_inf_nan=False)]
    flop_formula: FlopFormula
    memory: Text
    clock: Text | None = None  # records written before the clock was stated timed wall-clock time
    rows: list[BenchRow] = Field(min_length=1, max_length=10_000)


def check_bench(data) -> dict:
    """``data`` itself when it is a sound bench record; ValueError naming the first thing wrong."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if data.get("kind") != "bench":
        raise ValueError(f"record kind {data.get('kind')!r}, expected 'bench'")
    found = data.get("schema_version")
    if "schema_version" not in data:
        raise ValueError("no schema_version: not a bench record")
    if isinstance(found, int) and not isinstance(found, bool) and found > BENCH_SCHEMA_VERSION:
        raise ValueError(f"schema version {found}, newer than this posbench's bench records ({BENCH_SCHEMA_VERSION}): "
                         "a later posbench wrote it; update posbench to read it")
    if found != BENCH_SCHEMA_VERSION or isinstance(found, bool):
        raise ValueError(f"schema version {found!r}, expected {BENCH_SCHEMA_VERSION}")
    if not is_bench_id(data.get("bench_id")):
        raise ValueError(f"bench_id: {data.get('bench_id')!r} is not a bench id ({BENCH_ID_FORM})")
    try:
        record = BenchRecord.model_validate(data)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        what = "a key this posbench does not know (a record of a later version? update posbench)" \
            if first["type"] == "extra_forbidden" else first["msg"]
        raise ValueError(f"{where}: {what}" + (f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else "")) \
            from None
    names = [r.encoding for r in record.rows]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"rows: encoding {twice[0]!r} twice")
    return data


def read_bench_record(path: Path) -> dict:
    """A bench record file (``<bench_id>.json``), checked; :class:`RecordError` naming the file if unusable."""
    try:
        data = read_json(Path(path), RECORD_FILE)
    except Refused as exc:
        raise RecordError(path, f"cannot read: {exc}") from None
    try:
        check_bench(data)
    except ValueError as exc:
        raise RecordError(path, str(exc)) from None
    if data["bench_id"] != Path(path).stem:
        raise RecordError(path, f"its bench_id {data['bench_id']!r} does not match the file name")
    return data


def bench_records(directory: Path) -> list[dict]:
    """Every bench record of ``directory`` (``results/bench``), checked; the first bad one is refused."""
    return [read_bench_record(p) for p in sorted(Path(directory).glob("*.json"))]


def write_bench_file(record: dict, directory: Path) -> Path:
    """``directory/<bench_id>.json``, written beside and renamed (never half a file); the name
    comes from a checked id, never from anything else the record says."""
    if not is_bench_id(record.get("bench_id")):
        raise ValueError(f"{record.get('bench_id')!r} is not a bench id ({BENCH_ID_FORM})")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{record['bench_id']}.json"
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True, default=lambda v: None)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
