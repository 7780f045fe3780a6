"""The scale view (suite.report.scale_view), tested by simulation against known truth: boards
built by the report's own code (suite.report.boards.scale_boards) from per-seed figures drawn
around true means chosen here, at two or three sizes; Kendall's tau, its bootstrap interval
and the finding's label are checked against what those true means imply."""

from __future__ import annotations

import numpy as np
import pytest

from suite.report.boards import scale_boards
from suite.report.figures import Recipe
from suite.report.scale_view import questions

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


def test_rows_kept_in_order_by_95_percent_of_the_resamples_of_enough_seeds_are_no_interval_either():
    """lo == hi says that 95% of the resamples or more gave one tau, not that every one did, and a
    bootstrap of 5 or 6 seeds understates a mean's spread: the text says both (the page sends the
    reader to the rank intervals)."""
    rng = np.random.default_rng(7)
    means = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    (q,) = questions(boards({"tiny": means, "small": means}, sd=0.05, seeds=5, rng=rng), ["tiny", "small"])
    (a,) = q.agreements
    assert a.lo == a.hi and a.text == ("1.00 (no interval: at least 95% of the resamples gave 1.00, and a bootstrap of "
                                       "as few as 5 seeds a row understates the spread)")


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


def budget_boards(truth: dict[tuple, dict[str, float]], sd: float, seeds: int, rng, batch: int = 16) -> list:
    """The lm boards of ``truth`` ((size, steps) or (size, steps, lr) -> encoding -> true bpb at
    16x): a size ladder's rungs, each at one or two budgets of steps (lr 3e-3 unless named)."""
    figures, runs = [], {}
    for (size, steps, *lr), means in truth.items():
        recipe = Recipe(64, steps, batch, lr[0] if lr else 3e-3)
        for enc, mean in means.items():
            for seed in range(seeds):
                run_id = f"{size}-{steps}-{recipe.lr}-{enc}-{seed}"
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
    assert [label for label, _ in q.columns] == ["tiny at 600 steps", "tiny at 3,175 steps", "small at 1,604 steps",
                                                 "small at 3,175 steps"]
    assert [a.size for a in q.agreements] == ["tiny at 3,175 steps", "small at 1,604 steps", "small at 3,175 steps"]
    assert q.leader == "a" and q.finding == "changes at size small at 3,175 steps"
    same = {k: order for k in truth}
    (q,) = questions(budget_boards(same, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.finding == "holds at every size and budget"


def test_a_board_of_a_columns_label_with_fewer_rows_is_named_not_dropped_unseen():
    """Two boards of one size, steps and recipe label (another learning rate, untuned, which the
    label leaves out): the question reads the one with more rows, and the page names the other."""
    from suite.report.pages import environment

    rng = np.random.default_rng(21)
    order = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    truth = {("tiny", 600): order, ("small", 1604): order, ("small", 1604, 1e-3): {e: order[e] for e in "abc"}}
    (q,) = questions(budget_boards(truth, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    (other,) = q.left_out
    assert len(other.entries) == 3 and len(q.boards["small"].entries) == 6 and other.id != q.boards["small"].id
    html = environment().get_template("scale.html").render(root="", page="scale", n_runs=0, head=None, method="",
                                                           snapshot=None, questions=[q])
    assert "Not read by this question" in html and other.id in html
    (q,) = questions(budget_boards({k: v for k, v in truth.items() if len(k) == 2}, sd=0.05, seeds=5, rng=rng),
                     ["tiny", "small"], FAST)
    assert q.left_out == []


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
    assert [label for label, _ in q.columns] == ["tiny", "base on a GPU"]
    assert q.finding == "holds at every size (across devices: base on a GPU)"


def task_boards(truth: dict[str, dict[str, tuple[float, ...]]], seeds: int, rng) -> list:
    """The flip-flop boards of ``truth`` (size -> encoding -> true accuracy at (4x, 16x), or at
    (4x, 16x, 1x); 0.99 at 1x unless named), each longer length's figure per seed the true
    accuracy plus noise of 0.01, on 1,000 examples."""
    figures, runs = [], {}
    for k, (size, rows) in enumerate(truth.items()):
        recipe = Recipe(16, 100 * (1 + k), 16, 3e-3)
        for enc, (at4, at16, *at1) in rows.items():
            for seed in range(seeds):
                run_id = f"{size}-{enc}-{seed}"
                runs[run_id] = {"size": size, "task": "flip_flop", "finished_at": "2026-11-28", "recipe": recipe}
                for scale, value in ((1, at1[0] if at1 else 0.99), (4, at4), (16, at16)):
                    figures.append({"checkpoint_level": False, "scale": scale, "metric": "acc", "run_id": run_id,
                                    "size": size, "task": "flip_flop", "encoding": enc, "display_name": enc,
                                    "family": None, "trained_as": enc, "eval_len": 16 * scale, "seed": seed,
                                    "value": value + 0.01 * rng.standard_normal() if scale > 1 else value,
                                    "n": 1000, "status": "ok", "chance": 0.5})
    return scale_boards(figures, runs)


def test_a_task_question_is_answered_at_4x_where_its_boards_rank_at_16x():
    """A task's question is asked at 4x, its boards rank at their longest scale (16x). Here a
    leads at 4x at both sizes while b leads at 16x: the finding (a holds) and the ranks shown are
    4x's."""
    rng = np.random.default_rng(16)
    rows = {"a": (0.90, 0.55), "b": (0.70, 0.80), "c": (0.60, 0.60)}
    (q,) = [q for q in questions(task_boards({"tiny": rows, "small": rows}, seeds=5, rng=rng), ["tiny", "small"], FAST)
            if q.column == "s4"]
    assert q.title == "flip_flop: acc at 4x"
    assert {e.encoding: e.cells["rank"].text for e in q.boards["tiny"].entries}["b"] == "1"  # the board's own: 16x
    assert q.leader == "a" and q.finding == "holds at every size"
    assert q.ranks["tiny"] == q.ranks["small"] == {"a": "1", "b": "2", "c": "3"}
    assert q.rows == ["a", "b", "c"]  # the table's order is 4x's too (the board's own is 16x's: b, c, a)


def test_a_size_without_the_leader_or_with_one_row_decides_nothing():
    """Rows present at one size and not the other: a larger size with the leader alone, or without
    the leader (whoever leads the others there), is not decided; a finding needs the leader
    among two rows or more there."""
    rng = np.random.default_rng(17)
    order = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    alone = {"a": order["a"]}
    (q,) = questions(boards({"tiny": order, "small": alone}, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.finding == "not decided at size small: no row is first for certain there (best mean: a)"
    without = {e: m for e, m in order.items() if e != "a"}
    (q,) = questions(boards({"tiny": order, "small": without}, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.finding == "not decided at size small: a has no figure there"
    assert q.rows == ENCODINGS and "a" not in q.ranks["small"]
    extra = {**order, "g": 9.0}  # a row only the larger size has is listed too
    (q,) = questions(boards({"tiny": order, "small": extra}, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.rows == [*ENCODINGS, "g"] and q.finding == "holds at every size"


def test_a_leader_first_among_fewer_rows_at_a_larger_size_is_not_decided_there():
    """The leader first for certain at the larger size, but among fewer rows than at the smallest:
    a row not trained there might have led it, so the finding names the rows missing there, not
    "holds"."""
    rng = np.random.default_rng(19)
    order = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    fewer = {e: m for e, m in order.items() if e in ("a", "b", "c")}
    (q,) = questions(boards({"tiny": order, "small": fewer}, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.leader == "a" and q.finding == "not decided at size small: d, e, f not trained there"


def test_a_budgets_finding_names_its_rows_where_the_question_has_more():
    """A ladder trains its second budget for a few rows: its finding holds among those, and a row
    it did not train may lead the question's other boards, so the finding names its rows."""
    from suite.report.scale_view import BudgetFinding

    rng = np.random.default_rng(20)
    order = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    few = {e: order[e] + 0.3 for e in ("b", "c", "d")}  # the question's leader, a, not among them
    truth = {("tiny", 600): order, ("tiny", 3175): few, ("small", 1604): order, ("small", 3175): few}
    (q,) = questions(budget_boards(truth, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.leader == "a" and q.finding.startswith("not decided at size tiny at 3,175 steps")
    assert q.by_budget == [BudgetFinding(3175, ["tiny", "small"], "b",
                                         "b holds at every size, among the 3 rows trained at 3,175 steps (b, c, d)")]


def test_a_change_at_one_of_several_sizes_is_claimed_at_a_corrected_level():
    """A ladder of five sizes where a leads at the smallest and a and b are level at the four
    larger ones (c far behind): any "changes" is false. Uncorrected, each larger size would
    call b first with probability up to 0.025 (b ahead of a, one side of a two-sided test), so
    one of the four up to about 10% of the time; Bonferroni over the four keeps it under 2.5%
    (measured with these draws: 3 of 120 ladders; 9 of 120 with each size at 0.05, which this
    test refuses)."""
    rng = np.random.default_rng(18)
    sizes = ["s0", "s1", "s2", "s3", "s4"]
    base = {"a": 2.0, "b": 3.0, "c": 4.0}
    level = {"a": 3.0, "b": 3.0, "c": 5.0}
    false_changes = 0
    for _ in range(120):
        built = boards({size: (base if size == "s0" else level) for size in sizes}, sd=0.2, seeds=5, rng=rng)
        (q,) = questions(built, sizes, 1)
        assert q.leader == "a"
        false_changes += q.finding.startswith("changes")
    assert false_changes <= 6  # 5% of 120


def test_boards_of_another_batch_size_answer_another_question():
    rng = np.random.default_rng(19)
    order = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    built = (budget_boards({("tiny", 600): order}, sd=0.05, seeds=5, rng=rng)
             + budget_boards({("small", 1604): order}, sd=0.05, seeds=5, rng=rng, batch=32))
    assert questions(built, ["tiny", "small"], FAST) == []
    both = built + budget_boards({("small", 1604): order}, sd=0.05, seeds=5, rng=rng)
    both += budget_boards({("tiny", 600): order}, sd=0.05, seeds=5, rng=rng, batch=32)
    titles = sorted(q.title for q in questions(both, ["tiny", "small"], FAST))  # two questions of one figure
    assert titles == ["lm: bpb at 16x (L = 64, steps x 16)", "lm: bpb at 16x (L = 64, steps x 32)"]


def exact_boards(values: dict[str, dict[str, list[float]]]) -> list:
    """The lm boards of ``values`` (size -> encoding -> its figure at 16x for seeds 0, 1, ...), as
    they are: no noise drawn, each size at its own steps."""
    figures, runs = [], {}
    for k, (size, rows) in enumerate(values.items()):
        recipe = Recipe(64, 100 * (1 + k), 16, 3e-3)
        for enc, per_seed in rows.items():
            for seed, value in enumerate(per_seed):
                run_id = f"{size}-{enc}-{seed}"
                runs[run_id] = {"size": size, "task": "lm", "finished_at": "2026-11-28", "recipe": recipe}
                for scale, v in ((1, 2.0), (16, value)):
                    figures.append({"checkpoint_level": False, "scale": scale, "metric": "bpb", "run_id": run_id,
                                    "size": size, "task": "lm", "encoding": enc, "display_name": enc, "family": None,
                                    "trained_as": enc, "eval_len": 64 * scale, "seed": seed, "value": v, "n": None,
                                    "status": "ok", "chance": None})
    return scale_boards(figures, runs)


def test_a_row_ahead_at_005_but_not_at_the_corrected_level_leaves_the_size_undecided():
    """At medium b is ahead of the leader a by per-seed differences whose paired t-test gives
    p = 0.040 (scipy.stats.ttest_1samp of [0.10, 0.25, 0.30, 0.00, 0.15]), c far behind: b is first
    for certain at 0.05 there, and the rank shown says so, but a change among two columns is
    claimed at 0.025, so the finding says it is not decided there, and why."""
    a = [3.0 + v for v in (0.0, 0.05, -0.05, 0.02, -0.02)]
    lead = {"a": [2.0 + v for v in (0.0, 0.01, -0.01, 0.02, -0.02)],
            "b": [3.0 + v for v in (0.01, 0.0, 0.02, -0.01, 0.0)],
            "c": [4.0 + v for v in (0.0, -0.02, 0.01, 0.01, 0.0)]}
    medium = {"a": a, "b": [x - d for x, d in zip(a, (0.10, 0.25, 0.30, 0.00, 0.15))],
              "c": [x + 2.0 + v for x, v in zip(a, (0.01, -0.01, 0.02, 0.0, -0.02))]}
    (q,) = questions(exact_boards({"tiny": lead, "small": lead, "medium": medium}), ["tiny", "small", "medium"], FAST)
    assert q.leader == "a" and q.ranks["medium"]["b"] == "1"
    assert q.finding == ("not decided at size medium: b is first for certain there at 0.05, not at the 0.05 / 2 "
                         "a change among 2 columns needs")


def test_the_rows_trained_in_every_column_have_a_finding_of_their_own():
    """A ladder trains its larger sizes for a few rows: here "g", trained at tiny alone, is level
    with "a" there, so the question's own finding is none; among the rows trained at both sizes
    (a to f), a is first for certain at tiny and holds at small, or changes where b leads there.
    Where every row is trained at every size there is no such finding (it would be the question's)."""
    from suite.report.scale_view import CommonFinding

    rng = np.random.default_rng(22)
    order = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    with_g = {**order, "g": order["a"]}
    (q,) = questions(boards({"tiny": with_g, "small": order}, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.finding.startswith("no finding")
    assert q.among_common == CommonFinding(ENCODINGS, "a", "a holds at every size")
    flipped = {**order, "a": order["f"] + 0.5}
    (q,) = questions(boards({"tiny": with_g, "small": flipped}, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.among_common == CommonFinding(ENCODINGS, "a", "a changes at size small")
    level = {e: 3.0 for e in ENCODINGS}
    (q,) = questions(boards({"tiny": {**level, "g": 2.0}, "small": order}, sd=0.05, seeds=5, rng=rng),
                     ["tiny", "small"], FAST)
    assert q.leader == "g" and q.among_common.leader is None and q.among_common.finding.startswith("no finding")
    (q,) = questions(boards({"tiny": order, "small": order}, sd=0.05, seeds=5, rng=rng), ["tiny", "small"], FAST)
    assert q.among_common is None


def test_the_rows_in_every_column_are_ranked_among_themselves():
    """Holm's correction over those rows' pairs only: at tiny, a is ahead of b by per-seed
    differences whose paired t-test gives p = 0.011 (scipy.stats.ttest_1samp of [0.05, 0.06,
    0.09, 0.10, 0.02]). Thirteen rows trained at tiny alone, level with one another and far
    behind both, make 105 pairs there: Holm's step-down rejects the 26 pairs of a or b with a
    far row first, then asks that pair p < 0.05 / 79, so a is not first for certain on the
    question's own board; among a and b alone (one pair) it is, at 0.05."""
    b = [3.0 + v for v in (0.0, 0.02, -0.01, 0.01, 0.0)]
    a = [x - d for x, d in zip(b, (0.05, 0.06, 0.09, 0.10, 0.02))]
    far = {f"z{i}": [6.0 + 0.1 * ((7 * i + 3 * k) % 5) for k in range(5)] for i in range(13)}
    (q,) = questions(exact_boards({"tiny": {"a": a, "b": b, **far}, "small": {"a": a, "b": b}}),
                     ["tiny", "small"], FAST)
    assert q.leader is None
    assert q.among_common is not None and q.among_common.rows == ["a", "b"] and q.among_common.leader == "a"


def test_the_scale_page_and_the_index_state_the_finding_of_the_rows_in_every_column():
    from types import SimpleNamespace

    from suite.report.pages import environment

    rng = np.random.default_rng(23)
    order = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    qs = questions(boards({"tiny": {**order, "g": order["a"]}, "small": order}, sd=0.05, seeds=5, rng=rng),
                   ["tiny", "small"], FAST)
    env = environment()
    scale = env.get_template("scale.html").render(root="", page="scale", n_runs=0, head=None, method="",
                                                  snapshot=None, questions=qs)
    assert "Among the 6 rows trained in every column (a, b, c, d, e, f): a holds at every size." in scale
    index = env.get_template("overview.html").render(root="", ov=SimpleNamespace(weights=None, answers=[], rows=[]),
                                                     at_scale=qs)
    assert ("lm: bpb at 16x, no finding: no row is first for certain at the smallest size (tiny, small), among the 6 "
            "rows trained in every column (a, b, c, d, e, f) a holds at every size") in " ".join(index.split())


def test_the_rows_in_every_column_are_read_among_themselves_at_every_size():
    """A row trained at the first two sizes alone ("g", level with "a" at both) leaves the
    question's own finding none; among the rows of every column, "a" holds at every size. Were
    the middle size's board read with "g" in it, "a" would not be first there."""
    rng = np.random.default_rng(24)
    order = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    with_g = {**order, "g": order["a"]}
    (q,) = questions(boards({"tiny": with_g, "small": with_g, "medium": order}, sd=0.05, seeds=5, rng=rng),
                     ["tiny", "small", "medium"], FAST)
    assert q.finding.startswith("no finding") and q.ranks["small"]["a"] != "1"
    assert q.among_common.rows == ENCODINGS and q.among_common.finding == "a holds at every size"


def test_rows_in_every_column_all_at_chance_are_not_ranked_among_themselves():
    """A task question whose rows of every column are no better than chance at any length (a at
    0.50, b below it at 0.30, on 1,000 examples) beside a row trained at the smallest size alone
    that is (g): the smallest size's board is ranked, for g; among a and b alone nothing beats
    chance, so neither is first, though a's paired tests put it ahead of b, as a board of them
    alone would not be ranked."""
    rng = np.random.default_rng(25)
    chance = {"a": (0.50, 0.50, 0.50), "b": (0.30, 0.30, 0.30)}
    (q,) = [q for q in questions(task_boards({"tiny": {**chance, "g": (0.95, 0.95, 0.99)}, "small": chance},
                                             seeds=5, rng=rng), ["tiny", "small"], FAST) if q.column == "s4"]
    assert q.ranks["tiny"]["g"] == "1"
    assert q.among_common.rows == ["a", "b"] and q.among_common.leader is None
