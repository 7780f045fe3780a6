"""The index's answers corrected as one family: each question's "first for certain" claim is
tested once more, Holm-corrected over the questions the index quotes.

A board's rank intervals are Holm-corrected over its own pairs (:mod:`.ranking`), so one board's
"ahead of every other entry" keeps its false-claim rate under 0.05. The index quotes one such
claim per question (language modelling, the tasks, the GLUE-style battery): three boards, three
chances of a false "first for certain". Each question's claim, that its best row (by mean) is
ahead of every other row, gets one p-value: the largest of the board's Holm-adjusted p-values of
that row against each other one (the claim holds only if every comparison does, and a
Holm-adjusted p is a valid p-value for its own comparison, so the largest bounds the claim's
error: the intersection-union test, Berger 1982, Technometrics 24:295-300). Those p-values are
Holm-corrected again across the quoted questions (Holm 1979): "first for certain" on the index
means first after both corrections. A question whose best row loses a comparison, or ties it,
has p = 1: it was asked, and it counts in the family.
"""

from __future__ import annotations

import numpy as np

from suite.report import ranking
from suite.report.board_types import Board


def claim_p(board: Board) -> float:
    """The p-value of "the best row by mean is ahead of every other row" on ``board``, at its
    ranked column (1.0 when a comparison is not significant in its favour or was not tested)."""
    column = board.ranked_by
    if column is None:
        return 1.0
    per_seed = {e.encoding: e.per_seed.get(column, {}) for e in board.entries}
    floors = {e.encoding: e.floors.get(column, {}) for e in board.entries}
    text = {e.encoding: e.text.get(column, {}) for e in board.entries}
    return claim_p_of(per_seed, bool(board.lower_is_better), floors, text)


def claim_p_of(per_seed: ranking.PerSeed, lower_is_better: bool, floors: ranking.PerSeed | None = None,
               text: ranking.PerSeedText | None = None) -> float:
    """:func:`claim_p` of rows given as row -> seed -> value."""
    tests = ranking.pairwise(per_seed, lower_is_better, floors, text=text)
    best = ranking.best_by_mean(tests, lower_is_better)
    if best is None or len(tests.names) < 2:
        return 1.0
    b = tests.names.index(best)
    worst = 0.0
    for k in range(len(tests.i)):
        if b not in (tests.i[k], tests.j[k]):
            continue
        other = tests.j[k] if tests.i[k] == b else tests.i[k]
        if not tests.wins[b, other]:  # untested, tied or the other way: the claim has no support
            return 1.0
        worst = max(worst, float(tests.adjusted[k]))
    return worst


def corrected(boards: list[Board]) -> list[float]:
    """Each board's :func:`claim_p`, Holm-corrected across ``boards`` (one family)."""
    if not boards:
        return []
    return [float(p) for p in ranking.holm(np.array([claim_p(b) for b in boards]))]
