"""The leaderboard in the terminal: every board of the site, with the same intervals, ranks
and warnings, as a table that fits 80 columns, CSV or Markdown.

In a table each cell shows the mean on one line and its interval under it (+-half-width
for a t interval over seeds, lo-hi for a Wilson interval over examples or a clipped one);
the rank column shows each row's rank interval ("1", "2-7"). Every name and sentence from
the results is printed as plain text, never read as rich markup ("[/]x" is a name). Cost and
GLUE-style columns of the language-modelling boards are left to their own boards, so a
board fits an 80-column terminal.
"""

from __future__ import annotations

import csv
import io
import sys
import textwrap
from pathlib import Path

from rich import box
from suite.core.boundary.terminal import TerminalConsole as Console
from suite.core.boundary.text import MAX_LABEL, for_terminal
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from suite.report import stats
from suite.report.board_kinds import kind_of
from suite.core.registry import did_you_mean
from suite.report.boards import Board, Cell, Column
from suite.report.leaderboard import build
from suite.report.overview import answer_lines
from suite.results.store import connect_readonly

FORMATS = ("table", "csv", "markdown")
TABLE_GROUPS = ("rank", "scale", "score", "derived", "task", "cost")  # the columns a table shows
NAME_WIDTH = 14  # the name column in 80 columns; a wider terminal shows whole names
WIDE = 120  # columns from which names are never cut


def _value(cell: Cell | None, col: Column) -> str:
    if cell is None or cell.status == "missing" or cell.value is None:
        return "n/a" if cell is not None and cell.status == "not_applicable" else "-"
    if cell.text is not None:
        return cell.text
    return f"{cell.value:,.0f}" if col.digits == 0 else f"{cell.value:.{col.digits}f}"


def _interval(cell: Cell | None, col: Column, compact: bool) -> str:
    if cell is None or not cell.has_bounds or col.group == "rank":  # a rank's interval is its text, "2-7"
        return ""
    i = cell.interval
    digits = max(col.digits, 2) if col.digits else 0
    if i.symmetric:
        text = f"{i.half_width:.{digits}f}"
        return "\u00b1" + (text.lstrip("0") if compact and text.startswith("0.") else text)
    lo, hi = f"{i.lo:.2f}", f"{i.hi:.2f}"
    return f"{lo.lstrip('0') or '0'}-{hi.lstrip('0') or '0'}" if compact else f"[{lo}, {hi}]"


def _header_lines(board: Board) -> list[str]:
    lines = [f"[bold]{escape(board.title)}[/]"]
    lines += [f"[green]{escape(board.headline)}[/]"] if board.headline else []
    lines += [f"[yellow]! {escape(w)}[/]" for w in board.warnings]
    facts = board.method + (f"; seeds {', '.join(map(str, board.seeds))}" if board.seeds else "")
    if board.lower_is_better is not None:
        facts += "; lower is better" if board.lower_is_better else "; higher is better"
    if board.chance is not None:
        facts += f"; chance {board.chance:.3g}"
    lines.append(f"[dim]{escape(facts)}. {escape(' '.join(board.notes))}[/]")
    return lines


def _name(e) -> str:
    """A row's name as a terminal may show it (suite.core.boundary.text: no control sequence, one line)."""
    return for_terminal(e.display_name + (f" ({e.trained_as})" if e.trained_as else ""), MAX_LABEL)


def _cell_text(cell: Cell | None, col: Column) -> str:
    """A cell as its lines: the mean, and its interval under it."""
    interval = _interval(cell, col, compact=True)
    return _value(cell, col) + (f"\n{interval}" if interval else "")


def _width(texts: list[str], col: Column) -> int:
    """A column's width: its longest line or header word, and the space before it."""
    lines = [line for t in texts for line in t.split("\n")] + col.short.split()
    return max(map(len, lines), default=1) + 1


