"""The scale view (suite.report.scale_view), tested by simulation against known truth: boards
built by the report's own code (suite.report.boards.scale_boards) from per-seed figures drawn
around true means chosen here, at two or three sizes; Kendall's tau, its bootstrap interval
and the finding's label are checked against what those true means imply."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from suite.report.boards import scale_boards
from suite.report.figures import Recipe
from suite.report.scale_view import agreement, questions

ENCODINGS = ["a", "b", "c", "d", "e", "f"]
FAST = 200  # bootstrap resamples where a test reads a label or a degenerate interval, not percentiles


def boards(truth: dict[str, dict[str, float]], sd: float, seeds: int, rng) -> list:
    """The lm boards of ``truth`` (size -> encoding -> true bpb at 16x): each seed's figure is the
    true mean plus Gaussian noise of ``sd``; 1x is the same for all. Each size has its own steps,
    as a size ladder scales them, so its own recipe label."""
    return budget_boards({(size, 100 * (1 + k)): means for k, (size, means) in enumerate(truth.items())}, sd, seeds, rng)


def test_a_ranking_that_holds_has_tau_1_and_its_leader_holds_at_every_size():
    rng = np.random.default_rng(1)
    means = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}  # a clear order, 0.5 bits apart
    (q,) = questions(boards({"tiny": means, "small": means, "medium": means}, sd=0.05, seeds=5, rng=rng),
                     ["tiny", "small", "medium"], FAST)
    assert q.sizes == ["tiny", "small", "medium"] and q.column == "s16"
    assert [a.size for a in q.agreements] == ["small", "medium"]
    for a in q.agreements:
        assert a.tau == pytest.approx(1.0) and a.lo == pytest.approx(1.0) and a.rows == len(ENCODINGS)
    assert q.leader == "a" and q.finding == "holds at every size"


def test_a_ranking_that_reverses_at_the_larger_size_is_labelled_where_it_changes():
    rng = np.random.default_rng(2)
    tiny = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    reversed_ = {e: 2.5 + 0.5 * (len(ENCODINGS) - 1 - i) for i, e in enumerate(ENCODINGS)}
    (q,) = questions(boards({"tiny": tiny, "small": tiny, "medium": reversed_}, sd=0.05, seeds=5, rng=rng),
                     ["tiny", "small", "medium"], FAST)
    small, medium = q.agreements
    assert small.tau == pytest.approx(1.0) and medium.tau == pytest.approx(-1.0) and medium.hi == pytest.approx(-1.0)
    assert q.finding == "changes at size medium"


def test_no_row_first_for_certain_is_no_finding():
    rng = np.random.default_rng(3)
    means = {e: 3.0 for e in ENCODINGS}  # all the same: nobody is first for certain
    (q,) = questions(boards({"tiny": means, "small": means}, sd=0.3, seeds=3, rng=rng), ["tiny", "small"], FAST)
    assert q.leader is None and q.finding.startswith("no finding")


def test_the_bootstrap_interval_covers_the_true_tau_of_a_partial_agreement():
    """True means that agree in part between the sizes (true tau 11/15 on 6 rows), per-seed noise
    of 1.5x the gap between neighbours, 6 seeds, so the estimates vary (measured: mean width of
    the interval 0.58, coverage 0.96 over 150 ladders, mean estimate 0.68, shrunk towards 0 by
    the noise): over 60 simulated ladders the 95% interval covers the true tau in most of them."""
    rng = np.random.default_rng(4)
    small_means = {e: 0.4 * i for i, e in enumerate(ENCODINGS)}
    order = [0, 2, 1, 4, 3, 5]  # two adjacent swaps
    large_means = {e: 0.4 * order[i] for i, e in enumerate(ENCODINGS)}
    true_tau = kendalltau([small_means[e] for e in ENCODINGS], [large_means[e] for e in ENCODINGS]).statistic
    assert abs(true_tau - 11 / 15) < 1e-12  # 13 concordant, 2 discordant pairs: (13 - 2) / 15
    covered, estimates, widths = 0, [], []
    for trial in range(60):
        draw = lambda means: {e: list(m + 0.6 * rng.standard_normal(6)) for e, m in means.items()}  # noqa: E731
        a = agreement(draw(small_means), draw(large_means), "large", lower_is_better=True, resamples=300, seed=trial)
        estimates.append(a.tau)
        widths.append(a.hi - a.lo)
        covered += a.lo <= true_tau <= a.hi
    assert np.mean(widths) > 0.3  # not a degenerate interval that covers by being the point
    assert covered >= 51  # 85% of 60
    assert abs(np.mean(estimates) - true_tau) < 0.15


def test_the_scale_page_states_each_questions_agreement_and_finding():
    from suite.report.pages import environment

    rng = np.random.default_rng(5)
    tiny = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    flipped = {**tiny, "a": tiny["b"] + 0.5}  # a falls behind b at the larger size
    qs = questions(boards({"tiny": tiny, "small": flipped}, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    env = environment()
    html = env.get_template("scale.html").render(root="", page="scale", n_runs=0, head=None, method="",
                                                 snapshot=None, questions=qs)
    (q,) = qs
    assert q.finding == "changes at size small" and f"lm: bpb at 16x: changes at size small" in html
    assert f"tiny against small: tau {q.agreements[0].tau:.2f} [{q.agreements[0].lo:.2f}, {q.agreements[0].hi:.2f}]" in html
    assert html.count("<tr><td class=\"name\">") == len(ENCODINGS)


def test_a_degenerate_interval_from_three_seeds_reads_too_few_seeds():
    """The published scale page's [1.00, 1.00] from 3 seeds: rows 0.5 bits apart with noise of
    0.05 never swap in a resample, so the bootstrap's interval has no width. It is shown as "too
    few seeds", not as an interval; with 6 seeds of real spread the interval is shown."""
    rng = np.random.default_rng(6)
    means = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    (q,) = questions(boards({"tiny": means, "small": means}, sd=0.05, seeds=3, rng=rng), ["tiny", "small"])
    (a,) = q.agreements
    assert a.lo == a.hi == pytest.approx(1.0) and a.seeds == 3
    assert not a.interval_shown and a.text == "1.00 (too few seeds for an interval: 3 a row)"
    noisy = {e: 2.5 + 0.1 * i for i, e in enumerate(ENCODINGS)}
    (q,) = questions(boards({"tiny": noisy, "small": noisy}, sd=0.15, seeds=6, rng=rng), ["tiny", "small"])
    (a,) = q.agreements
    assert a.lo < a.hi and a.interval_shown and a.text == f"{a.tau:.2f} [{a.lo:.2f}, {a.hi:.2f}]"


