"""A board whose kind of figure moves across machine classes by more than its intervals says so, and
says on which classes its headline held (suite.report.board_arithmetic)."""

from __future__ import annotations

from suite.report import stats
from suite.report.board_arithmetic import arithmetic_note, typical_half_width
from suite.report.board_types import Board, Cell, Column, Entry
from suite.results.tolerances import KindTolerance, Tolerances


def board(half_widths: list[float]) -> Board:
    entries = [Entry(f"e{i}", f"E{i}", None, None,
                     cells={"s16": Cell(0.5, stats.Interval(0.5, 0.5 - w, 0.5 + w, 5, "t"))})
               for i, w in enumerate(half_widths)]
    return Board(id="flip", kind="task", title="t", size="tiny", task="flip_flop", metric="acc",
                 columns=[Column("s16", "16x", "16x", "")], entries=entries, seeds=[0, 1, 2], method="t",
                 ranked_by="s16")


def test_typical_half_width_is_the_median_of_the_ranked_column():
    assert abs(typical_half_width(board([0.01, 0.03, 0.05])) - 0.03) < 1e-12


def test_a_kind_that_moves_more_than_the_interval_is_flagged_with_where_its_headline_held():
    moves = Tolerances({"flip_flop acc": KindTolerance(0.2, 0.07, 100, 40)},
                       {"flip": {"AMD (25/1)": "changed to: A and B could be first", "Intel": "holds"}})
    note = arithmetic_note(board([0.01, 0.03, 0.05]), moves)
    assert note.startswith("Arithmetic-sensitive: across machine classes a figure of this kind may move by up to "
                           "0.2 (its measured tolerance; the largest move seen: 0.07), more than this board's "
                           "typical interval (±0.03)")
    assert "Its headline held when re-run on Intel." in note
    assert "Its headline did not hold when re-run on AMD (25/1)." in note


def test_a_tolerance_wider_than_the_interval_flags_the_board_though_the_largest_move_seen_is_not():
    """The flag reads the tolerance verify and replicate allow (0.2 here), not the one move seen (0.06)."""
    wide = Tolerances({"flip_flop acc": KindTolerance(0.2, 0.06, 100, 40)}, {"flip": {"Intel": "holds"}})
    note = arithmetic_note(board([0.1, 0.14, 0.16]), wide)
    assert note.startswith("Arithmetic-sensitive") and note.endswith("Its headline held when re-run on Intel.")
    assert arithmetic_note(board([0.25, 0.3]), wide) is None  # intervals wider than the tolerance


def test_a_kind_that_moves_less_than_the_interval_and_holds_everywhere_says_nothing():
    quiet = Tolerances({"flip_flop acc": KindTolerance(2e-5, 1e-5, 100, 40)}, {"flip": {"Intel": "holds"}})
    assert arithmetic_note(board([0.01, 0.03]), quiet) is None
    assert arithmetic_note(board([0.01, 0.03]), Tolerances()) is None


def test_a_task_no_sample_re_ran_is_judged_by_its_metrics_largest_move():
    other = Tolerances({"acc": KindTolerance(0.2, 0.07, 100, 40)})
    note = arithmetic_note(board([0.01, 0.03]), other)
    assert "acc on another task (this task's figures were not re-run) may move by up to 0.2" in note
    assert note.endswith("Its headline has not been re-run on another machine class.")
