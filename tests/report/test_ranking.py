"""Boards ranked by suite.report.ranking, built from hand-made figures in the shapes the
published snapshot had: a noisy row beside a consistent one, a clear passkey lead."""

from __future__ import annotations

import numpy as np
import pytest

from suite.report.boards import scale_boards
from suite.report.figures import Recipe
from suite.report.headlines import seed_span
from suite.report.ranking import pairwise, rank_intervals, seeds_needed

RECIPE = Recipe(64, 100, 8, 1e-3)


def board(values: dict[str, dict[int, list[float]]], metric: str = "bpb", n: int | None = None):
    """The one scale board of ``values``: encoding -> scale -> per-seed values (seeds 0, 1, ...)."""
    figures, runs = [], {}
    task = "lm" if metric == "bpb" else "passkey"
    for enc, by_scale in values.items():
        for scale, per_seed in by_scale.items():
            for seed, value in enumerate(per_seed):
                run_id = f"{enc}-{seed}"
                runs[run_id] = {"size": "tiny", "task": task, "finished_at": "2026-11-20", "recipe": RECIPE}
                figures.append({"checkpoint_level": False, "scale": scale, "metric": metric, "run_id": run_id,
                                "size": "tiny", "task": task, "encoding": enc, "display_name": enc, "family": None,
                                "trained_as": enc, "eval_len": 64 * scale, "seed": seed, "value": value, "n": n,
                                "status": "ok", "chance": None})
    (only,) = scale_boards(figures, runs)
    return only


def spread(mean: float, sd: float) -> list[float]:
    """Three seeds with exactly this mean and sample standard deviation."""
    return [mean - sd, mean, mean + sd]


def test_a_noisy_row_with_a_worse_mean_is_listed_below_a_consistent_better_one():
    """xPos at 16x: 3.565 +- 0.97 bits per byte over three seeds; ALiBi 2.861 +- 0.045. Ranked
    by "1 + rows significantly better", xPos's spread kept every row from beating it and it was
    listed above ALiBi. Rows now go by their means; the rank intervals say what is known."""
    lm = board({
        "sinusoidal": {1: spread(2.40, 0.01), 16: [2.50, 2.52, 2.51]},
        "alibi": {1: spread(2.40, 0.01), 16: spread(2.861, 0.045)},
        "xpos": {1: spread(2.40, 0.01), 16: spread(3.565, 0.97)},
        "rope": {1: spread(2.40, 0.01), 16: [4.40, 4.43, 4.47]},
        "nope": {1: spread(2.40, 0.01), 16: [5.20, 5.26, 5.22]},
    })
    assert [e.encoding for e in lm.entries] == ["sinusoidal", "alibi", "xpos", "rope", "nope"]
    # xpos's noise leaves it anywhere from 1st to 5th: an interval, no longer a reward (ranked by
    # its lower end, as before, it would still come above alibi, which sinusoidal beats)
    assert {e.encoding: e.cells["rank"].text for e in lm.entries} == {
        "sinusoidal": "1-2", "alibi": "2-3", "xpos": "1-5", "rope": "3-4", "nope": "4-5"}
    assert "could be first" in lm.headline and "best mean: sinusoidal" in lm.headline


def test_a_passkey_lead_over_rows_at_zero_is_first_for_certain():
    """A passkey-shaped board with 10 seeds: one row at 1.000 / 0.997 / 0.872 / 0.612 at 2x-16x
    (exact match over 500 examples), six at 0 beyond 1x. The old test called such a lead a tie."""
    rng = np.random.default_rng(0)
    lead = {1: 1.0, 2: 1.0, 4: 0.997, 8: 0.872, 16: 0.612}
    values = {"alibi": {s: list(np.clip(m + rng.normal(0, 0.03 if m < 1 else 0, 10), 0, 1)) for s, m in lead.items()}}
    for enc in ("nope", "rope", "rope-pi", "yarn", "sinusoidal", "learned"):
        values[enc] = {1: [1.0] * 10, 2: [0.0] * 10, 4: [0.0] * 10, 8: [0.0] * 10, 16: [0.0] * 10}
    passkey = board(values, metric="exact_match", n=500)
    first = passkey.entries[0]
    assert first.encoding == "alibi" and (first.rank, first.rank_hi) == (1, 1)
    assert first.cells["rank"].text == "1"
    assert {e.cells["rank"].text for e in passkey.entries[1:]} == {"2-7"}  # the rows at 0 cannot be told apart
    assert passkey.headline == ("At 16x: alibi, ahead of every other entry (paired over seeds, Holm-corrected "
                                "p < 0.05; confirmed on seeds 5-9).")
    assert passkey.headline_status == "confirmed"
    assert not any(w.startswith("Underpowered") for w in passkey.warnings)


