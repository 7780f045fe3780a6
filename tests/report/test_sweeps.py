"""The learning-rate sweeps an encoding's page lists (suite.report.sweeps.lr_sweeps), read from a
real DuckDB file of published records: the size ladder trains ALiBi at tiny at two budgets (600
steps in grids/ladder-lm.yaml, 3,175 in grids/ladder-lm-budget.yaml), each with its own sweep and
chosen rate."""

from __future__ import annotations

from collections import defaultdict

from suite.report.sweeps import lr_sweeps
from suite.results.snapshot_cache import published_database
from suite.results.store import connect_readonly
from tests.snapshot_cut import cut_snapshot


def test_a_size_trained_at_two_budgets_lists_each_budgets_sweep_and_its_own_chosen_rate(tmp_path):
    snapshot = tmp_path / "leaderboard"
    cut_snapshot(snapshot, ["ladder-lm", "ladder-lm-budget"],
                 lambda run: run["encoding"] == "alibi" and run["size"] == "tiny" and run["task"] == "lm"
                 and len(run["run"]["train"].get("lr_sweep") or []) > 1)
    with connect_readonly(published_database(snapshot, tmp_path / ".cache" / "published").database) as con:
        rows = lr_sweeps(con)["alibi"]
    by_steps = defaultdict(list)
    for r in rows:
        by_steps[r["steps"]].append(r)
    assert sorted(by_steps) == [600, 3175]
    for sweep in by_steps.values():
        assert sorted(r["lr"] for r in sweep) == [0.001, 0.003, 0.01] and {r["seed"] for r in sweep} == {0}
        (chosen,) = [r for r in sweep if r["chosen"]]
        assert chosen["validation_loss"] == min(r["validation_loss"] for r in sweep)
    assert [r["steps"] for r in rows] == sorted(r["steps"] for r in rows)  # each budget's rows together


def test_an_encodings_page_lists_its_sweeps_smallest_size_first_each_budget_together(tmp_path):
    """Sizes by their weights (tiny, then small), not by name; each budget's rates together."""
    from suite.report.leaderboard import build
    from suite.report.pages import encoding_pages

    snapshot = tmp_path / "leaderboard"
    cut_snapshot(snapshot, ["ladder-lm", "ladder-lm-budget"],
                 lambda run: run["encoding"] == "alibi" and run["size"] in ("tiny", "small") and run["task"] == "lm"
                 and len(run["run"]["train"].get("lr_sweep") or []) > 1)
    with connect_readonly(published_database(snapshot, tmp_path / ".cache" / "published").database) as con:
        (page,) = [p for p in encoding_pages(con, build(con)) if p["name"] == "alibi"]
    assert [(r["size"], r["steps"]) for r in page["sweeps"][::3]] == [("tiny", 600), ("tiny", 3175), ("small", 1604),
                                                                      ("small", 3175)]
    assert [r["lr"] for r in page["sweeps"]] == [0.001, 0.003, 0.01] * 4
    runs = [(r["size"], r["recipe"].steps) for r in page["runs"]]
    assert runs == sorted(runs, key=lambda run: (run[0] != "tiny", run[1]))  # tiny's first, each budget together
