"""Ranks of a board that say only what its seeds support: every pair tested, Holm-corrected,
and each row's rank given as an interval; how many seeds a board needs to see a given effect.

* **Pairwise tests** (:func:`pairwise`): the paired t-test over shared seeds of every pair
  of rows (:func:`suite.report.stats.paired_t`, with the sampling floor of a share), their
  p-values corrected by **Holm's step-down procedure** over all the pairs of the board
  (Holm 1979, "A simple sequentially rejective multiple test procedure", Scand. J. Statist.
  6:65-70). A board of 20 rows tests 190 pairs: at an uncorrected p < 0.05 about ten of
  them would come out "significant" when every row is the same. Holm keeps the chance of
  any false difference on the board (the family-wise error) at most 0.05, under any
  dependence between the tests, and is uniformly more powerful than Bonferroni's
  alpha / m. A pair is significant when its Holm-adjusted p < 0.05.
* **Rank intervals** (:func:`rank_intervals`): rank_lo = 1 + the rows significantly better,
  rank_hi = N - the rows significantly worse. Because every pair is covered by the one Holm
  family, all the intervals hold at once with probability at least 0.95 (the simultaneous
  rank intervals of pairwise tests; Chatbot Arena's "rank (UB)", Chiang et al. 2024, is
  the lower end). "1" when lo == hi == 1; "2-7" when the row could be anywhere from 2nd to
  7th. Rows are ordered by their mean, never by a rank: ordering by rank_lo would put a
  noisy row (whose wide spread keeps anyone from beating it significantly) above a
  consistent row with a better mean.
* **Power** (:func:`seeds_needed`): the smallest number of seeds at which the paired
  t-test at the Bonferroni level alpha / (N(N - 1) / 2) (Holm's first, strictest step)
  detects a difference ``effect`` between two rows whose per-seed differences have
  standard deviation ``sd`` with the given power, from the noncentral t distribution
  (Cohen 1988, ch. 2; statsmodels' ``TTestPower``).
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

from suite.report.stats import ALPHA, paired_t, text_variance

POWER = 0.8
MOST_SEEDS = 10_000  # seeds_needed gives up beyond this (an effect far inside the noise)
RANK_METHOD = "simultaneous 95% rank interval: paired t-tests over shared seeds, Holm-corrected over the board's pairs"

PerSeed = Mapping[str, Mapping[int, float | None]]
PerSeedText = Mapping[str, Mapping[int, "np.ndarray | float"]]  # row -> seed -> its run's text (stats.text_variance)


def _text_of_pairs(text: PerSeedText | None, names: list[str], x: np.ndarray, seeds: list[int], i: np.ndarray,
                   j: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The text-sampling variance of each pair's mean difference over the seeds both rows have
    (and its degrees of freedom); None when no row has text."""
    if not text or not any(text.get(n) for n in names):
        return None, None
    variance, dof = np.zeros(len(i)), np.full(len(i), np.inf)
    for k, (a, b) in enumerate(zip(i, j)):
        shared = [seeds[c] for c in range(len(seeds)) if not (np.isnan(x[a, c]) or np.isnan(x[b, c]))]
        tv = text_variance(text.get(names[a], {}), text.get(names[b], {}), shared)
        if tv is not None:
            variance[k], dof[k] = tv.variance, tv.dof
    return variance, dof


