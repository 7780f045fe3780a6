"""The board kind of ``posbench bench`` records: what each encoding costs, measured in one process."""

from __future__ import annotations

import json

import duckdb

from suite.report.board_kinds import BOARD_KINDS, BoardKind
from suite.report.board_parts import slug
from suite.report.board_types import Board, Cell, Column, Entry
from suite.report.figures import Sources


@BOARD_KINDS.register()
class BenchBoard(BoardKind):
    """The latest ``posbench bench`` of each shape and device, from the database's ``bench`` table
    (no figures): the canonical measure of what each encoding costs (suite.report.overview)."""

    name = "bench"
    heading = "What each encoding costs"
    blurb = ("Training and evaluation speed and memory of each encoding, measured by posbench bench in one process "
             "on one machine; in brackets, the ratio to NoPE in the same run.")
    order = 5
    ranked = False
    compared = False
    measures_cost = True

    @classmethod
    def build(cls, groups: dict, sources: Sources) -> list[Board]:
        return bench_boards(sources) if sources.con is not None else []

    @classmethod
    def lend(cls, boards: list[Board], carriers: list[Board]) -> None:
        """Beside each board of checkpoints' own scores at a size the bench measured: the bench's
        training speed with its ratio to NoPE, in place of the runs' wall-clock speed (lent by the
        cost kind before this one), which other work on the machine moved."""
        for board in carriers:
            bench = next((b for b in boards if b.size == board.size), None)
            if bench is None:
                continue
            column = Column("bench_train_tokens_per_s", "tok/s (bench)", "bench tok/s",
                            "training tokens per second measured by posbench bench in one process (its CPU time), "
                            "in brackets the ratio to NoPE in that run; a training-free row shows its checkpoint's",
                            False, 0, "cost")
            board.columns = [c for c in board.columns if c.key != "train_tokens_per_s"] + [column]
            speeds = {e.encoding: e.cells.get("train_tokens_per_s") for e in bench.entries}
            for e in board.entries:
                e.cells.pop("train_tokens_per_s", None)
                e.cells[column.key] = speeds.get(e.trained_as or e.encoding) or Cell(status="missing")

BENCH_COLUMNS = (  # metric, header, terminal header, description, lower is better, digits
    ("train_tokens_per_s", "Lightning tok/s", "L tok/s", "training tokens per second through the Lightning module "
     "(median of timed steps); in brackets, the ratio to NoPE in the same run", False, 0),
    ("bare_train_tokens_per_s", "bare loop tok/s", "bare tok/s", "the same model, optimizer and batches in a plain "
     "PyTorch loop", False, 0),
    ("lightning_vs_bare", "Lightning / bare", "L/bare", "the Lightning loop's speed as a share of the bare loop's", False, 2),
    ("train_mfu", "MFU", "MFU", "model FLOP utilization of the training step against this machine's measured "
     "matmul peak (6 N + 12 L T d FLOPs a token)", False, 2),
)


