"""The agreement of two rankings of the same rows, at two model sizes (the size ladder's scale
view, suite.report.scale_view) or on two corpora (suite.report.corpus_view): **Kendall's tau-b**
of the rows' means (Kendall 1938, "A new measure of rank correlation", Biometrika 30:81-93; the b
variant for ties, scipy.stats.kendalltau), with a **bootstrap 95% interval** (Efron and
Tibshirani 1993, ch. 13, percentile interval).

The unit of replication is the training run. A size's means are over the seeds every row compared
has there, as the boards' paired tests pair rows (suite.report.ranking): a seed's runs share their
data and initialisation draws, so the rows of one seed move together, and a row's mean over seeds
the others lack would carry those seeds' shared effect into the order. Each resample draws those
seeds with replacement, **the same seeds for every row of a size** (drawing each row's seeds on
its own would add that shared effect to every row's spread and widen the interval for nothing),
and **the seeds both sizes trained drawn alike at both** (a seed draws the same training windows
at every size, so their noise is shared), each size's other seeds on their own (a bootstrap
stratified by whether a seed is shared).

A degenerate interval (lo == hi: 95% of the resamples or
more gave one tau) is not shown as an interval: resampling 3 seeds cannot move well-separated
means past each other, so [1.00, 1.00] says the seeds were too few to show any spread, not that
tau is known exactly. It reads "too few seeds" under :data:`INTERVAL_SEEDS` seeds a row, and above
it "no interval", with the tau 95% of the resamples gave: a bootstrap of 5 or 6 seeds understates
the spread of a mean (no t tails, and few distinct resamples), so the rank intervals, from the
paired tests, say which rows the seeds separate. An interval from under :data:`INTERVAL_SEEDS`
seeds a row is not shown either (the percentile bootstrap's coverage falls well short of 95%
there, Efron and Tibshirani ch. 13).

The percentile interval is that of the tau of *measured*
means: noise between seeds pulls tau towards 0 and the resampled means further, so where a seed's
noise is as large as the gaps between rows the interval can sit below a true tau of 1 (simulated
in tests/report/test_rank_agreement.py; five rows, 6 seeds, 2,000 resamples, 150 ladders: it covers a
true 1 in 93% of them at noise 1.25x the gap between neighbours, mean estimate 0.87, and in 73% at
noise 2x the gap, mean estimate 0.70).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import kendalltau

BOOTSTRAP = 2000  # resamples of the interval (its percentiles move by about 0.01 between runs of 2,000)
INTERVAL_SEEDS = 5  # the fewest seeds a row at both sizes for a bootstrap interval to be shown


@dataclass
class Agreement:
    """Kendall's tau-b between the rankings at two sizes, with its bootstrap interval."""

    size: str  # the larger size, compared with the smallest
    tau: float | None
    lo: float | None
    hi: float | None
    rows: int  # the rows present at both sizes
    seeds: int = 0  # the seeds all those rows have, at the size with fewer

    @property
    def interval_shown(self) -> bool:
        """Whether [lo, hi] is an interval worth the name (module docstring)."""
        return self.lo is not None and self.hi is not None and self.lo < self.hi and self.seeds >= INTERVAL_SEEDS

    @property
    def text(self) -> str:
        """"0.73 [0.40, 0.93]", "1.00 (too few seeds for an interval: 3 a row)" or "n/a"."""
        if self.tau is None:
            return "n/a"
        if self.interval_shown:
            return f"{self.tau:.2f} [{self.lo:.2f}, {self.hi:.2f}]"
        if self.seeds >= INTERVAL_SEEDS:  # 95% of the resamples or more gave one tau: a spread the seeds understate
            return (f"{self.tau:.2f} (no interval: at least 95% of the resamples gave {self.lo:.2f}, and a bootstrap "
                    f"of as few as {self.seeds} seeds a row understates the spread)")
        return f"{self.tau:.2f} (too few seeds for an interval: {self.seeds} a row)"


