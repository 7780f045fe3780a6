"""`posbench bench` on a tiny configuration: it runs, writes a well-formed record, and
`ingest` loads it into the bench table (no timing is asserted, only shapes and sanity)."""

from __future__ import annotations

import json
import math
import re

import duckdb
import pytest

from suite.bench.run import BenchConfig, flops_per_token, run_bench, tables, write_bench_record
from suite.cli.main import build_parser
from suite.specs import Project
from suite.results.store import ingest

from tests.conftest import REPO

pytestmark = pytest.mark.integration  # trains or evaluates real models: not in make test-fast

CFG = BenchConfig(encodings=("alibi", "cope"), size="tiny", seq_len=16, batch=2, steps=1, warmup=1, scales=(1, 2))


@pytest.fixture(scope="module")
def record():
    return run_bench(CFG, Project(REPO), log=lambda m: None)


def test_the_record_holds_every_figure_for_every_encoding(record):
    assert [r["encoding"] for r in record["rows"]] == ["nope", "alibi", "cope"]  # NoPE added for the ratios
    assert record["matmul_peak_flops"] > 0 and record["flop_formula"]["train"].startswith("6 N")
    for row in record["rows"]:
        got = {(m["metric"], m["scale"]) for m in row["metrics"]}
        assert {("train_tokens_per_s", None), ("bare_train_tokens_per_s", None), ("lightning_vs_bare", None),
                ("train_mfu", None), ("eval_tokens_per_s", 1), ("eval_tokens_per_s", 2), ("eval_peak_mib", 1),
                ("eval_peak_mib", 2)} <= got
        for m in row["metrics"]:
            assert m["value"] is not None and math.isfinite(m["value"]), (row["encoding"], m)
            assert m["vs_nope"] is not None
    nope = record["rows"][0]
    assert all(m["vs_nope"] == 1 for m in nope["metrics"])
    assert {r["attention_path"] for r in record["rows"]} == {"fused", "float_mask", "explicit"}
    assert len(tables(record)) == 2


def test_ingest_loads_the_record_into_the_bench_table(record, tmp_path):
    path = write_bench_record(record, tmp_path / "bench")
    assert json.loads(path.read_text())["bench_id"] == path.stem
    (tmp_path / "bench" / "broken.json").write_text("{")
    report = ingest(tmp_path / "runs", tmp_path / "evals", tmp_path / "db.duckdb")
    assert report.benches == 1 and [p.path.name for p in report.problems] == ["broken.json"]
    with duckdb.connect(str(tmp_path / "db.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT encoding, count(*) FROM bench GROUP BY encoding ORDER BY encoding").fetchall()
        ratio = con.execute("SELECT vs_nope FROM bench WHERE encoding = 'nope' AND metric = 'eval_tokens_per_s' "
                            "AND scale = 2").fetchone()
    assert [r[0] for r in rows] == ["alibi", "cope", "nope"] and len({r[1] for r in rows}) == 1
    assert ratio == (1.0,)


def test_the_site_shows_a_cost_board_of_the_bench(record, tmp_path):
    """The bench table becomes a cost board on the rendered page: one row per encoding, its
    speed with the ratio to NoPE of the same run, its MFU and its evaluation memory."""
    from suite.report.site import render

    write_bench_record(record, tmp_path / "bench")
    db = tmp_path / "db.duckdb"
    ingest(tmp_path / "runs", tmp_path / "evals", db)
    render(db, tmp_path / "site")
    html = (tmp_path / "site" / "boards" / "bench-cpu-tiny-16-2.html").read_text()  # the board's own page
    start = html.index('id="bench-cpu-tiny-16-2"')
    board = html[start: html.index("</section>", start)]
    assert "What each encoding costs" in board and "Lightning tok/s" in board and "eval MiB 2x" in board
    assert "timed by CPU time of the process" in board and "median of" in board  # what timed it, stated
    d, f, layers, V = 64, 256, 2, 256  # tiny, as test_flop_formula counts it
    train_flops = 6 * (layers * (4 * d * d + 2 * d * f) + V * d) + 12 * layers * CFG.seq_len * d
    shown = re.findall(r'<td class="c-train_flops_per_token" data-value="([0-9.e+]+)"', board)
    assert len(shown) == len(record["rows"]) and all(float(v) == pytest.approx(train_flops, rel=1e-9) for v in shown)
    for row in record["rows"]:
        tps = next(m for m in row["metrics"] if m["metric"] == "train_tokens_per_s")
        assert f"{tps['value']:,.0f} ({tps['vs_nope']:.2f}x)" in board
        assert row["attention_path"] in board


def test_a_score_board_of_the_benched_size_shows_the_bench_speed_not_the_wall_clock(record, tmp_path):
    """The bench kind lends its training speed (x NoPE) to the boards of checkpoints' own scores of
    its size, in place of the runs' wall-clock speed."""
    from suite.report.leaderboard import build
    from suite.results.store import connect_readonly
    from tests.report.test_site import Results

    results = Results(tmp_path)
    for seed in (0, 1):
        for encoding in ("alibi", "rope"):
            results.bpb(results.run(encoding, seed), {1: 1.0 + seed / 10, 2: 1.1})
    write_bench_record(record, tmp_path / "results" / "bench")
    db = tmp_path / "results" / "posbench.duckdb"
    ingest(tmp_path / "results" / "runs", tmp_path / "results" / "evals", db, tmp_path / "results" / "bench")
    with connect_readonly(db) as con:
        lm = build(con).find("lm-tiny-lm")
    keys = [c.key for c in lm.columns]
    assert "bench_train_tokens_per_s" in keys and "train_tokens_per_s" not in keys
    alibi = next(e for e in lm.entries if e.encoding == "alibi")
    measured = next(m for r in record["rows"] if r["encoding"] == "alibi" for m in r["metrics"]
                    if m["metric"] == "train_tokens_per_s")
    assert alibi.cells["bench_train_tokens_per_s"].value == measured["value"]
    assert next(e for e in lm.entries if e.encoding == "rope").cells["bench_train_tokens_per_s"].status == "missing"


def test_flop_formula():
    """6 N + 12 L T d for training, 2 N + 4 L T d for evaluation, N = the matmul weights."""
    from suite.modeling.build import build_model, model_config
    from suite.specs import load_encoding, load_size

    model = build_model(load_encoding(REPO / "encodings" / "nope.yaml"), model_config(load_size(REPO / "sizes" / "tiny.yaml"), 16))
    d, f, layers, V = 64, 256, 2, 256
    N = layers * (4 * d * d + 2 * d * f) + V * d
    assert flops_per_token(model, 16, training=True) == 6 * N + 12 * layers * 16 * d
    assert flops_per_token(model, 64, training=False) == 2 * N + 4 * layers * 64 * d


def test_the_command_line():
    args = build_parser().parse_args(["bench", "--encodings", "nope,rope", "--size", "tiny", "--seq-len", "32",
                                      "--batch", "4", "--steps", "2", "--device", "cpu"])
    assert args.func.__name__ == "cmd_bench" and args.encodings == "nope,rope" and args.seq_len == 32
