"""Does a language-modelling ordering hold on another corpus? Code against prose, compared.

Every language-modelling figure of the published runs but one board's is Python source
(`tasks/lm.yaml`); `tasks/prose.yaml` models public-domain English. Whether an ordering is
about code (indentation, brackets, repetition) or about language is what this module asks.
For each board of a corpus other than the code one, it pairs the code boards of the same size
(the one of the same recipe, and the size's canonical board where that is another) and gives,
per question (the longest scale, the ranking question; and 1x, quality within the training
length):

* the rank agreement of the rows both boards have: **Kendall's tau-b** of their means with a
  percentile bootstrap interval over seeds, each board's means over the seeds all those rows
  have on it, a board's seeds drawn together for all its rows, and the seeds both boards
  trained drawn alike for both (a seed starts a run on either corpus from the same weights),
  each board's others on their own:
  :func:`suite.report.rank_agreement.agreement`, the size ladder's measure, with its rule for
  intervals that are not worth the name;
* the rows **whose rank moves**: two rows *swap* when one is ahead of the other for certain on
  one corpus and behind it for certain on the other (each board's paired tests among the rows
  both boards have, Holm-corrected, text sampling included); the rows that move are those in
  the most swaps (a row that falls from first to last swaps with every row it passed, each of
  those with it alone), and, where no pair swaps, the rows whose position by mean moves most.

Pure functions of :class:`Board` objects, tested on boards of known means.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from suite.report import ranking
from suite.report.board_kinds import BOARD_KINDS
from suite.report.board_types import Board
from suite.report.rank_agreement import Agreement, agreement
from suite.report.scale_view import per_seed

CODE_TASK = "lm"
QUESTIONS = (("longest", "at the longest length"), ("s1", "at 1x"))


@dataclass
class Move:
    encoding: str
    display_name: str
    code_rank: tuple[int, int]  # rank interval among the shared rows on the code board
    other_rank: tuple[int, int]
    code_position: int  # position by mean among the shared rows
    other_position: int
    swaps: tuple[str, ...] = ()  # the rows it swaps with for certain (module docstring)

    @property
    def ranks_text(self) -> tuple[str, str]:
        """("1", "5-6"): its rank on code and on the other corpus, as the boards write them."""
        return ranking.rank_text(*self.code_rank), ranking.rank_text(*self.other_rank)


@dataclass
class CorpusComparison:
    board: Board  # the other corpus's board
    code: Board  # the code board it is compared with
    column: str
    question: str  # "at the longest length (16x)"
    same_recipe: bool
    agreement: Agreement
    moves: list[Move] = field(default_factory=list)

    @property
    def moved_for_certain(self) -> list[Move]:
        """The rows in the most swaps (none when no pair swaps)."""
        most = max((len(m.swaps) for m in self.moves), default=0)
        return [m for m in self.moves if most and len(m.swaps) == most]

    @property
    def largest_moves(self) -> list[Move]:
        """The rows whose position by mean moves the most (at least one place), largest first."""
        shift = lambda m: abs(m.code_position - m.other_position)  # noqa: E731
        top = max((shift(m) for m in self.moves), default=0)
        return [m for m in self.moves if top and shift(m) == top]


def _shared_ranks(board: Board, column: str, rows: list[str]) -> tuple[ranking.Pairwise, dict[str, int]]:
    """The paired tests among ``rows`` alone (Holm-corrected) and the rows' positions by mean."""
    entries = {e.encoding: e for e in board.entries if e.encoding in rows}
    lower = bool(board.lower_is_better)
    tests = ranking.pairwise({n: entries[n].per_seed.get(column, {}) for n in rows}, lower,
                             {n: entries[n].floors.get(column, {}) for n in rows},
                             text={n: entries[n].text.get(column, {}) for n in rows})
    order = sorted(tests.names, key=lambda n: (tests.means[n] if lower else -tests.means[n], n))
    return tests, {n: k + 1 for k, n in enumerate(order)}


def compare(other: Board, code: Board, column: str, question: str) -> CorpusComparison:
    a, b = per_seed(code, column), per_seed(other, column)
    rows = sorted(r for r in set(a) & set(b) if a[r] and b[r])
    result = CorpusComparison(other, code, column, question, code.recipe == other.recipe,
                              agreement(a, b, other.task, bool(code.lower_is_better)))
    if len(rows) < 3:
        return result
    code_tests, code_positions = _shared_ranks(code, column, rows)
    other_tests, other_positions = _shared_ranks(other, column, rows)
    code_ranks, other_ranks = ranking.rank_intervals(code_tests), ranking.rank_intervals(other_tests)
    names = {e.encoding: e.display_name for e in other.entries}
    shared = [r for r in rows if r in code_ranks and r in other_ranks]

    def swaps(r: str) -> tuple[str, ...]:
        return tuple(o for o in shared if o != r and (
            (code_tests.better(r, o) and other_tests.better(o, r)) or (code_tests.better(o, r) and other_tests.better(r, o))))

    result.moves = [Move(r, names.get(r, r), code_ranks[r], other_ranks[r], code_positions[r], other_positions[r],
                         swaps(r)) for r in shared]
    return result


def comparisons(boards: list[Board], canonical_ids: set[str] = frozenset()) -> list[CorpusComparison]:
    """Each ranked language-modelling board of another corpus against the code boards of its size:
    the one of its recipe, and the size's canonical board where that is another."""
    lm = [b for b in boards if BOARD_KINDS.get(b.kind).across_corpora and b.ranked_by and not b.architecture and b.scales]
    out = []
    for other in (b for b in lm if b.task != CODE_TASK):
        same_size = [b for b in lm if b.task == CODE_TASK and b.size == other.size and b.train_len == other.train_len]
        chosen = [b for b in same_size if b.recipe == other.recipe]
        chosen += [b for b in same_size if b.id in canonical_ids and b not in chosen]
        for code in chosen:
            longest = max(set(code.scales) & set(other.scales), default=None)
            for key, words in QUESTIONS:
                column = f"s{longest}" if key == "longest" else key
                if longest is None or column[1:].isdigit() and int(column[1:]) not in other.scales:
                    continue
                label = f"{words} ({longest}x)" if key == "longest" else words
                out.append(compare(other, code, column, label))
    return out
