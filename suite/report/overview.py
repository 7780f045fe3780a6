"""One answer per question: the overview at the top of the index, and the one function that
picks each question's board, so the index, the scale page, ``posbench leaderboard`` and the README
name the same answer by construction.

Each question ("which encoding is best on language modelling at long range", on the
length-generalization tasks, on the GLUE-style battery, which is cheapest) is answered by one
board, its **canonical** board (:func:`canonical_board`): of the boards of positional encodings
(never a board of architecture changes, suite.report.row_kinds) of the first kind it names that
has any, the one that holds the most encodings (a question about positional encodings is answered
where most of them meet at one recipe), then the longest scale, then the most seeds, then its id.
The other boards of that kind are "other recipes", a click away, and the answer says which
positional encodings with a row on them the canonical board lacks (:func:`lacking`). The overview
has one row per encoding of the canonical boards and one column per question: the entry's figure
there, its rank interval, and whether the board's headline names it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from suite.report import family
from suite.report.board_kinds import BOARD_KINDS
from suite.report.board_types import Board
from suite.report.stats import ALPHA

@dataclass(frozen=True)
class Question:
    kind: str  # the board kind that answers it (suite.report.board_kinds); also its key in the overview's rows
    text: str
    header: str  # its column in the overview table
    column: str | None = None  # a column read as it is, highest best; None: the board's ranks answer it
    descending: bool = True  # how the overview table sorts the column on a first click
    digits: int = 3
    # the kinds whose canonical board answers it, the first that has a board; () : ``kind`` alone
    preferred: tuple[str, ...] = ()
    # a column read as it is: the rows within this share of the best value answer too (a measurement
    # without an interval cannot tell a few per cent apart)
    tie: float = 0.0

    @property
    def kinds(self) -> tuple[str, ...]:
        return self.preferred or (self.kind,)


QUESTIONS = (
    Question("lm", "best on language modelling at the longest length", "language modelling", descending=False),
    Question("task", "best on a length-generalization task at the longest length", "length generalization"),
    Question("glue", "best GLUE-style score", "GLUE-style"),
    # a posbench bench record measures every encoding in one process, its speed a ratio to NoPE in the
    # same run (higher is cheaper); training runs' throughputs come from different processes and loads.
    # One bench run has no interval: rows within 10% of the fastest are not told apart (the bench's
    # rounds, alternating the list's order, move a figure by several per cent; CAPE, extra work, came
    # out 5% faster than NoPE)
    Question("cost", "cheapest to train (training tokens per second)", "cost", column="train_tokens_per_s", digits=0,
             preferred=("bench", "cost"), tie=0.1),
)


@dataclass
class Answer:
    question: Question
    board: Board | None
    column: str | None  # the column the answer is read at
    best: list[str] = field(default_factory=list)  # display names of the entries that answer it
    others: int = 0  # other boards of the kind ("other recipes")
    certain: bool = False  # the best is first for certain (rank interval "1"), not only possibly
    # the claim "first for certain", Holm-corrected across the index's ranked questions
    # (suite.report.family); None for a question read as it is (cost)
    family_p: float | None = None
    family: int = 0  # the questions in that family
    board_certain: bool = False  # first for certain on its board before the family's correction
    lacking: list[str] = field(default_factory=list)  # positional encodings on other boards of the kind, not on this

    @property
    def ranked(self) -> bool:
        return self.question.column is None


@dataclass
class Overview:
    answers: list[Answer]
    rows: list[dict]  # encoding -> {"display_name", "cells": {kind: (value, rank text or None)}}
    weights: tuple[int, int] | None = None  # the smallest and largest model behind the figures


def canonical(boards: list[Board], kind: str) -> Board | None:
    """The canonical board of one kind (module docstring)."""
    mine = [b for b in boards if b.kind == kind and b.entries and not b.architecture]
    return max(mine, key=canonical_order, default=None)


def canonical_order(board: Board) -> tuple:
    """What makes a board canonical, compared as a tuple (the largest wins): the most rows, then
    the longest scale, then the most seeds, then its id."""
    return len(board.entries), max(board.scales or [0]), len(board.seeds), board.id


def canonical_board(boards, question: Question | str) -> Board | None:
    """The board that answers ``question`` (a :class:`Question`, or the name of one's ``kind``):
    every page and the terminal read the answer from this board. ``boards``: a list of boards or a
    suite.report.leaderboard.Leaderboard."""
    boards = list(getattr(boards, "all", boards))
    if isinstance(question, str):
        question = next(q for q in QUESTIONS if q.kind == question)
    return next((b for k in question.kinds if (b := canonical(boards, k)) is not None), None)


def lacking(boards: list[Board], board: Board) -> list[str]:
    """The positional encodings with a row on another board of ``board``'s kind that ``board``
    lacks (display names, sorted): what its answer does not cover."""
    have = {e.encoding for e in board.entries}
    names = {e.encoding: e.display_name for b in boards if b.kind == board.kind and not b.architecture
             for e in b.entries if e.encoding not in have}
    return sorted(names.values(), key=str.lower)


def _answer(boards: list[Board], question: Question) -> Answer:
    for kind in question.kinds:
        BOARD_KINDS.get(kind)  # a name that is not a kind is an error, not a question without an answer
    board = canonical_board(boards, question)
    kind = board.kind if board is not None else question.kinds[-1]
    others = sum(1 for b in boards if b.kind == kind and b.entries) - (board is not None)
    if board is None:
        return Answer(question, None, None, others=others)
    missing = lacking(boards, board)
    if question.column is not None:  # read as it is: the highest value answers
        values = [(e.cells[question.column].value, e.display_name) for e in board.entries
                  if e.cells.get(question.column) and e.cells[question.column].value is not None]
        top = max((v for v, _ in values), default=None)
        best = [name for v, name in sorted(values, reverse=True) if v >= top * (1 - question.tie)] if values else []
        return Answer(question, board, question.column, best, others, lacking=missing)
    first = [e.display_name for e in board.entries if e.rank == 1 and e.rank_hi == 1]
    if first:
        return Answer(question, board, board.ranked_by, first, others, certain=True, lacking=missing)
    # no row is first for certain: the rows whose rank interval starts at 1 could each be
    return Answer(question, board, board.ranked_by, [e.display_name for e in board.entries if e.rank == 1], others,
                  lacking=missing)


def overview(boards: list[Board], runs: dict | None = None) -> Overview:
    """``runs``: run_id -> the run's row (suite.report.figures), for the models' sizes."""
    sizes = sorted(r["n_params"] for r in (runs or {}).values() if r.get("n_params"))
    answers = [_answer(boards, question) for question in QUESTIONS]
    _correct_as_one_family(answers)
    rows: dict[str, dict] = {}
    # the ranked questions' boards make the rows; a measured column (cost) fills the rows they have,
    # so a bench of every encoding does not add a row per encoding that is on no canonical board
    for a in sorted(answers, key=lambda a: not a.ranked):
        if a.board is None or a.column is None:
            continue
        for e in a.board.entries:
            if not a.ranked and rows and e.encoding not in rows:
                continue
            row = rows.setdefault(e.encoding, {"encoding": e.encoding, "display_name": e.display_name, "cells": {}})
            cell = e.cells.get(a.column)
            rank = e.cells.get("rank")
            row["cells"][a.question.kind] = (None if cell is None else cell.value, None if rank is None else rank.text)
    return Overview(answers, sorted(rows.values(), key=lambda r: r["display_name"].lower()),
                    (sizes[0], sizes[-1]) if sizes else None)


def _correct_as_one_family(answers: list[Answer]) -> None:
    """A ranked answer is "first for certain" only when its claim survives Holm's correction
    across every ranked question the index quotes (suite.report.family)."""
    ranked = [a for a in answers if a.ranked and a.board is not None]
    for a, p in zip(ranked, family.corrected([a.board for a in ranked])):
        a.family_p, a.family, a.board_certain = p, len(ranked), a.certain
        a.certain = a.certain and p < ALPHA


LACKING_SHOWN = 8  # the most lacking encodings an answer names; the rest are counted
LISTED = 4  # the most answering rows an answer names (as a headline: suite.report.headlines.LISTED)


def answer_text(a: Answer) -> str:
    """One answer in plain words, the same on the scale page and in the terminal as on the index."""
    head = f"{a.question.text[0].upper()}{a.question.text[1:]}: "
    if a.board is None:
        return head + "no board of this kind."
    names = ", ".join(a.best) or "no entry"
    if len(a.best) > LISTED:  # a list of 35 names is no answer
        names = f"{len(a.best)} of its {len(a.board.entries)} rows ({'best mean' if a.ranked else 'best'}: {a.best[0]})"
    if a.ranked and a.best:
        if a.certain:
            how = f"first for certain (Holm-corrected across the {a.family} questions, p = {a.family_p:.2g})"
        elif a.board_certain:
            how = (f"first on its board, not after Holm's correction across the {a.family} questions "
                   f"(p = {a.family_p:.2g})")
        else:
            how = "each could be first" if len(a.best) > 1 else "could be first"
        names += f" ({how})"
    elif a.best and a.question.tie:
        names += f" (within {round(a.question.tie * 100)}% of the fastest: one measurement, no interval)"
    status = f", headline {a.board.headline_status}" if a.board.headline_status else ""
    shown = ", ".join(a.lacking[:LACKING_SHOWN]) + (", ..." if len(a.lacking) > LACKING_SHOWN else "")
    lacks = f"; it lacks {len(a.lacking)} encoding(s) of other recipes, not trained at its recipe: {shown}" if a.lacking else ""
    return f"{head}{names}. Canonical board {a.board.id} ({len(a.board.entries)} rows{status}{lacks})."


def answer_lines(boards) -> list[str]:
    """Every question's :func:`answer_text`, from ``boards`` (a list, or a Leaderboard)."""
    boards = list(getattr(boards, "all", boards))
    return [answer_text(a) for a in overview(boards).answers]