def test_a_lead_found_on_the_first_seeds_that_vanishes_on_the_rest_is_not_confirmed():
    """Seeds 0-4 favour 'lucky' by 0.3 bits per byte; seeds 5-9 reverse it."""
    base = [3.0, 3.1, 2.9, 3.05, 2.95, 3.0, 3.1, 2.9, 3.05, 2.95]
    lucky = [b - 0.3 for b in base[:5]] + [b + 0.3 for b in base[5:]]
    lm = board({"lucky": {1: base, 4: lucky}, "steady": {1: base, 4: base}})
    assert lm.headline_status == "not confirmed" and "not confirmed on seeds 5-9" in lm.headline


def test_a_discovery_half_with_no_lead_leaves_nothing_tested_on_the_rest():
    """The flip-flop board's shape: ten seeds of rows that no seed tells apart. Seeds 0-4 beat no
    row, so no claim went to seeds 5-9: "not tested", never "not confirmed on seeds 5-9"."""
    rng = np.random.default_rng(5)
    values = {enc: {1: [0.5] * 10, 4: list(0.5 + rng.normal(0, 0.02, 10))} for enc in ("a", "b", "c")}
    flip = board(values, metric="exact_match")
    assert flip.headline_status == "not tested"
    assert "not tested on seeds 5-9: seeds 0-4 alone show no row ahead of another" in flip.headline
    assert "confirmed" not in flip.headline


def test_a_discovery_half_that_puts_another_row_first_has_not_tested_the_headline():
    """Over ten seeds 'late' has the best mean, but seeds 0-4 alone put 'early' first: the
    headline's row was never the claim sent to seeds 5-9."""
    early = [2.0] * 5 + [3.0] * 5
    late = [2.5] * 5 + [2.0] * 5
    lm = board({"early": {1: [2.0] * 10, 4: [v + 0.01 * k for k, v in enumerate(early)]},
                "late": {1: [2.0] * 10, 4: [v + 0.01 * k for k, v in enumerate(late)]},
                "worst": {1: [2.0] * 10, 4: [4.0 + 0.01 * k for k in range(10)]}})
    assert lm.headline_status == "not tested"
    assert "not tested on seeds 5-9: seeds 0-4 alone put early first" in lm.headline


def test_a_could_be_first_headline_says_which_lead_was_confirmed():
    """'a' and 'b' share a checkpoint's quality and both beat 'c' (the GLUE board's shape: four
    rows could be first, what held on fresh seeds is their lead over the rest). The headline
    names both as possible firsts; "confirmed" names the lead that was tested."""
    rng = np.random.default_rng(2)
    shared = list(2.0 + rng.normal(0, 0.05, 10))
    lm = board({"a": {1: [2.0] * 10, 4: shared},
                "b": {1: [2.0] * 10, 4: [v + d for v, d in zip(shared, [0.02, -0.01, 0.015, -0.005, 0.01] * 2)]},
                "c": {1: [2.0] * 10, 4: [v + 1.0 for v in shared]}})
    assert "a and b could be first" in lm.headline
    assert lm.headline_status == "confirmed"
    assert "confirmed on seeds 5-9: a ahead of c)" in lm.headline


def test_three_seeds_are_too_few_to_confirm():
    lm = board({"a": {1: [2.0] * 3, 4: [2.0, 2.01, 2.02]}, "b": {1: [2.0] * 3, 4: [3.0, 3.02, 3.01]}})
    assert lm.headline_status == "too few seeds"
    assert "(paired over seeds, Holm-corrected p < 0.05; too few seeds to confirm)." in lm.headline


def test_an_underpowered_board_says_how_many_seeds_it_needs():
    """Two rows whose paired differences have an sd of 0.3 bpb cannot show 0.1 with three seeds."""
    lm = board({"a": {1: [2.0, 2.1, 2.2], 4: [3.0, 3.3, 2.7]}, "b": {1: [2.0, 2.1, 2.2], 4: [3.1, 3.0, 3.0]}})
    sd = np.std(np.subtract([3.0, 3.3, 2.7], [3.1, 3.0, 3.0]), ddof=1)
    needed = seeds_needed(0.1, sd, 2)
    assert f"Underpowered: 3 seeds; {needed} needed to detect 0.1 bits per byte at 80% power." in lm.warnings
    assert any(n.startswith("Power: meant to detect 0.1 bits per byte") and f"sd {sd:.3g}" in n for n in lm.notes)