def test_rows_kept_in_order_by_every_resample_of_enough_seeds_are_no_interval_either():
    rng = np.random.default_rng(7)
    means = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    (q,) = questions(boards({"tiny": means, "small": means}, sd=0.05, seeds=5, rng=rng), ["tiny", "small"])
    (a,) = q.agreements
    assert a.lo == a.hi and a.text == "1.00 (no interval: every resample of 5+ seeds a row gave the same order)"


def test_of_two_boards_of_one_size_the_question_reads_the_canonical_one():
    """A zoo of six rows at three seeds and a board of three rows at six seeds, one recipe apart
    only in steps: the size's board is the one with the most rows, as the index's answer is
    (suite.report.overview.canonical_order), whichever comes first."""
    rng = np.random.default_rng(8)
    six = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    zoo = boards({"tiny": six, "small": six}, sd=0.05, seeds=3, rng=rng)
    few = boards({"tiny": {e: six[e] for e in ENCODINGS[:3]}}, sd=0.05, seeds=6, rng=rng)
    for order in (zoo + few, few + zoo):
        (q,) = questions(order, ["tiny", "small"])
        assert len(q.boards["tiny"].entries) == 6


def budget_boards(truth: dict[tuple[str, int], dict[str, float]], sd: float, seeds: int, rng) -> list:
    """The lm boards of ``truth`` ((size, steps) -> encoding -> true bpb at 16x): a size ladder's
    rungs, each at one or two budgets of steps."""
    figures, runs = [], {}
    for (size, steps), means in truth.items():
        recipe = Recipe(64, steps, 16, 3e-3)
        for enc, mean in means.items():
            for seed in range(seeds):
                run_id = f"{size}-{steps}-{enc}-{seed}"
                runs[run_id] = {"size": size, "task": "lm", "finished_at": "2026-11-27", "recipe": recipe}
                for scale, value in ((1, 2.0), (16, mean + sd * rng.standard_normal())):
                    figures.append({"checkpoint_level": False, "scale": scale, "metric": "bpb", "run_id": run_id,
                                    "size": size, "task": "lm", "encoding": enc, "display_name": enc, "family": None,
                                    "trained_as": enc, "eval_len": 64 * scale, "seed": seed, "value": value,
                                    "n": None, "status": "ok", "chance": None})
    return scale_boards(figures, runs)