def fit_columns(board: Board, columns: list[Column], texts: dict[str, list[str]], room: int):
    """The columns that fit ``room`` characters beside the names, and those left out: the
    rightmost first, never the rank, the mean score or the column the board ranks by (its
    headline's figure), as the site hides a table's columns (suite.report.shown.column_priority)."""
    kept = list(columns)
    keep = {"rank", "score", board.ranked_by}
    left_out = []
    while sum(_width(texts[c.key], c) + 1 for c in kept) > room:  # + 1: rich sets each column apart by one more
        droppable = [c for c in kept if c.key not in keep and c.group != "rank"]
        if not droppable:
            break
        left_out.insert(0, droppable[-1])
        kept.remove(droppable[-1])
    return kept, left_out


def _table(board: Board, width: int | None, terminal_width: int = 80) -> Table:
    columns = [c for c in board.columns if c.group in TABLE_GROUPS]
    if kind_of(board).carries_checkpoint_columns:  # the cost board shows them, not its terminal table
        columns = [c for c in columns if c.group != "cost"]
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 0), pad_edge=False, collapse_padding=True, show_edge=False,
                  width=width)
    longest = max((len(_name(e)) for e in board.entries), default=NAME_WIDTH)
    name_width = max(NAME_WIDTH, longest) if terminal_width >= WIDE else NAME_WIDTH
    texts = {c.key: [_cell_text(e.cells.get(c.key), c) for e in board.entries] for c in columns}
    columns, left_out = fit_columns(board, columns, texts, terminal_width - name_width - 1)  # 1: the name's gap
    table.add_column("encoding", max_width=name_width, overflow="ellipsis", no_wrap=True)
    for c in columns:  # a figure is never cut or folded across lines (its header may wrap): what cannot fit is left out
        table.add_column(escape(c.short), justify="right", overflow="fold", min_width=_width(texts[c.key], c))
    for i, e in enumerate(board.entries):
        table.add_row(Text(_name(e)), *(Text(texts[c.key][i]) for c in columns))
    if left_out:
        table.caption = f"left out to fit {terminal_width} columns: {', '.join(c.short for c in left_out)} (--format csv has them)"
    if any(c.chance is not None for c in columns):
        table.add_row("chance", *["" if c.chance is None else f"{c.chance:.{max(c.digits, 2)}f}" for c in columns],
                      style="dim")
    # a plain separator between the columns: SIMPLE_HEAD draws none, padding (0, 1) would cost two
    for col in table.columns[1:]:
        col.header = f" {col.header}"
    return table


def _legend(boards: list[Board]) -> str:
    shorts = {c.short: c for b in boards for c in b.columns if c.short != c.label and c.group != "scale"}
    parts = [f"{short}: {c.label}" for short, c in shorts.items()]
    return escape("columns: " + "; ".join(parts) + ". A row in parentheses is a training-free variant on that checkpoint.")


CSV_HEAD = ("board", "encoding", "trained_as", "column", "mean", "lo", "hi", "interval", "status")


def _rows(board: Board) -> list[list]:
    """Long-form rows for CSV, one per (entry, column): the mean, its interval and how it was computed."""
    rows = []
    for e in board.entries:
        for c in board.columns:
            cell = e.cells.get(c.key) or Cell(status="missing")
            bounded = cell.has_bounds
            rows.append([board.id, e.encoding, e.trained_as or "", c.key,
                         "" if cell.value is None else round(cell.value, 6),
                         round(cell.interval.lo, 6) if bounded else "", round(cell.interval.hi, 6) if bounded else "",
                         cell.interval.method if bounded else "", cell.status])
    return rows


def _markdown(board: Board) -> str:
    lines = [f"### {board.title}", ""]
    lines += [f"**{board.headline}**", ""] if board.headline else []
    lines += [f"> **Warning:** {w}" for w in board.warnings]
    lines += ["", f"{board.method}" + (f"; seeds {', '.join(map(str, board.seeds))}" if board.seeds else "")
              + ("" if board.chance is None else f"; chance {board.chance:.3g}") + ". " + " ".join(board.notes), ""]
    head = ["encoding"] + [c.label for c in board.columns]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join([":--"] + ["--:"] * len(board.columns)) + "|")
    for e in board.entries:
        name = for_terminal(e.display_name, MAX_LABEL).replace("|", "\\|") + (f" (on {e.trained_as})" if e.trained_as else "")
        cells = []
        for c in board.columns:
            cell = e.cells.get(c.key)
            interval = _interval(cell, c, compact=False)
            cells.append(_value(cell, c) + (f" {interval}" if interval else ""))
        lines.append("| " + " | ".join([name] + cells) + " |")
    return "\n".join(lines) + "\n"


