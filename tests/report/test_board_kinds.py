"""The report stage is driven by its registry: every board kind picks its figures and builds its
boards, and a metric reaches a board by its declaration (suite/results/metrics.yaml ``board``).
A new kind is one module (tests/report/toy_kind.py) whose boards appear in the leaderboard's
sections; a metric declared on no board is on none; a new metric declared ``board: task`` is on
a task board. The database is built by ``ingest`` from real records: a part of the published
snapshot (leaderboard/)."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import pytest

from suite.core.registry import Registry
from suite.report.board_kinds import BOARD_KINDS, BoardKind
from suite.report.board_types import Board, Cell, Column, Entry
from suite.report.leaderboard import build
from suite.report.overview import overview
from suite.results.record_types import from_json, to_json
from suite.results.record_checks import samples_path
from suite.results.records import write_record
from suite.results.rows import MetricInfo, board_of, breakdown_of, declare_metric, metric_info, withdraw_metric
from suite.results.snapshot_files import EVALS, RUNS, read_records, sample_source
from suite.results.store import connect_readonly, ingest

from tests.conftest import REPO

SNAPSHOT = REPO / "leaderboard"
TOY = "tests.report.toy_kind"
# two grids of the snapshot: a language-modelling one (its bits per byte at every scale) and the
# passkey task (its exact match and per-depth breakdowns), each for two encodings
GRIDS = {("tiny-6l", "lm"), ("tiny-torchinit", "passkey")}
ENCODINGS = 2


def derived(record, number: int, metric: str, evaluator: str, shift: float = 0.0):
    """A copy of an evaluation record under a new id whose figures are ``metric``'s (the record's
    main figures only, ``shift`` added), as another evaluator would have written them."""
    data = to_json(record)
    data["eval_id"] = f"{number:016x}"
    data["evaluator"], data["samples"] = evaluator, None
    main = [m for m in data["metrics"] if board_of(m["metric"]) is not None and breakdown_of(m["metric"]) is None]
    data["metrics"] = [{**m, "metric": metric, "value": None if m["value"] is None else m["value"] + shift} for m in main]
    return from_json(data)


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> Path:
    """The snapshot's records of GRIDS (two encodings each), with their per-sample files, and two
    evaluations more of each: the lm-eval cross-check of bits per byte (``bpb_lmeval``, 0.5 bits
    above bpb, so that it would show on the language-modelling board if it were taken for bpb) and
    a metric no declaration knows yet (``toy_recall``, the passkey's exact match under a new name)."""
    root = tmp_path_factory.mktemp("kinds")
    runs = [r for r in read_records(SNAPSHOT / RUNS, "training_run") if (r.size, r.task) in GRIDS]
    kept = {grid: sorted({r.encoding for r in runs if (r.size, r.task) == grid})[:ENCODINGS] for grid in GRIDS}
    runs = [r for r in runs if r.encoding in kept[(r.size, r.task)]]
    ids = {r.run_id: r for r in runs}
    evals = [e for e in read_records(SNAPSHOT / EVALS, "evaluation") if e.run_id in ids]
    results = root / "results"
    for r in runs:
        write_record(r, results / "runs")
    for e in evals:
        if e.samples:
            samples = samples_path(results / "samples", e.eval_id)
            samples.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(sample_source(SNAPSHOT, e.eval_id), samples)
        write_record(e, results / "evals")
    number = 1
    for e in evals:
        task = ids[e.run_id].task
        if e.evaluator == "extrapolation" or task == "passkey":
            metric, evaluator, shift = (("bpb_lmeval", "lm_rolling", 0.5) if e.evaluator == "extrapolation"
                                        else ("toy_recall", "lmeval_task", 0.0))
            write_record(derived(e, number, metric, evaluator, shift), results / "evals")
            number += 1
    db = results / "posbench.duckdb"
    report = ingest(results / "runs", results / "evals", db)
    assert not report.problems, report.problems
    return db


def leaderboard(db: Path):
    with connect_readonly(db) as con:
        return build(con)


def figures(db: Path, metric: str) -> list[tuple]:
    with connect_readonly(db) as con:
        return con.execute("SELECT encoding, size, task, scale, seed, value FROM figures WHERE metric = ? "
                           "ORDER BY ALL", [metric]).fetchall()


@pytest.fixture
def toy_kind():
    """The toy kind, registered by importing its module (as every kind registers itself), and
    withdrawn after the test: no other test sees it."""
    module = importlib.import_module(TOY)
    try:
        yield module.ToyBoard
    finally:
        BOARD_KINDS.unregister(module.ToyBoard.name)
        sys.modules.pop(TOY, None)  # the next import runs the module, and so registers it, again
    assert "toy" not in BOARD_KINDS


@pytest.fixture
def toy_recall():
    """``toy_recall`` declared as a new evaluator would declare its metric: shown on task boards."""
    info = declare_metric(MetricInfo(name="toy_recall", display_name="Toy recall", description="A test's metric.",
                                     lower_is_better=False, unit="share", board="task"))
    try:
        yield info
    finally:
        withdraw_metric(info.name)


def test_a_toy_kind_from_one_module_has_a_section_of_its_boards(database, request):
    before = leaderboard(database)
    toy_kind = request.getfixturevalue("toy_kind")  # registered from here on
    lb = leaderboard(database)
    (kind, boards), = [(k, b) for k, b in lb.sections() if k is toy_kind]
    assert lb.sections()[-1][0] is toy_kind  # in kind order: after every shipped kind
    assert (kind.heading, kind.blurb) == (toy_kind.heading, toy_kind.blurb)
    # one board per size of bits-per-byte figures at 1x, each encoding's mean over its seeds
    bpb = [f for f in figures(database, "bpb") if f[3] == 1]
    assert [b.id for b in boards] == [f"toy-{size}-bpb" for size in sorted({f[1] for f in bpb})]
    for board in boards:
        mine = [f for f in bpb if f[1] == board.size]
        assert [e.encoding for e in board.entries] == sorted({f[0] for f in mine})
        for entry in board.entries:
            values = [f[5] for f in mine if f[0] == entry.encoding]
            assert entry.cells["bits"].value == pytest.approx(sum(values) / len(values))
    assert board_ids(lb, but=toy_kind) == board_ids(before, but=toy_kind)  # the other kinds' boards unchanged
    assert lb.find(boards[0].id) is boards[0] and lb.of_kind("toy") == boards and boards[0] in lb.all
    assert not {b.id for b in boards} & {b.id for b in lb.boards + lb.glue + lb.cost}  # no older list claims it


def board_ids(lb, but: type[BoardKind]) -> list[tuple]:
    return [(b.id, [(e.encoding, {k: c.value for k, c in e.cells.items()}) for e in b.entries])
            for b in lb.all if b.kind != but.name]


def test_without_the_toy_kind_the_sections_are_the_shipped_kinds(database):
    lb = leaderboard(database)
    assert "toy" not in BOARD_KINDS
    assert [k.name for k, _ in lb.sections()] == ["lm", "task", "breakdown", "lost_in_the_middle", "cost"]
    # the language-modelling grid's two rows are RoPE and the Gemma 3 schedule, an architecture
    # change: a board of RoPE, and a board of the schedule beside RoPE (suite.report.row_kinds)
    assert [len(boards) for _, boards in lb.sections()] == [2, 1, 10, 2, 2]
    assert lb.all == [b for _, boards in lb.sections() for b in boards]


def test_a_metric_whose_declaration_names_no_board_is_on_no_board(database):
    """bpb_lmeval (the lm-eval cross-check of bpb) is in the database, on no board, and not mixed
    into the language-modelling board: its cells are bpb's."""
    assert metric_info()["bpb_lmeval"].board is None
    assert figures(database, "bpb_lmeval")
    lb = leaderboard(database)
    assert all(b.metric != "bpb_lmeval" for b in lb.all)
    lm = lb.find("lm-tiny-6l-lm-architecture")  # both rows: the Gemma 3 schedule beside RoPE
    assert {e.encoding for e in lm.entries} == {"gemma3", "rope"}
    bpb = figures(database, "bpb")
    for entry in lm.entries:
        at_1x = [f[5] for f in bpb if f[0] == entry.encoding and f[3] == 1]
        assert entry.cells["s1"].value == pytest.approx(sum(at_1x) / len(at_1x))


def test_a_new_metric_reaches_a_task_board_by_its_declaration_alone(database, toy_recall):
    """toy_recall's figures are the passkey's exact match under a new name: undeclared, they are on
    no board; declared ``board: task``, they make a task board whose cells are the exact match's."""
    assert figures(database, "toy_recall")
    lb = leaderboard(database)
    (acc,) = [b for b in lb.of_kind("task") if b.metric == "acc"]
    (toy,) = [b for b in lb.of_kind("task") if b.metric == "toy_recall"]
    assert toy.id == acc.id.replace("-acc", "-toy_recall") and toy.kind == "task"
    assert [(e.encoding, e.cells["score"].value) for e in toy.entries] == \
           [(e.encoding, e.cells["score"].value) for e in acc.entries]


def test_an_undeclared_metric_is_on_no_board(database):
    assert "toy_recall" not in metric_info() and figures(database, "toy_recall")
    assert all(b.metric != "toy_recall" for b in leaderboard(database).all)


def test_every_declared_board_is_a_registered_kind():
    declared = {b for info in metric_info().values() for b in (info.board, info.breakdown_board) if b}
    assert declared <= set(BOARD_KINDS)


def test_a_metric_declared_on_a_board_that_is_no_kind_is_an_error(database):
    info = declare_metric(MetricInfo(name="toy_recall", display_name="Toy recall", description="A typo's board.",
                                     lower_is_better=False, board="taks"))
    try:
        with pytest.raises(ValueError, match="toy_recall.*did you mean 'task'"):
            leaderboard(database)
    finally:
        withdraw_metric(info.name)


def test_unregister_frees_a_name():
    registry = Registry("thing", BoardKind)

    class Thing(BoardKind):
        name = "thing"

    registry.register()(Thing)
    with pytest.raises(ValueError, match="already registered"):
        registry.register()(Thing)
    registry.unregister("thing")
    assert "thing" not in registry
    registry.register()(Thing)
    assert registry["thing"] is Thing


def test_the_cheapest_question_reads_a_bench_board_when_there_is_one(database):
    """The overview's cost question is answered by the kinds it prefers, in order: a posbench bench
    board (every encoding measured in one process) when there is one, the training-cost board
    otherwise."""
    cost = leaderboard(database).of_kind("cost")
    answer = next(a for a in overview(cost).answers if a.question.kind == "cost")
    assert answer.board.kind == "cost" and answer.column == "train_tokens_per_s"
    bench = Board(id="bench-cpu-tiny-64-8", kind="bench", title="What each encoding costs", size="tiny", task="bench",
                  metric=None, seeds=[], method="one run of posbench bench",
                  columns=[Column("train_tokens_per_s", "Lightning tok/s", "L tok/s", "training tokens per second",
                                  False, 0, "cost")],
                  entries=[Entry(e, e, None, None, cells={"train_tokens_per_s": Cell(v, None, "ok", f"{v:,.0f}")})
                           for e, v in (("nope", 1000.0), ("alibi", 990.0), ("rope", 1200.0), ("cope", 1090.0))])
    answer = next(a for a in overview(cost + [bench]).answers if a.question.kind == "cost")
    # one measurement, no interval: the rows within the question's tie (10%) of the fastest answer with it
    assert (answer.board, answer.best, answer.others) == (bench, ["rope", "cope"], 0)


def test_a_diagnostic_is_shown_as_it_is_unranked_and_without_a_direction(database):
    """A metric declared ``board: diagnostic`` (as the attention-sink metrics are) makes a board of
    its figures at every scale with no ranks, no better direction and no extrapolation columns."""
    info = declare_metric(MetricInfo(name="toy_recall", display_name="Toy recall", description="A test's metric.",
                                     lower_is_better=False, unit="share", board="diagnostic"))
    try:
        lb = leaderboard(database)
    finally:
        withdraw_metric(info.name)
    (acc,) = [b for b in lb.of_kind("task") if b.metric == "acc"]
    (toy,) = lb.of_kind("diagnostic")
    assert toy.metric == "toy_recall" and toy.lower_is_better is None and toy.ranked_by is None
    keys = [c.key for c in toy.columns]
    assert "rank" not in keys and "extrapolation_score" not in keys and "effective_length" not in keys
    assert "A diagnostic: not ranked, and with no better direction." in toy.notes
    cells = {e.encoding: e.cells["s1"].value for e in acc.entries}
    assert {e.encoding: e.cells["s1"].value for e in toy.entries} == cells


def test_the_overview_has_a_row_per_encoding_of_the_ranked_answers_not_per_encoding_benched(database):
    """A bench of every encoding fills the cost column of the overview's rows; it adds no row for an
    encoding that is on none of the boards the ranked questions are answered from."""
    lb = leaderboard(database)
    bench = Board(id="bench-cpu-tiny-64-8", kind="bench", title="What each encoding costs", size="tiny", task="bench",
                  metric=None, seeds=[], method="one run of posbench bench",
                  columns=[Column("train_tokens_per_s", "Lightning tok/s", "L tok/s", "training tokens per second",
                                  False, 0, "cost")],
                  entries=[Entry(e, e, None, None, cells={"train_tokens_per_s": Cell(v, None, "ok", f"{v:,.0f}")})
                           for e, v in (("cope", 900.0), *((e.encoding, 1000.0) for e in lb.of_kind("lm")[0].entries))])
    ov = overview(lb.all + [bench])
    ranked = {e.encoding for a in ov.answers if a.ranked and a.board for e in a.board.entries}
    assert {r["encoding"] for r in ov.rows} == ranked and "cope" not in ranked
    assert all(r["cells"]["cost"][0] == 1000.0 for r in ov.rows if r["encoding"] in {e.encoding for e in bench.entries})
