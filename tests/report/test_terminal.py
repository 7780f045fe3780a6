"""The terminal leaderboard prints names and sentences from the results as plain text."""

from __future__ import annotations

import io

from suite.report.board_types import Board, Cell, Column, Entry
from suite.report.stats import Interval
from suite.report.terminal import print_boards

ODD = "[/]x"  # closes a rich markup tag: printed as markup it raises, or vanishes
BOLD = "[bold]y[/bold]"  # as markup it would print "y" in bold, not the name


def odd_board() -> Board:
    columns = [Column("rank", "rank", "#", "rank interval", True, 0, "rank"),
               Column("s1", "bpb 1x", "1x bpb", "bits per byte at 1x", True, 3, "scale")]
    entries = []
    for name, rank in ((ODD, (1, 1)), (BOLD, (2, 2))):
        e = Entry(name, name, None, None)
        e.cells = {"rank": Cell(rank[0], Interval(rank[0], *rank, 2, "rank"), "ok", str(rank[0])),
                   "s1": Cell(1.0 + rank[0], Interval(1.0 + rank[0], 0.9 + rank[0], 1.1 + rank[0], 3,
                                                        "mean over seeds, 95% Student-t interval"))}
        entries.append(e)
    return Board(id="lm-odd", kind="lm", title=f"Language modelling: {ODD}", size="tiny", task="lm", metric="bpb",
                 columns=columns, entries=entries, seeds=[0, 1, 2], method="mean over seeds", lower_is_better=True,
                 headline=f"At 1x: {ODD}, ahead of every other entry.",
                 warnings=[f"{BOLD} warns"], notes=[f"note on {ODD}"])


def test_odd_names_are_printed_as_plain_text():
    out = io.StringIO()
    print_boards([odd_board()], "table", out, width=100)
    text = out.getvalue()
    assert f"Language modelling: {ODD}" in text and f"At 1x: {ODD}, ahead" in text and f"note on {ODD}" in text
    assert BOLD in text and f"! {BOLD} warns" in text
    rows = [line for line in text.splitlines() if line.lstrip().startswith(("[/]", "[bold]"))]
    assert len(rows) == 2 and rows[0].lstrip().startswith(ODD)  # each name in its own row, whole


def test_odd_names_survive_markdown_and_csv():
    for fmt in ("markdown", "csv"):
        out = io.StringIO()
        print_boards([odd_board()], fmt, out)
        assert ODD in out.getvalue() and BOLD in out.getvalue()


def wide_board(columns: int) -> Board:
    """A board of ``columns`` cost columns whose figures are 15 characters wide (a bench's)."""
    cols = [Column(f"c{i}", f"figure {i}", f"fig {i}", "a figure", False, 0, "cost") for i in range(columns)]
    entries = []
    for r in range(3):
        e = Entry(f"enc{r}", f"Encoding number {r}", None, None)
        e.cells = {c.key: Cell(48_020 + r, None, "ok", f"{48_020 + r:,} (0.8{r}x)") for c in cols}
        entries.append(e)
    return Board(id="bench-wide", kind="bench", title="wide", size="tiny", task="lm", metric=None, columns=cols,
                 entries=entries, seeds=[], method="one measurement")


def test_piped_a_figure_is_never_cut_or_folded_a_column_that_cannot_fit_is_named():
    out = io.StringIO()
    print_boards([wide_board(9)], out=out)
    text = out.getvalue()
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80
    row = next(line for line in lines if "48,021" in line)  # the second row
    shown = row.count("48,021 (0.81x)")
    assert 1 <= shown < 9 and "(0.8" not in row.replace("48,021 (0.81x)", "")  # whole figures only
    caption = " ".join(text.split())
    assert f"left out to fit 80 columns: {', '.join(f'fig {i}' for i in range(shown, 9))}" in caption