def bench_boards(sources: Sources) -> list[Board]:
    """The latest ``posbench bench`` of each shape and device (the ``bench`` table): one row
    per encoding, its training and evaluation speed and evaluation memory."""
    try:
        rows = sources.query("SELECT * FROM bench ORDER BY created_at")
    except duckdb.Error:  # a database written before the bench table existed
        return []
    latest: dict[tuple, str] = {}
    for r in rows:
        latest[(r["device"], r["size"], r["d_model"], r["n_layers"], r["seq_len"], r["batch"])] = r["bench_id"]
    boards = []
    for key, bench_id in sorted(latest.items(), key=lambda kv: str(kv[0])):
        mine = [r for r in rows if r["bench_id"] == bench_id]
        scales = sorted({r["scale"] for r in mine if r["scale"] is not None})
        columns = [Column(m, label, short, desc, lower, digits, "cost") for m, label, short, desc, lower, digits in BENCH_COLUMNS]
        columns += [Column(f"eval_tokens_per_s@{s}", f"eval tok/s {s}x", f"ev {s}x", f"evaluation tokens per second "
                           f"at {s}x the benchmark length (ratio to NoPE)", False, 0, "cost") for s in scales]
        columns += [Column(f"eval_peak_mib@{s}", f"eval MiB {s}x", f"MiB {s}x", f"peak evaluation memory at {s}x, "
                           "MiB above the resident set before the forward (ratio to NoPE)", True, 1, "cost") for s in scales]
        entries: dict[str, Entry] = {}
        for r in mine:
            shown = f"{r['display_name'] or r['encoding']} ({r['attention_path']} path)"
            entry = entries.setdefault(r["encoding"], Entry(r["encoding"], shown, None, None))
            col = r["metric"] if r["scale"] is None else f"{r['metric']}@{r['scale']}"
            if r["value"] is not None and any(c.key == col for c in columns):
                digits = next(c.digits for c in columns if c.key == col)
                ratio = "" if r["vs_nope"] is None or col in ("lightning_vs_bare", "train_mfu") else f" ({r['vs_nope']:.2f}x)"
                text = f"{r['value']:.0%}" if col == "train_mfu" else f"{r['value']:,.{digits}f}{ratio}"
                entry.cells[col] = Cell(r["value"], None, "ok", text)
        first = mine[0]
        _add_flops_per_token(columns, entries, mine, first["matmul_peak_flops"])
        for entry in entries.values():
            for c in columns:
                entry.cells.setdefault(c.key, Cell(status="missing"))
        device, size, d, n_layers, seq_len, batch = key
        title = (f"What each encoding costs: {size or f'd={d}, {n_layers} layers'}, T={seq_len}, batch {batch}, {device} "
                 f"({first['machine']}, {first['created_at']})")
        board = Board(id=slug(BenchBoard.name, device, size or d, seq_len, batch), kind=BenchBoard.name,
                      title=title, size=size or str(d), task="bench", metric=None, columns=columns,
                      entries=sorted(entries.values(), key=lambda e: e.encoding), seeds=[],
                      method=f"one run of posbench bench ({bench_id}); matmul peak "
                             f"{first['matmul_peak_flops'] / 1e9:.0f} GFLOP/s",
                      lower_is_better=None, train_len=seq_len)
        rounds = json.loads(first["config"] or "{}").get("rounds", 1)
        clock = first["clock"] or "wall-clock time (the record predates the clock's statement: figures a shared machine's load may move)"
        board.notes.append(f"Measured by `posbench bench` in one process, timed by {clock}, each figure the median of "
                           f"{rounds} round(s) over the list of encodings: ratios to NoPE are within that run. FLOPs per "
                           "trained token count the model's matmuls (6 N + 12 L T d, PaLM's accounting): the same for "
                           "encodings of one shape, so a ratio below 1 is the encoding's own work or its attention path.")
        boards.append(board)
    return boards


def _add_flops_per_token(columns: list[Column], entries: dict[str, Entry], rows: list[dict], peak: float | None) -> None:
    """FLOPs per trained token as the bench counted them: MFU x the matmul peak / tokens per second."""
    if not peak:
        return
    columns.insert(len(BENCH_COLUMNS), Column("train_flops_per_token", "FLOPs/token", "FLOP/tok",
                                              "matmul FLOPs per trained token (6 N + 12 L T d; N the matmul weights)",
                                              None, 0, "cost"))
    by = {(r["encoding"], r["metric"]): r["value"] for r in rows if r["scale"] is None}
    for name, entry in entries.items():
        mfu, tps = by.get((name, "train_mfu")), by.get((name, "train_tokens_per_s"))
        if mfu and tps:
            flops = mfu * peak / tps
            entry.cells["train_flops_per_token"] = Cell(flops, None, "ok", f"{flops:,.0f}")
