"""Code against prose (suite.report.corpus_view), tested on boards built by the report's own code
from per-seed figures drawn around true means chosen here: the rank agreement and the rows whose
rank moves are checked against what those true means imply."""

from __future__ import annotations

import numpy as np
import pytest

from suite.report.boards import scale_boards
from suite.report.corpus_view import comparisons
from suite.report.figures import Recipe

ENCODINGS = ["a", "b", "c", "d", "e", "f"]


def boards(truth: dict[str, dict[str, float]], sd: float, seeds: int, rng) -> list:
    """The lm boards of ``truth`` (task -> encoding -> true bpb at 16x, the same at 1x plus 1),
    one recipe for both tasks; each seed's figure the true mean plus Gaussian noise of ``sd``."""
    figures, runs = [], {}
    recipe = Recipe(64, 600, 16, 3e-3)
    for task, means in truth.items():
        for enc, mean in means.items():
            for seed in range(seeds):
                run_id = f"{task}-{enc}-{seed}"
                runs[run_id] = {"size": "tiny", "task": task, "finished_at": "2026-11-27", "recipe": recipe}
                for scale, value in ((1, mean - 1), (16, mean)):
                    figures.append({"checkpoint_level": False, "scale": scale, "metric": "bpb", "run_id": run_id,
                                    "size": "tiny", "task": task, "encoding": enc, "display_name": enc, "family": None,
                                    "trained_as": enc, "eval_len": 64 * scale, "seed": seed,
                                    "value": value + sd * rng.standard_normal(), "n": None, "status": "ok",
                                    "chance": None})
    return scale_boards(figures, runs)


def test_the_same_order_on_both_corpora_agrees_and_no_row_moves():
    rng = np.random.default_rng(3)
    means = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    found = comparisons(boards({"lm": means, "prose": means}, sd=0.02, seeds=6, rng=rng))
    assert [c.question for c in found] == ["at the longest length (16x)", "at 1x"]
    for c in found:
        assert c.same_recipe and c.board.task == "prose" and c.code.task == "lm"
        assert c.agreement.tau == pytest.approx(1.0) and c.agreement.rows == len(ENCODINGS)
        assert not c.moved_for_certain and not c.largest_moves


def test_a_row_that_goes_from_first_to_last_on_prose_is_named_as_moving_for_certain():
    rng = np.random.default_rng(4)
    code = {e: 2.5 + 0.5 * i for i, e in enumerate(ENCODINGS)}
    prose = {**code, "a": 2.5 + 0.5 * len(ENCODINGS)}  # a: first on code, last on prose
    longest = comparisons(boards({"lm": code, "prose": prose}, sd=0.02, seeds=6, rng=rng))[0]
    assert [m.encoding for m in longest.moved_for_certain] == ["a"]
    a = longest.moved_for_certain[0]
    assert a.code_rank == (1, 1) and a.other_rank == (6, 6) and set(a.swaps) == set(ENCODINGS[1:])
    assert longest.agreement.tau == pytest.approx(1 - 2 * 5 / 15)  # 5 of the 15 pairs discordant
    assert longest.agreement.hi < 1.0  # six seeds a row: an interval worth the name, excluding full agreement


def test_rows_inside_the_noise_move_by_mean_only():
    rng = np.random.default_rng(5)
    code = {e: 2.5 + 0.01 * i for i, e in enumerate(ENCODINGS)}  # 0.01 apart, noise sd 0.2
    prose = dict(zip(ENCODINGS, reversed(list(code.values()))))
    longest = comparisons(boards({"lm": code, "prose": prose}, sd=0.2, seeds=6, rng=rng))[0]
    assert not longest.moved_for_certain and longest.largest_moves