def tau_of(a: dict[str, float], b: dict[str, float], lower_is_better: bool) -> float | None:
    """Kendall's tau-b between two rankings given as row -> mean (the rows both have)."""
    rows = sorted(set(a) & set(b))
    if len(rows) < 3:
        return None
    sign = -1 if lower_is_better else 1  # the same direction either way: only the order matters
    result = kendalltau([sign * a[r] for r in rows], [sign * b[r] for r in rows])
    return None if math.isnan(result.statistic) else float(result.statistic)


def common_seeds(values: dict[str, dict[int, float]], rows: list[str]) -> list[int]:
    """The seeds every one of ``rows`` has figures for (a column's paired design, module docstring)."""
    return sorted(set.intersection(*(set(values[r]) for r in rows))) if rows else []


def seed_draws(seeds_small: list[int], seeds_large: list[int], resamples: int,
               rng: np.random.Generator) -> tuple[list[int], np.ndarray, list[int], np.ndarray]:
    """Each column's seeds (those both trained first) and its draws, resamples x seeds of indices into
    them: the seeds both trained drawn alike for both, each column's others on its own (stratified)."""
    both = [s for s in seeds_small if s in set(seeds_large)]
    shared = rng.integers(0, len(both), (resamples, len(both))) if both else np.zeros((resamples, 0), int)
    out: list = []
    for seeds in (seeds_small, seeds_large):
        own = [s for s in seeds if s not in set(both)]
        draws = len(both) + rng.integers(0, len(own), (resamples, len(own))) if own else np.zeros((resamples, 0), int)
        out += [both + own, np.concatenate([shared, draws], axis=1)]
    return tuple(out)


def agreement(small: dict[str, dict[int, float]], large: dict[str, dict[int, float]], size: str,
              lower_is_better: bool, resamples: int = BOOTSTRAP, seed: int = 0) -> Agreement:
    """tau between the rows' means at two sizes (row -> seed -> value each), each size's means over
    the seeds all the rows compared have there, and its percentile bootstrap interval over those
    seeds, the same seeds drawn for every row of a size (module docstring)."""
    rows = sorted(r for r in set(small) & set(large) if small[r] and large[r])
    seeds_small, seeds_large = common_seeds(small, rows), common_seeds(large, rows)
    fewest = min(len(seeds_small), len(seeds_large))
    if fewest == 0 or len(rows) < 3:
        return Agreement(size, None, None, None, len(rows), fewest)
    sign = -1.0 if lower_is_better else 1.0
    # A seed draws the same training windows at every size (suite.data.windows): the published ladder's
    # row-by-seed residuals correlate by +0.55 to +0.72 between two columns, so the seeds both trained
    # are drawn alike, or that shared noise would make the orders agree in the estimate, not the resamples.
    seeds_small, draws_small, seeds_large, draws_large = seed_draws(seeds_small, seeds_large, resamples,
                                                                    np.random.default_rng(seed))
    x_small = np.array([[small[r][s] for s in seeds_small] for r in rows])  # rows x seeds
    x_large = np.array([[large[r][s] for s in seeds_large] for r in rows])
    tau = tau_of(dict(zip(rows, x_small.mean(axis=1))), dict(zip(rows, x_large.mean(axis=1))), lower_is_better)
    if tau is None:
        return Agreement(size, None, None, None, len(rows), fewest)
    # one call over the resamples' axis: one scipy call and its checks, not 2,000 (half the time);
    # only the statistic is used, so no exact p-value is computed for each resample (a fifth less).
    # A resample whose means all tie at a size has no tau (nan) and is left out.
    taus = kendalltau(sign * x_small[:, draws_small].mean(axis=2).T, sign * x_large[:, draws_large].mean(axis=2).T,
                      axis=1, method="asymptotic").statistic
    draws = taus[~np.isnan(taus)]
    # percentiles of the draws themselves (inverted_cdf), not interpolated between two: tau takes
    # a few values on few rows, and an end between them would be a tau no ranking has
    ends = [float(np.percentile(draws, q, method="inverted_cdf")) for q in (2.5, 97.5)] if draws.size else [None, None]
    lo, hi = ends
    return Agreement(size, tau, lo, hi, len(rows), fewest)
