"""One line per ranked board: its best entry, whether it is significantly ahead, and whether
that claim held on seeds it was not found on.

* The best entry is the one with the best mean at the ranked column. "At 16x: ALiBi, ahead
  of every other entry" only when each of its paired tests against another row is
  significant in its favour after Holm's correction over all the board's pairs
  (:mod:`.ranking`); otherwise the rows whose rank interval contains 1 "could be first".
* **Confirmation** on held-out seeds: a claim that the same data both suggested and tested
  is optimistic (the winner's curse: the best of many noisy rows is partly best by luck).
  So the board's seeds are split, sorted, into a discovery half (the first ceil(n/2)) and
  a confirmation half (the rest). The claim (the best row by mean and the set of rows it
  beats) is found on the discovery seeds alone, with the same Holm-corrected tests, then
  re-tested on the confirmation seeds alone, Holm-corrected over the claim's comparisons
  only: confirmed when the discovery half's best row is the headline's and it is again
  significantly better than each row it beat there. The split follows the replication logic
  of a held-out test set (Cox 1975, "A note on data-splitting for the evaluation of
  significance levels", Biometrika 62:441-444); it needs at least 4 seeds (2 per half).

The confirmation says only what its test established, one of four statuses (:data:`STATUSES`):

* **confirmed**: the headline's claim, found on the discovery seeds, held on the others. When
  the headline names rows that "could be first", the claim tested is the best row's lead over
  the rows the discovery half saw it beat, and the words name those rows: "confirmed" is
  never read as confirming rows the test did not compare.
* **not confirmed**: that claim was tested on the held-out seeds and did not hold there.
* **not tested**: the discovery half made no claim to test (its best row beats no other row,
  or it is not the headline's row, or it does not beat every row the headline says it does):
  nothing went to the held-out seeds, so nothing failed there.
* **too few seeds**: under 4 seeds, no split.

The site puts these lines at its top, and ``posbench leaderboard`` under each board's title.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from suite.report import ranking
from suite.report.stats import ALPHA

if TYPE_CHECKING:
    from suite.report.board_types import Board

CONFIRM_SEEDS = 4  # two per half: the fewest a paired t-test has on each side
LISTED = 4  # the most rows a headline names; more that could be first are counted
SIGNIFICANCE = f"paired over seeds, Holm-corrected p < {ALPHA}"
CONFIRMED, NOT_CONFIRMED, NOT_TESTED, TOO_FEW = "confirmed", "not confirmed", "not tested", "too few seeds"
STATUSES = (CONFIRMED, NOT_CONFIRMED, NOT_TESTED, TOO_FEW)


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def seed_span(seeds: list[int]) -> str:
    """'5-9' for a run of consecutive seeds, else '1, 4, 7'."""
    if len(seeds) > 1 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def headline(board: Board, column: str, tests: ranking.Pairwise) -> tuple[str | None, str | None]:
    """(the line, its confirmation status) for ``board`` ranked by ``column`` with ``tests``; on a
    board with a change column (language modelling), how much of the lead is there at 1x."""
    line, status = _headline(board, column, tests)
    if line is not None and (share := lead_at_1x(board, column, tests)) is not None:
        line += " " + share
    return line, status


def lead_at_1x(board: Board, column: str, tests: ranking.Pairwise) -> str | None:
    """How much of the best row's lead over the runner-up (by mean) at ``column`` it already has at
    1x: a lead that is all there at 1x is the row's quality within the training length, not its
    extrapolation (Canon layers lead ALiBi by 0.583 bits per byte at 1x and 0.579 at 16x)."""
    if column == "s1" or not any(c.key == "change" for c in board.columns) or len(tests.names) < 2:
        return None
    lower = bool(board.lower_is_better)
    sign = 1.0 if lower else -1.0
    best, second = sorted(tests.names, key=lambda n: (sign * tests.means[n], n))[:2]
    rows = {e.encoding: e for e in board.entries}
    at_1 = {n: rows[n].cells.get("s1") for n in (best, second)}
    if any(c is None or c.value is None for c in at_1.values()):
        return None
    lead = sign * (tests.means[second] - tests.means[best])
    lead_1 = sign * (at_1[second].value - at_1[best].value)
    if lead <= 0:
        return None
    where = f"{column[1:]}x" if column[1:].isdigit() else board.column(column).label
    unit = board.metric or ""
    if round(lead_1, 3) <= 0:
        there = "the two are level" if round(lead_1, 3) == 0 else f"it trails by {-lead_1:.3f}"
        return (f"Its lead over {rows[second].display_name} is {lead:.3f} {unit} at {where}; at 1x {there}: the lead "
                "is all extrapolation.")
    return (f"Its lead over {rows[second].display_name}: {lead:.3f} {unit} at {where}, {lead_1:.3f} at 1x "
            f"({lead_1 / lead:.0%} of it already there within the training length).")


def _headline(board: Board, column: str, tests: ranking.Pairwise) -> tuple[str | None, str | None]:
    if not tests.names:
        return None, None
    shown = {e.encoding: e.display_name for e in board.entries}
    label = f"At {column[1:]}x" if column[1:].isdigit() else board.column(column).label
    lower = bool(board.lower_is_better)
    best = ranking.best_by_mean(tests, lower)
    others = [n for n in tests.names if n != best]
    if not others:
        return f"{label}: {shown[best]}, the only ranked entry.", None
    if len(board.seeds) < 2:
        return f"{label}: {shown[best]} leads on one seed; with one seed no lead is significant.", TOO_FEW
    ahead_of_all = all(tests.better(best, o) for o in others)
    # the claim the confirmation must cover: "ahead of every other entry" is confirmed only if the
    # discovery half beats every row and the confirmation half does again
    status, confirmation = _confirmation(board, column, best, others if ahead_of_all else [])
    if ahead_of_all:
        return f"{label}: {shown[best]}, ahead of every other entry ({SIGNIFICANCE}; {confirmation}).", status
    sign = 1.0 if lower else -1.0
    ranks = ranking.rank_intervals(tests)
    first = sorted((n for n in tests.names if ranks[n][0] == 1), key=lambda n: (sign * tests.means[n], n))
    if len(first) == len(tests.names):
        return (f"{label}: any of the {len(first)} rows could be first (best mean: {shown[best]}; no paired "
                f"difference on the board is significant, {SIGNIFICANCE}; {confirmation})."), status
    who = (_names([shown[n] for n in first]) if len(first) <= LISTED
           else f"{len(first)} of the {len(tests.names)} rows")  # a list of 30 names is no headline
    return (f"{label}: {who} could be first (best mean: {shown[best]}; no row is significantly ahead of any of "
            f"them, {SIGNIFICANCE}; {confirmation})."), status


def _confirmation(board: Board, column: str, best: str, must_beat: list[str]) -> tuple[str, str]:
    """(status, words): the claim found on the discovery seeds, re-tested on the others.

    ``must_beat``: the rows the headline says ``best`` is ahead of ([] when it says only that
    rows could be first: the claim is then whatever lead of ``best`` the discovery half finds)."""
    seeds = sorted(board.seeds)
    if len(seeds) < CONFIRM_SEEDS:
        return TOO_FEW, "too few seeds to confirm"
    half = math.ceil(len(seeds) / 2)
    discovery, confirmation = seeds[:half], seeds[half:]
    found_on, held_out = seed_span(discovery), seed_span(confirmation)
    lower = bool(board.lower_is_better)
    shown = {e.encoding: e.display_name for e in board.entries}
    per_seed = {e.encoding: e.per_seed.get(column, {}) for e in board.entries}
    floors = {e.encoding: e.floors.get(column, {}) for e in board.entries}
    text = {e.encoding: e.text.get(column, {}) for e in board.entries}
    found = ranking.pairwise(per_seed, lower, floors, seeds=discovery, text=text)
    claimed = ranking.best_by_mean(found, lower)
    beaten = [n for n in found.names if n != claimed and found.better(claimed, n)]
    if not beaten:
        return NOT_TESTED, f"not tested on seeds {held_out}: seeds {found_on} alone show no row ahead of another"
    if claimed != best:
        return NOT_TESTED, (f"not tested on seeds {held_out}: seeds {found_on} alone put {shown.get(claimed, claimed)} "
                            "first")
    if not set(must_beat) <= set(beaten):
        return NOT_TESTED, (f"not tested on seeds {held_out}: seeds {found_on} alone show it ahead of "
                            f"{len(beaten)} of the {len(must_beat)} rows")
    held = ranking.confirms(per_seed, lower, claimed, beaten, confirmation, floors, text=text)
    status = CONFIRMED if held else NOT_CONFIRMED
    if must_beat:  # the headline's own claim, "ahead of every other entry"
        return status, f"{status} on seeds {held_out}"
    # a "could be first" headline: say which lead was tested, not the rows it names
    lead = (f"{shown[best]} ahead of " + (_names([shown[n] for n in beaten]) if len(beaten) <= LISTED
                                          else f"{len(beaten)} rows"))
    return status, f"{status} on seeds {held_out}: {lead}"