def holm(p_values: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """Holm-adjusted p-values (Holm 1979) of one family of tests."""
    p_values = np.asarray(p_values, dtype=float)
    if p_values.size == 0:
        return p_values
    # statsmodels' Holm branch runs a full gc.collect() on every call: 30-100 ms with the
    # report's heap (torch loaded), per board. Frozen objects are not collected, so the
    # collection it asks for finds nothing to walk; the heap is unfrozen straight after.
    gc.freeze()
    try:
        return multipletests(p_values, alpha=alpha, method="holm")[1]
    finally:
        gc.unfreeze()


@dataclass(frozen=True)
class Pairwise:
    """Every pair of the rows of one board at one column: raw and Holm-adjusted p-values."""

    names: list[str]
    means: dict[str, float]  # each row's mean over the seeds tested
    i: np.ndarray  # pair k compares names[i[k]] - names[j[k]]
    j: np.ndarray
    difference: np.ndarray  # mean per-seed difference of pair k
    se: np.ndarray
    n: np.ndarray  # shared seeds of pair k
    p: np.ndarray  # raw two-sided p (nan: fewer than 2 shared seeds, not tested)
    adjusted: np.ndarray  # Holm-adjusted over the tested pairs (nan where not tested)
    wins: np.ndarray  # wins[a, b]: row a significantly better than row b
    alpha: float = ALPHA
    text: np.ndarray | None = None  # pair k's text-sampling variance, part of se[k]^2 (None: no text)

    def better(self, a: str, b: str) -> bool:
        return bool(self.wins[self.names.index(a), self.names.index(b)])

    @property
    def tested(self) -> int:
        return int(np.sum(~np.isnan(self.p)))

    def pooled_sd(self) -> float | None:
        """The standard deviation of per-seed paired differences, pooled over the tested pairs
        (weighted by their degrees of freedom); the variance of each with its sampling floor."""
        ok = ~np.isnan(self.p)
        dof = (self.n[ok] - 1).astype(float)
        if dof.sum() <= 0:
            return None
        # a variance: where every seed's difference is the same, rounding leaves -1e-22, not 0
        seed_part = np.maximum(self.se[ok] ** 2 - (self.text[ok] if self.text is not None else 0.0), 0.0)
        variance = seed_part * self.n[ok]  # the (floored) variance of one seed's difference; text apart
        return math.sqrt(float(np.sum(dof * variance) / dof.sum()))

    def text_se(self) -> float | None:
        """The median over the tested pairs of the text-sampling standard error of a difference
        (what more seeds cannot shrink); None without text."""
        ok = ~np.isnan(self.p)
        if self.text is None or not ok.any():
            return None
        return math.sqrt(float(np.median(self.text[ok])))


def _matrix(per_seed: PerSeed, names: list[str], seeds: list[int]) -> np.ndarray:
    out = np.full((len(names), len(seeds)), np.nan)
    for r, name in enumerate(names):
        for c, seed in enumerate(seeds):
            v = per_seed.get(name, {}).get(seed)
            if v is not None and math.isfinite(v):
                out[r, c] = v
    return out


def pairwise(per_seed: PerSeed, lower_is_better: bool, floors: PerSeed | None = None,
             seeds: Iterable[int] | None = None, alpha: float = ALPHA, text: PerSeedText | None = None) -> Pairwise:
    """Paired t-tests of every pair of rows that have a value (on ``seeds`` alone if given),
    Holm-corrected over all the pairs tested. ``floors``: row -> seed -> sampling variance;
    ``text``: row -> seed -> the run's text, whose sampling the tests include."""
    chosen = set(seeds) if seeds is not None else None
    rows = {name: {s: v for s, v in values.items() if v is not None and (chosen is None or s in chosen)}
            for name, values in per_seed.items()}
    names = [name for name, values in rows.items() if values]
    all_seeds = sorted({s for name in names for s in rows[name]})
    x = _matrix(rows, names, all_seeds)
    f = _matrix(floors, names, all_seeds) if floors else np.zeros_like(x)
    f = np.nan_to_num(f)
    i, j = np.triu_indices(len(names), 1)
    test = paired_t(x[i] - x[j], f[i] + f[j], *_text_of_pairs(text, names, x, all_seeds, i, j))
    tested = ~np.isnan(test.p)
    adjusted = np.full(test.p.shape, np.nan)
    adjusted[tested] = holm(test.p[tested], alpha)
    sign = -1.0 if lower_is_better else 1.0
    significant = tested & (adjusted < alpha)
    wins = np.zeros((len(names), len(names)), dtype=bool)
    wins[i, j] = significant & (sign * test.mean > 0)
    wins[j, i] = significant & (sign * test.mean < 0)
    means = {name: float(np.nanmean(x[r])) for r, name in enumerate(names)}
    return Pairwise(names, means, i, j, test.mean, test.se, test.n, test.p, adjusted, wins, alpha, test.text)


def rank_intervals(tests: Pairwise) -> dict[str, tuple[int, int]]:
    """name -> (rank_lo, rank_hi): 1 + the rows significantly better, N - the rows significantly worse."""
    count = len(tests.names)
    better = tests.wins.sum(axis=0)  # column b: how many rows beat b
    worse = tests.wins.sum(axis=1)  # row a: how many rows a beats
    return {name: (1 + int(better[r]), count - int(worse[r])) for r, name in enumerate(tests.names)}


def rank_text(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}-{hi}"


def best_by_mean(tests: Pairwise, lower_is_better: bool) -> str | None:
    if not tests.names:
        return None
    sign = 1.0 if lower_is_better else -1.0
    return min(tests.names, key=lambda n: (sign * tests.means[n], n))


def confirms(per_seed: PerSeed, lower_is_better: bool, best: str, beaten: Iterable[str], seeds: Iterable[int],
             floors: PerSeed | None = None, alpha: float = ALPHA, text: PerSeedText | None = None) -> bool:
    """Whether ``best`` is significantly better than each of ``beaten`` on ``seeds`` alone,
    Holm-corrected over those comparisons only (the claim re-tested on fresh seeds)."""
    beaten, chosen = list(beaten), set(seeds)
    if not beaten:
        return False
    sign = -1.0 if lower_is_better else 1.0
    names = [best, *beaten]
    rows = {n: {s: v for s, v in per_seed[n].items() if s in chosen and v is not None} for n in names}
    order = sorted(chosen)
    x = _matrix(rows, names, order)
    f = np.nan_to_num(_matrix(floors, names, order)) if floors else np.zeros_like(x)
    others = np.arange(1, len(names))
    test = paired_t(x[0] - x[1:], f[0] + f[1:], *_text_of_pairs(text, names, x, order, np.zeros_like(others), others))
    if np.isnan(test.p).any():
        return False
    return bool(np.all((holm(test.p, alpha) < alpha) & (sign * test.mean > 0)))


def seeds_needed(effect: float, sd: float, rows: int, alpha: float = ALPHA, power: float = POWER,
                 comparisons: int = 1) -> int | None:
    """The smallest seed count at which a two-sided paired t-test at the Bonferroni level
    alpha / (rows (rows - 1) / 2) detects a difference ``effect`` (per-seed differences of
    standard deviation ``sd``), significant and of the right sign, with probability ``power``;
    None beyond MOST_SEEDS.

    ``comparisons`` > 1: the seeds for one row to be found better than that many rows at
    once (a board's "ahead of every other entry" is rows - 1 of them) with probability
    ``power``: each test then needs power ** (1 / comparisons). The tests share the row's own
    noise, so they succeed together more often than independent ones would (Slepian's
    inequality for positively correlated statistics): this is conservative."""
    if rows < 2 or effect <= 0:
        return None
    if sd <= 0:
        return 2  # no spread: two seeds already show any difference
    level = alpha / (rows * (rows - 1) / 2)
    target = power ** (1 / comparisons)
    analysis = TTestPower()

    def enough(n: int) -> bool:
        # the two-sided test's power in the right direction: the upper tail past t_{1 - level/2}.
        # (The wrong-direction tail is ~1e-18 here, and scipy's noncentral t returns nan for some
        # such tails, which statsmodels' two-sided power passes on.)
        return analysis.power(effect_size=effect / sd, nobs=n, alpha=level / 2, alternative="larger") >= target

    hi = 2
    while not enough(hi):  # power grows with n: double, then bisect
        if hi >= MOST_SEEDS:
            return None
        hi = min(hi * 2, MOST_SEEDS)
    lo = hi // 2 if hi > 2 else 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return max(hi, 2)


def power_statement(effect: float | None, unit: str, column: str, tests: Pairwise,
                    seeds: int) -> tuple[str | None, str | None]:
    """A board's note on its power to see ``effect`` between two rows, and its warning when
    its seeds fall short: (note, warning). ``seeds``: the board's seeds, all rows together.

    The paired test of two rows uses the seeds they share, so a board whose rows were run at
    different seeds is only as powered as its least-shared pair: a board of seeds 0-9 whose
    other rows have seeds 0-2 cannot tell those rows apart with ten seeds' power."""
    rows = len(tests.names)
    if effect is None or rows < 2:
        return None, None
    wanted = f"{effect:g} {unit}".strip()
    sd = tests.pooled_sd()
    if sd is None:
        return (f"Meant to detect {wanted} between two rows in {column}; with one seed the spread of paired "
                "differences is unknown, so its power cannot be judged."), None
    needed = seeds_needed(effect, sd, rows)
    count = f"more than {MOST_SEEDS:,}" if needed is None else str(needed)
    fewest = int(tests.n.min()) if tests.n.size else seeds  # the least-shared pair decides
    enough = needed is not None and fewest >= needed
    pairs = rows * (rows - 1) // 2
    has = f"it has {seeds}" if fewest >= seeds else f"it has {seeds}, but some of its pairs of rows share only {fewest}"
    note = (f"Power: meant to detect {wanted} between two rows in {column}; its paired differences have sd "
            f"{sd:.3g} (pooled over its pairs), so {count} seeds give 80% power at the Bonferroni level "
            f"{ALPHA}/{pairs}; {has}.")
    short = f"{seeds} seeds" if fewest >= seeds else f"{seeds} seeds, {fewest} shared by its least-run pairs of rows"
    warning = None if enough else f"Underpowered: {short}; {count} needed to detect {wanted} at 80% power."
    text_se = tests.text_se()
    if text_se:  # a floor no number of seeds lowers (suite.report.stats, "Text sampling")
        level = ALPHA / pairs
        reach = (float(norm.ppf(1 - level / 2)) + float(norm.ppf(POWER))) * text_se
        note += (f" Text sampling adds a standard error of {text_se:.3g} to a difference (the median over its pairs; "
                 f"more seeds do not shrink it, more evaluated text does): with any number of seeds the smallest "
                 f"difference found at 80% power is about {reach:.3g}.")
        if reach > effect:
            warning = (f"Underpowered by its text: the text sampling error of a difference ({text_se:.3g}) alone "
                       f"hides {wanted}; it needs more evaluated text, not more seeds.")
    return note, warning