def leaderboard(database: Path, board: str | None = None, fmt: str = "table", out=None, width: int | None = None,
                every: bool = False) -> int:
    """Print the answers and an index of the boards of ``database``, or the board named ``board``,
    or (``every``, and the csv and markdown formats) every board; returns an exit code."""
    out = out or sys.stdout
    err = Console(stderr=True, highlight=False)
    with connect_readonly(database) as con:
        lb = build(con)
    boards = lb.all
    if board is not None:
        chosen = lb.find(board)
        if chosen is None:
            names = [b.id for b in boards]
            err.print(f"no board '{board}'{did_you_mean(board, names)}; boards: {', '.join(names) or 'none'}",
                      markup=False, soft_wrap=True)
            return 1
        boards = [chosen]
    if not boards:
        err.print("no results yet: run `posbench run grids/quick.yaml`", markup=False)
        return 0
    if board is None and fmt != "csv":  # the site's answers, from the same canonical boards (suite.report.overview)
        lines = ["Answers (each from its question's canonical board, as on the site's index):", *answer_lines(lb)]
        text = "\n".join(textwrap.fill(line, width or 80, subsequent_indent="  ", break_long_words=False,
                                       break_on_hyphens=False) for line in lines) + "\n\n"
        out.write(for_terminal(text, len(text), lines=True))  # display names come from records: no escape reaches the terminal
        if not every and fmt == "table":  # the boards on request: an index of them, one line each
            out.write(for_terminal(_board_index(boards, width or 80), MAX_INDEX, lines=True))
            return 0
    print_boards(boards, fmt, out, width)
    return 0


MAX_INDEX = 1_000_000  # characters of the boards' index (hundreds of boards of a line each)


def _board_index(boards: list[Board], width: int) -> str:
    """One line a board: its id, rows and title, cut to ``width``; how to print one or all."""
    head = (f"Boards ({len(boards)}): `posbench leaderboard --board ID` prints one, `--all` prints every one.")
    lines = textwrap.wrap(head, width, break_long_words=False, break_on_hyphens=False)
    for b in boards:
        line = f"  {b.id}  ({len(b.entries)} rows)  {b.title}"
        lines.append(line if len(line) <= width else line[: width - 3] + "...")
    return "\n".join(lines) + "\n"


def print_boards(boards: list[Board], fmt: str = "table", out=None, width: int | None = None) -> None:
    """Write ``boards`` to ``out`` as a table, CSV or Markdown."""
    out = out or sys.stdout
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_HEAD)
        for b in boards:
            writer.writerows([[for_terminal(v, MAX_LABEL) if isinstance(v, str) else v for v in row] for row in _rows(b)])
        return
    if fmt == "markdown":
        text = "\n".join(_markdown(b) for b in boards)
        out.write(for_terminal(text, len(text), lines=True))
        return
    tty = out.isatty() if hasattr(out, "isatty") else False
    console = Console(file=out, highlight=False, width=width or (None if tty else 80), soft_wrap=False)
    for b in boards:
        console.print(f"[dim]board[/] {escape(b.id)}")
        for line in _header_lines(b):
            console.print(line)
        console.print(_table(b, None, console.width))
    console.print(f"[dim]{_legend(boards)}[/]")


def render_text(database: Path, board: str | None = None, fmt: str = "table", width: int | None = None) -> str:
    """The leaderboard as text (what :func:`leaderboard` prints, ``width`` columns wide)."""
    buf = io.StringIO()
    leaderboard(database, board, fmt, buf, width)
    return buf.getvalue()
