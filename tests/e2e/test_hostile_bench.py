"""Bench records in a published snapshot (``bench.jsonl.gz``), written by strangers.

``posbench publish`` packs the bench records of ``results/bench/`` beside the runs and
evaluations and lists their ids in SNAPSHOT.json; loading the snapshot (``site --published``,
``run --with-published``) writes each back to ``results/bench/<bench_id>.json`` and the site
shows its cost board. A bench record is checked whole at that boundary, as runs and
evaluations are (suite.results.bench_records): each hostile edit here is refused with one
line naming the file and what is wrong, exit 1, and nothing written inside the project or
beside it. No case trains or measures: the bench record is written by hand.
"""

from __future__ import annotations

import gzip
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from suite.cli.main import main
from suite.results.bench_records import BENCH_SCHEMA_VERSION, check_bench
from suite.results.records import RecordError
from suite.results.snapshot_files import BENCH, SNAPSHOT

from tests.e2e.test_hostile_records import lines, make_project, refused, rewrite, tree

BENCH_ID = "20261125T230000-0123abcd"


def metric(name: str, value: float, scale: int | None = None, unit: str = "tokens/s", ratio: float = 1.0) -> dict:
    return {"metric": name, "scale": scale, "value": value, "unit": unit, "vs_nope": ratio}


def bench_record(bench_id: str = BENCH_ID) -> dict:
    """A bench record as suite.bench.run writes one (two encodings, scales 1 and 16), by hand."""
    def row(encoding: str, name: str, path: str, speed: float) -> dict:
        return {"encoding": encoding, "display_name": name, "attention_path": path, "n_params": 115968,
                "metrics": [metric("train_tokens_per_s", 50000 * speed, ratio=speed),
                            metric("train_mfu", 0.4 * speed, unit="fraction", ratio=speed),
                            metric("bare_train_tokens_per_s", 52000 * speed, ratio=speed),
                            metric("bare_train_mfu", 0.42 * speed, unit="fraction", ratio=speed),
                            metric("lightning_vs_bare", 0.96, unit="ratio"),
                            metric("eval_tokens_per_s", 90000 * speed, 1, ratio=speed),
                            metric("eval_mfu", 0.25 * speed, 1, "fraction", speed),
                            metric("eval_tokens_per_s", 80000 * speed, 16, ratio=speed),
                            metric("eval_mfu", 0.6 * speed, 16, "fraction", speed),
                            metric("eval_peak_mib", 0.3, 1, "MiB"), metric("eval_peak_mib", 2.8 / speed, 16, "MiB", 1 / speed)]}

    shape = {"name": "tiny", "d_model": 64, "n_layers": 2, "n_heads": 4, "d_ff": 256, "init": "gpt2",
             "description": "Two layers of width 64."}
    config = {"encodings": ["nope", "rope"], "size": "tiny", "shape": shape, "seq_len": 64, "batch": 16,
              "device": "cpu", "steps": 20, "warmup": 1, "scales": [1, 16], "eval_batch": 1, "eval_repeats": 5,
              "query_chunk": None, "threads": 1, "compile": False, "seed": 0, "rounds": 3}
    return {"schema_version": BENCH_SCHEMA_VERSION, "kind": "bench", "bench_id": bench_id,
            "created_at": "2026-11-25T23:00:00+00:00", "config": config,
            "machine": {"cpu": "AMD EPYC", "cores": 2, "torch_threads": 1, "torch": "2.13.0+cpu", "python": "3.11.7",
                        "platform": "Linux", "numerics": {"blas": "mkl", "threads": 1, "deterministic": True}},
            "load_average": {"start": [3.1, 2.5, 2.0], "end": [3.3, 2.6, 2.1]}, "wall_s": 300.0,
            "matmul_peak_flops": 9.1e10, "flop_formula": {"train": "6 N + 12 L T d per trained token",
                                                          "eval": "2 N + 4 L T d per evaluated token"},
            "memory": "CPU: VmHWM minus VmRSS before the forward", "clock": "CPU time of the process",
            "rows": [row("nope", "NoPE", "fused", 1.0), row("rope", "RoPE", "fused", 0.9)]}