def test_a_board_whose_rows_share_few_seeds_is_as_powered_as_its_least_shared_pair():
    """Rows run at different seeds (a board gathered from two grids): 'a' and 'b' at seeds 0-19,
    'c' at seeds 0-2. The board's seeds are 0-19, but c's pairs share three; twenty seeds of
    a and b do not give c's comparisons twenty seeds' power. The same rows all at seeds 0-19
    are powered."""
    rng = np.random.default_rng(3)
    a, b, c = (list(2.5 + rng.normal(0, 0.01, 20)) for _ in range(3))
    full = board({"a": {1: a, 4: a}, "b": {1: b, 4: b}, "c": {1: c, 4: c}})
    assert not any(w.startswith("Underpowered") for w in full.warnings)
    assert any(n.startswith("Power: meant") and n.endswith("; it has 20.") for n in full.notes)
    lm = board({"a": {1: a, 4: a}, "b": {1: b, 4: b}, "c": {1: c[:3], 4: c[:3]}})
    assert lm.seeds == list(range(20))
    needed = seeds_needed(0.1, ranking_sd(lm), 3)
    assert 3 < needed <= 20  # so twenty shared seeds would have been enough, and three are not
    assert (f"Underpowered: 20 seeds, 3 shared by its least-run pairs of rows; {needed} needed to detect 0.1 bits "
            "per byte at 80% power.") in lm.warnings
    assert any(n.endswith("; it has 20, but some of its pairs of rows share only 3.") for n in lm.notes)


def ranking_sd(lm) -> float:
    """The pooled sd a board's power note states."""
    (note,) = [n for n in lm.notes if n.startswith("Power: meant")]
    return float(note.split(" sd ")[1].split(" ")[0])


def test_seeds_needed_by_hand():
    """One paired test (two rows), d = 1, alpha 0.05, 80% power: 10 seeds (Cohen 1988's tables
    and G*Power agree). More rows: a stricter Bonferroni level, more seeds."""
    assert seeds_needed(1.0, 1.0, 2) == 10
    assert seeds_needed(1.0, 1.0, 20) > seeds_needed(1.0, 1.0, 5) > 10
    assert seeds_needed(1.0, 0.0, 20) == 2  # no spread: any difference shows
    assert seeds_needed(1.0, 1.0, 20, comparisons=19) > seeds_needed(1.0, 1.0, 20)


def test_holm_corrects_over_every_pair_of_the_board():
    """A pair significant alone (p = 0.013) is not once the board tests 45 pairs, the others
    all noise (Holm's first step divides 0.05 by 45)."""
    per_seed = {"a": {0: 1.0, 1: 2.0, 2: 3.0}, "b": {0: 0.5, 1: 1.6, 2: 2.4}}
    assert pairwise(per_seed, lower_is_better=True).better("b", "a")
    per_seed.update({f"noisy{k}": {0: 3.0, 1: 1.0, 2: 2.0 + 0.1 * k} for k in range(8)})
    tests = pairwise(per_seed, lower_is_better=True)
    assert tests.tested == 45 and not tests.better("b", "a")
    assert tests.adjusted[0] == pytest.approx(45 * tests.p[0])  # the smallest p: times the number of pairs
    assert rank_intervals(tests)["a"] == (1, 10)


@pytest.mark.parametrize("seeds, text", [([5, 6, 7, 8, 9], "5-9"), ([1, 4, 7], "1, 4, 7"), ([3], "3")])
def test_seed_spans(seeds, text):
    assert seed_span(seeds) == text


def test_rows_apart_by_the_same_difference_on_every_seed_pool_to_a_spread_of_0():
    """Every seed's difference the same, with the runs' text variance: the seed part of the pair's
    variance is 0, and its rounding (about -1e-22 for a quarter of these text variances) is not
    taken for a negative variance (the board's render stopped at "math domain error")."""
    for t in np.linspace(1e-6, 1e-2, 400):
        text = {row: {0: float(t), 1: float(t)} for row in "ab"}
        tests = pairwise({"a": {0: 2.0, 1: 2.0}, "b": {0: 2.5, 1: 2.5}}, True, text=text)
        assert tests.pooled_sd() == pytest.approx(0.0, abs=1e-6)  # the square root of a rounding: 1e-9
