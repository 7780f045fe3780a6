"""Lost-in-the-middle grids (suite.report.kinds.lost_in_the_middle): each encoding's accuracy by
depth decile and length, made of the per-depth figures of the published passkey records, in a
real DuckDB file written by ``ingest``. Each cell is checked against the records themselves (the
mean over seeds of the decile's figure), not against the board code's own arithmetic."""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean

import pytest

from suite.report.leaderboard import build
from suite.results.records import write_record
from suite.results.snapshot_files import EVALS, RUNS, read_records
from suite.results.store import connect_readonly, ingest

from tests.conftest import REPO

SNAPSHOT = REPO / "leaderboard"
ENCODINGS = ("alibi", "rope")  # ALiBi finds late needles at 16x and loses early ones; RoPE none at 16x


@pytest.fixture(scope="module")
def passkey(tmp_path_factory):
    """The published passkey runs of ENCODINGS and their evaluations, ingested; and those
    evaluations' records, for the expected values."""
    results = tmp_path_factory.mktemp("litm") / "results"
    runs = [r for r in read_records(SNAPSHOT / RUNS, "training_run") if r.task == "passkey" and r.encoding in ENCODINGS]
    ids = {r.run_id for r in runs}
    evals = [e for e in read_records(SNAPSHOT / EVALS, "evaluation") if e.run_id in ids]
    for r in runs:
        write_record(r, results / "runs")
    for e in evals:
        write_record(e.__class__(**{**e.__dict__, "samples": None}), results / "evals")
    report = ingest(results / "runs", results / "evals", results / "posbench.duckdb")
    assert not report.problems, report.problems
    with connect_readonly(results / "posbench.duckdb") as con:
        lb = build(con)
    return lb, evals


def grids(lb):
    return {b.id: b for b in lb.all if b.kind == "lost_in_the_middle"}


def test_one_grid_per_encoding_rows_by_depth_columns_by_length(passkey):
    lb, evals = passkey
    boards = grids(lb)
    evaluated = sorted({e.encoding for e in evals})  # the checkpoints' own rows and the training-free ones on them
    assert set(ENCODINGS) < set(evaluated)
    assert sorted(boards) == [f"lost_in_the_middle-tiny-torchinit-passkey-acc-{e}" for e in evaluated]
    for board in boards.values():
        assert [e.encoding for e in board.entries] == [f"depth{d}" for d in range(10)]
        assert [c.key for c in board.columns if c.group == "scale"] == ["s1", "s2", "s4", "s8", "s16"]
        assert "rank" not in {c.key for c in board.columns}  # not ranked
        assert board.seeds == sorted({e.seed for e in evals})


def test_each_cell_is_the_mean_over_seeds_of_the_deciles_figure_in_the_records(passkey):
    lb, evals = passkey
    expected = defaultdict(list)  # (encoding, decile, scale) -> values over seeds
    for e in evals:
        for m in e.metrics:
            if m.metric.startswith("acc_depth") and m.value is not None:
                expected[(e.encoding, int(m.metric.removeprefix("acc_depth")), e.scale)].append(m.value)
    assert expected
    boards = grids(lb)
    checked = 0
    for (encoding, decile, scale), values in expected.items():
        board = boards[f"lost_in_the_middle-tiny-torchinit-passkey-acc-{encoding}"]
        cell = next(e for e in board.entries if e.encoding == f"depth{decile}").cells[f"s{scale}"]
        assert cell.value == pytest.approx(fmean(values), abs=1e-12)
        checked += 1
    assert checked == len(boards) * 10 * 5


def test_the_grid_shows_what_the_task_board_averages_away(passkey):
    """At 16x ALiBi's passkey accuracy is a mean of a last decile it always finds and a first
    one it mostly misses: the grid tells them apart, the task board's one figure cannot."""
    lb, _ = passkey
    alibi = grids(lb)["lost_in_the_middle-tiny-torchinit-passkey-acc-alibi"]
    at = {e.encoding: e.cells["s16"].value for e in alibi.entries}
    (task,) = [b for b in lb.of_kind("task") if b.task == "passkey" and b.metric == "acc"]
    overall = next(e for e in task.entries if e.encoding == "alibi").cells["s16"].value
    assert at["depth9"] - at["depth0"] > 0.5  # recency: the last tenth found, the first mostly lost
    assert at["depth0"] < overall < at["depth9"]  # the one figure the task board shows lies between