def test_every_budget_of_a_rung_is_a_column_and_the_finding_reads_them_all():
    """A ladder of two rungs, each at two budgets: the leader holds at the square-root budget of
    the larger rung but not at its other budget, so the finding names that budget."""
    rng = np.random.default_rng(9)
    order = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    other = {**order, "a": order["f"] + 0.5}  # the leader falls to last
    truth = {("tiny", 600): order, ("tiny", 3175): order, ("small", 1604): order, ("small", 3175): other}
    (q,) = questions(budget_boards(truth, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert [label for label, _ in q.columns] == ["tiny, 600 steps", "tiny, 3,175 steps", "small, 1,604 steps",
                                                 "small, 3,175 steps"]
    assert [a.size for a in q.agreements] == ["tiny, 3,175 steps", "small, 1,604 steps", "small, 3,175 steps"]
    assert q.leader == "a" and q.finding == "changes at size small, 3,175 steps"
    same = {k: order for k in truth}
    (q,) = questions(budget_boards(same, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.finding == "holds at every size and budget"


def test_a_budget_trained_at_every_size_has_a_finding_of_its_own():
    """The ladder's second budget (the same 3,175 steps at every rung) read alone: its leader holds
    at every size where the square-root budget's boards say nothing (every row level), changes
    where another row leads at the larger size, and a budget trained at one size has no finding."""
    from suite.report.scale_view import BudgetFinding

    rng = np.random.default_rng(13)
    order = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    flat = {e: 3.0 for e in ENCODINGS}
    other = {**order, "a": order["f"] + 0.5}  # the leader falls to last, "b" leads
    truth = {("tiny", 600): flat, ("tiny", 3175): order, ("small", 1604): flat, ("small", 3175): order}
    (q,) = questions(budget_boards(truth, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.by_budget == [BudgetFinding(3175, ["tiny", "small"], "a", "a holds at every size")]
    (q,) = questions(budget_boards({**truth, ("small", 3175): other}, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.by_budget == [BudgetFinding(3175, ["tiny", "small"], "a", "a changes at size small")]
    (q,) = questions(budget_boards({**truth, ("tiny", 3175): flat}, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.by_budget == [BudgetFinding(3175, ["tiny", "small"], None,
                                         "no finding: no row is first for certain at size tiny")]
    (q,) = questions(boards({"tiny": order, "small": order}, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.by_budget == []  # one budget a size: the question's own finding is the budget's


def test_a_larger_size_where_no_row_is_first_for_certain_is_not_decided_there():
    """The leader holds at small; at medium every row's true mean is the same, so no row is first
    for certain there: the finding says it is not decided at medium, not that it changed."""
    rng = np.random.default_rng(11)
    order = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    flat = {e: 3.0 for e in ENCODINGS}
    (q,) = questions(boards({"tiny": order, "small": order, "medium": flat}, sd=0.05, seeds=5, rng=rng),
                     ["tiny", "small", "medium"], FAST)
    medium = q.boards["medium"]
    best = min((e.cells["s16"].value, e.encoding) for e in medium.entries)[1]
    assert q.leader == "a" and q.finding == ("not decided at size medium: no row is first for certain there "
                                             f"(best mean: {best})")


def test_a_size_trained_on_a_gpu_is_labelled_so():
    rng = np.random.default_rng(12)
    order = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    built = boards({"tiny": order, "base": order}, sd=0.05, seeds=5, rng=rng)
    for board in built:
        if board.size == "base":
            board.gpus = ["cuda:NVIDIA H200 (bf16-mixed)"]
    (q,) = questions(built, ["tiny", "base"], FAST)
    assert [label for label, _ in q.columns] == ["tiny", "base, on a GPU"]
    assert q.finding == "holds at every size"