@pytest.fixture
def world(tmp_path: Path, text_folder: Path, monkeypatch):
    """As test_hostile_records' world, with a bench record in results/bench/ when it publishes."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    root = tmp_path / "project"
    grid = make_project(root, text_folder)
    (root / "results" / "bench").mkdir(parents=True)
    (root / "results" / "bench" / f"{BENCH_ID}.json").write_text(json.dumps(bench_record()))
    assert main(["--root", str(root), "publish", str(grid)]) == 0
    shutil.rmtree(root / "results")
    return tmp_path, root, grid


def edit_bench(change):
    def apply(folder: Path, parent: Path) -> None:
        records = lines(folder, BENCH)
        change(records[0], parent)
        rewrite(folder, BENCH, records)
    return apply


def edit_snapshot(change):
    def apply(folder: Path, parent: Path) -> None:
        info = json.loads((folder / SNAPSHOT).read_text())
        change(info)
        (folder / SNAPSHOT).write_text(json.dumps(info))
    return apply


def link_bench(folder: Path, parent: Path) -> None:
    (parent / "elsewhere.jsonl.gz").write_bytes((folder / BENCH).read_bytes())
    (folder / BENCH).unlink()
    (folder / BENCH).symlink_to(parent / "elsewhere.jsonl.gz")


def row_metric(record: dict, **changes) -> None:
    record["rows"][0]["metrics"][0].update(changes)


# case -> (the edit, the file the error names, what it says)
CASES = {
    "bench_id traversal": (edit_bench(lambda r, p: r.update(bench_id="../../../ESC-bench")), BENCH,
                           "bench_id: '../../../ESC-bench' is not a bench id"),
    "bench_id absolute": (edit_bench(lambda r, p: r.update(bench_id=str(p / "ESC"))), BENCH, "is not a bench id"),
    "encoding javascript": (edit_bench(lambda r, p: r["rows"][1].update(encoding="javascript:alert(1)")), BENCH,
                            "rows.1.encoding: Value error, 'javascript:alert(1)' is not a spec name"),
    "encoding traversal": (edit_bench(lambda r, p: r["rows"][0].update(encoding="../../X")), BENCH,
                           "rows.0.encoding: Value error, '../../X' is not a spec name"),
    "device a path": (edit_bench(lambda r, p: r["config"].update(device="../../../ESC")), BENCH,
                      "config.device: Value error, '../../../ESC' is not a device"),
    "size a URL": (edit_bench(lambda r, p: r["config"].update(size="https://evil.example/x")), BENCH,
                   "config.size: Value error"),
    "attention path html": (edit_bench(lambda r, p: r["rows"][0].update(attention_path="<script>x</script>")), BENCH,
                            "rows.0.attention_path"),
    "figure a string": (edit_bench(lambda r, p: row_metric(r, value="fast")), BENCH, "rows.0.metrics.0.value"),
    "figure not finite": (edit_bench(lambda r, p: row_metric(r, vs_nope=float("inf"))), BENCH,
                          "rows.0.metrics.0.vs_nope"),
    # a negative speed gave the cost board negative FLOPs per token
    "a negative speed": (edit_bench(lambda r, p: row_metric(r, value=-16239.3)), BENCH,
                         "rows.0.metrics.0.value: Input should be greater than or equal to 0"),
    "unknown key": (edit_bench(lambda r, p: r.update(upload_to="http://x")), BENCH,
                    "upload_to: a key this posbench does not know"),
    "unknown row key": (edit_bench(lambda r, p: r["rows"][0].update(run="rm -rf /")), BENCH,
                        "rows.0.run: a key this posbench does not know"),
    "future schema_version": (edit_bench(lambda r, p: r.update(schema_version=BENCH_SCHEMA_VERSION + 1)), BENCH,
                              f"schema version {BENCH_SCHEMA_VERSION + 1}, newer than this posbench's"),
    "not a bench record": (edit_bench(lambda r, p: r.update(kind="training_run")), BENCH,
                           "record kind 'training_run', expected 'bench'"),
    "an encoding twice": (edit_bench(lambda r, p: r["rows"][1].update(encoding="nope")), BENCH,
                          "rows: encoding 'nope' twice"),
    "a huge title": (edit_bench(lambda r, p: r["machine"].update(cpu="x" * 10_000)), BENCH, "machine.cpu"),
    "a display name that reorders and clears": (edit_bench(lambda r, p: r["rows"][0].update(
        display_name="RoPE\u202egnp.exe\x1b[2J")), BENCH, "rows.0.display_name: Value error, character U+202E"),
    "not gzip": (lambda folder, parent: (folder / BENCH).write_bytes(b"{}\n"), BENCH, "not a readable gzip stream"),
    "not JSON lines": (lambda folder, parent: (folder / BENCH).write_bytes(gzip.compress(b"{not json\n")), BENCH,
                       "line 1: not a JSON record"),
    "a link": (link_bench, BENCH, "a link, not a file"),
    "unlisted": (edit_snapshot(lambda info: info.update(bench=[])), BENCH, "SNAPSHOT.json lists none"),
    "listed, missing": (lambda folder, parent: (folder / BENCH).unlink(), BENCH, "missing: SNAPSHOT.json lists 1"),
    "a record twice": (lambda folder, parent: rewrite(folder, BENCH, lines(folder, BENCH) * 2), BENCH,
                       f"line 2: bench_id {BENCH_ID} twice"),
}


@pytest.mark.parametrize("case", CASES)
def test_site_published_refuses_a_hostile_bench_record_and_writes_nothing(world, capsys, case):
    parent, root, _ = world
    edit, file, expected = CASES[case]
    edit(root / "leaderboard", parent)
    refused(capsys, ["--root", str(root), "site", "--published"], parent, file, expected)
    assert not (root / "site").exists()


@pytest.mark.parametrize("case", ["bench_id traversal", "encoding javascript", "unknown key", "a link"])
def test_run_with_published_refuses_a_hostile_bench_record_and_writes_nothing(world, capsys, case):
    parent, root, grid = world
    edit, file, expected = CASES[case]
    edit(root / "leaderboard", parent)
    refused(capsys, ["--root", str(root), "run", str(grid), "--quiet", "--with-published"], parent, file, expected)
    assert not (root / "results").exists()


def test_the_snapshot_carries_the_bench_record_to_the_cost_board(world, capsys):
    """The control: publish listed the record in SNAPSHOT.json and packed it; loading the
    snapshot writes it back where its id says and the published site has its cost board."""
    parent, root, grid = world
    folder = root / "leaderboard"
    assert json.loads((folder / SNAPSHOT).read_text())["bench"] == [BENCH_ID]
    assert lines(folder, BENCH) == [bench_record()]
    assert main(["--root", str(root), "site", "--published"]) == 0
    board = root / "site" / "published" / "boards" / "bench-cpu-tiny-64-16.html"
    html = board.read_text()
    assert "What each encoding costs" in html and "45,000 (0.90x)" in html  # RoPE's Lightning tokens/s, x NoPE
    from suite.results.store import ingest

    scratch = root.parent / "scratch"
    (scratch / "bench").mkdir(parents=True)
    (scratch / "bench" / f"{BENCH_ID}.json").write_text(json.dumps(bench_record()))
    ingest(scratch / "runs", scratch / "evals", scratch / "db.duckdb")
    import duckdb

    with duckdb.connect(str(scratch / "db.duckdb"), read_only=True) as con:
        assert con.execute("SELECT DISTINCT clock FROM bench").fetchall() == [("CPU time of the process",)]
    capsys.readouterr()
    assert main(["--root", str(root), "run", str(grid), "--quiet", "--with-published", "--no-site"]) == 0
    written = root / "results" / "bench" / f"{BENCH_ID}.json"
    assert json.loads(written.read_text()) == bench_record()


def test_publish_refuses_a_bad_bench_record_of_ones_own(tmp_path, text_folder, capsys):
    """A bench record in results/bench/ is checked before it leaves too: publish stops, naming it."""
    root = tmp_path / "project"
    grid = make_project(root, text_folder)
    bad = bench_record()
    bad["rows"][0]["encoding"] = "../x"
    (root / "results" / "bench").mkdir(parents=True)
    (root / "results" / "bench" / f"{BENCH_ID}.json").write_text(json.dumps(bad))
    before = tree(tmp_path)
    capsys.readouterr()
    assert main(["--root", str(root), "publish", str(grid)]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and f"{BENCH_ID}.json" in err[0] and "rows.0.encoding" in err[0], err
    assert tree(tmp_path) == before


def test_a_snapshot_without_bench_records_still_loads(world, capsys):
    """One an earlier posbench published: no bench.jsonl.gz and no ids listed."""
    parent, root, _ = world
    folder = root / "leaderboard"
    (folder / BENCH).unlink()
    edit_snapshot(lambda info: info.pop("bench"))(folder, parent)
    assert main(["--root", str(root), "site", "--published"]) == 0


def test_check_bench_accepts_what_bench_writes_and_names_the_file():
    assert check_bench(bench_record()) == bench_record()
    old = bench_record()
    del old["config"]["rounds"]  # written before rounds existed
    check_bench(old)
    from suite.results.bench_records import read_bench_record

    with pytest.raises(RecordError, match="does not match the file name"):
        path = Path(tempfile.mkdtemp()) / "20261125T230000-ffffffff.json"
        path.write_text(json.dumps(bench_record()))
        read_bench_record(path)


def test_check_bench_accepts_a_hybrid_schedules_attention_paths_and_nothing_else_joined():
    """A model whose layers take different paths (SWAN-GPT's global NoPE layer fused, its windowed
    RoPE layers on the float mask) is benched as "fused+float_mask"; the checks read that, and
    refuse a joined value with a part that is no name."""
    from suite.modeling.model import ModelConfig

    from tests.encodings.helpers import build_model

    model = build_model("swan-gpt", cfg=ModelConfig(d_model=32, n_layers=4, n_heads=4, d_ff=64, train_len=64))
    record = bench_record()
    record["rows"][1]["attention_path"] = model.path_name
    assert model.path_name == "fused+float_mask"
    assert check_bench(record)["rows"][1]["attention_path"] == "fused+float_mask"
    for bad in ("fused+../x", "fused+", "+fused", "fused float_mask"):
        record["rows"][1]["attention_path"] = bad
        with pytest.raises(ValueError, match="attention_path"):
            check_bench(record)


def test_the_bench_writes_the_schema_version_the_checks_read():
    from suite.bench.run import BENCH_SCHEMA_VERSION as WRITTEN

    assert WRITTEN == BENCH_SCHEMA_VERSION


def test_the_committed_snapshot_carries_a_sound_bench_record_of_every_published_encoding():
    """leaderboard/: its bench records pass the checks every reader makes, and the cost board
    has a row for every encoding with a published row, but the fine-tuned children (no spec of
    their own: each is its parent encoding's architecture with other weights)."""
    from suite.results.snapshot_files import EVALS, RUNS, read_bench, read_info

    from tests.conftest import REPO

    folder = REPO / "leaderboard"
    records = read_bench(folder, read_info(folder)["bench"])
    assert records
    runs, evals = lines(folder, RUNS), lines(folder, EVALS)
    children = {r["encoding"] for r in runs if r.get("lineage")}
    published = {r["encoding"] for r in runs} | {e["encoding"] for e in evals}
    measured = {row["encoding"] for record in records for row in record["rows"]}
    assert published - children - measured == set()
