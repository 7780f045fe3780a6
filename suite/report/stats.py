"""Statistics for the leaderboard: intervals over seeds and paired comparisons of two entries.

Pure (numpy and scipy, no torch), so the site and the terminal use it directly. The ranks,
their multiple-comparison correction and the power of a board are :mod:`.ranking`'s.

**The unit of replication is the seed** (one training run): a cell's figures are its
per-seed values, and its standard error is the between-seed one. A figure that is a share
of examples (an accuracy over ``n`` examples) also has a sampling error within each run,
p(1 - p) / n (binomial), which a handful of seeds can miss entirely: three runs that each
answer 97 of 100 examples have a between-seed variance of 0, yet each 0.97 is uncertain by
about 0.017. So the variance a standard error uses is **floored** by the sampling variance:

    se = sqrt(max(s^2, floor) / k)     (k seeds, s^2 their sample variance)

with floor = the mean over the entry's seeds of p(1 - p) / n for one entry, and for the
per-seed difference of two entries the sum of their two floors (which treats their examples
as independent; the two models answer the same examples, so the true sampling variance of
the difference is smaller: conservative). A figure without a sampling variance (bits per
byte, a GLUE-style score) uses s^2 alone.

* **Interval over seeds** (:func:`seed_interval`): mean +- t_{0.975, k-1} se, a two-sided
  95% Student-t interval; a share's is clipped to [0, 1] (and says so). One seed gives no
  interval over seeds (``method = "one seed"``); a board then uses the Wilson interval.
* **Sampling interval of an accuracy** (:func:`wilson_interval`): the Wilson score
  interval of k successes in n examples (Wilson 1927), for a single model's accuracy.
* **Paired comparison** (:func:`paired_comparison`, :func:`paired_t`): two entries measured
  on the same seeds (same data and initialisation per seed): the mean per-seed difference,
  its t interval and the two-sided paired t-test's p-value (Student 1908), with the floor
  above. A difference equal on every seed therefore gets the p of its sampling error, not
  0; only a figure with no sampling floor and a difference identical on every seed has a
  zero standard error (p = 0, or 1 when the difference is 0: the limit of the t-test).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

LEVEL = 0.95
ALPHA = 0.05
METHOD = "mean over seeds, 95% Student-t interval"
CLIPPED = METHOD + ", clipped to [0, 1]"  # a share's interval cut at a bound: no longer symmetric


@functools.lru_cache(maxsize=None)
def _t_quantile(q: float, dof: int) -> float:
    return float(scipy_stats.t.ppf(q, dof))  # a handful of (level, n) pairs per site: cached


@dataclass(frozen=True)
class Interval:
    mean: float | None
    lo: float | None
    hi: float | None
    n: int
    method: str

    @property
    def half_width(self) -> float | None:
        return None if self.lo is None else (self.hi - self.lo) / 2

    def overlaps(self, other: "Interval") -> bool:
        if self.lo is None or other.lo is None:
            return True
        return self.lo <= other.hi and other.lo <= self.hi


def sampling_variance(p: float, n: int | float) -> float:
    """The binomial variance p(1 - p) / n of a share of ``n`` examples (0 without examples)."""
    return 0.0 if not n else max(0.0, p * (1 - p)) / n


def seed_interval(values: Sequence[float | None], level: float = LEVEL, floor: float | None = None,
                  share: bool = False) -> Interval:
    """Mean and t interval of per-seed values (None values are left out).

    ``floor``: the least variance of one seed's value (the mean sampling variance of a share);
    ``share``: the interval is clipped to [0, 1]."""
    xs = np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if len(xs) == 0:
        return Interval(None, None, None, 0, "no value")
    mean = float(xs.mean())
    if len(xs) == 1:
        return Interval(mean, None, None, 1, "one seed")
    variance = max(float(xs.var(ddof=1)), floor or 0.0)
    half = _t_quantile(0.5 + level / 2, len(xs) - 1) * math.sqrt(variance / len(xs))
    lo, hi = mean - half, mean + half
    if share and (lo < 0.0 or hi > 1.0):
        return Interval(mean, max(0.0, lo), min(1.0, hi), len(xs), CLIPPED)
    return Interval(mean, lo, hi, len(xs), METHOD)


def wilson_interval(successes: float, n: int, level: float = LEVEL) -> Interval:
    """Wilson score interval of a proportion (successes may be a mean accuracy x n)."""
    if n <= 0:
        return Interval(None, None, None, 0, "no examples")
    z = float(scipy_stats.norm.ppf(0.5 + level / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half), n, "Wilson 95% interval over examples")


@dataclass(frozen=True)
class PairedT:
    """Paired t-tests of many pairs at once (arrays over pairs)."""

    mean: np.ndarray  # mean per-seed difference
    se: np.ndarray  # its standard error, with the sampling floor
    n: np.ndarray  # shared seeds
    p: np.ndarray  # two-sided p-value; nan with fewer than 2 shared seeds


def paired_t(diffs: np.ndarray, floors: np.ndarray | None = None) -> PairedT:
    """Paired t-tests of the rows of ``diffs`` (pairs x seeds, nan where a seed is not shared).

    ``floors`` (same shape): the sampling variance of each per-seed difference (0 where the
    figure has none). Vectorized: a board of 30 rows has 435 pairs, and the calibration
    tests simulate thousands of boards."""
    diffs = np.atleast_2d(np.asarray(diffs, dtype=float))
    shared = ~np.isnan(diffs)
    n = shared.sum(axis=1)
    safe_n = np.maximum(n, 1)
    d = np.where(shared, diffs, 0.0)
    mean = d.sum(axis=1) / safe_n
    variance = np.where(shared, (d - mean[:, None]) ** 2, 0.0).sum(axis=1) / np.maximum(n - 1, 1)
    if floors is not None:
        floor = np.where(shared, np.nan_to_num(np.atleast_2d(floors)), 0.0).sum(axis=1) / safe_n
        variance = np.maximum(variance, floor)
    se = np.sqrt(variance / safe_n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(mean) / se
    p = 2 * scipy_stats.t.sf(t, np.maximum(n - 1, 1))
    # a zero standard error (no floor, the same difference on every seed): the t-test's limit
    p = np.where(se == 0, np.where(mean == 0, 1.0, 0.0), p)
    p = np.where(n < 2, np.nan, p)
    return PairedT(np.where(n > 0, mean, np.nan), se, n, p)


@dataclass(frozen=True)
class Comparison:
    """a - b over the seeds both have."""

    mean_difference: float | None
    interval: Interval
    p_value: float | None
    n_shared: int

    def significant(self, alpha: float = ALPHA) -> bool:
        """Significant alone (uncorrected): the compare view's question about one chosen pair.
        A board's ranks correct for all its pairs (suite.report.ranking)."""
        return self.p_value is not None and self.p_value < alpha


def paired_comparison(a: Mapping[int, float], b: Mapping[int, float], floor_a: Mapping[int, float] | None = None,
                      floor_b: Mapping[int, float] | None = None, level: float = LEVEL) -> Comparison:
    """Paired t-test of per-seed values ``a[seed] - b[seed]`` over the shared seeds.

    ``floor_a``, ``floor_b``: seed -> the sampling variance of that seed's value (shares)."""
    shared = sorted(s for s in a.keys() & b.keys() if a[s] is not None and b[s] is not None)
    if not shared:
        return Comparison(None, Interval(None, None, None, 0, "no value"), None, 0)
    diffs = np.array([[a[s] - b[s] for s in shared]])
    floors = None
    if floor_a or floor_b:
        floors = np.array([[(floor_a or {}).get(s, 0.0) + (floor_b or {}).get(s, 0.0) for s in shared]])
    test = paired_t(diffs, floors)
    mean, n = float(test.mean[0]), len(shared)
    if n < 2:
        return Comparison(mean, Interval(mean, None, None, 1, "one seed"), None, 1)
    half = _t_quantile(0.5 + level / 2, n - 1) * float(test.se[0])
    return Comparison(mean, Interval(mean, mean - half, mean + half, n, METHOD), float(test.p[0]), n)


def all_overlap(intervals: Sequence[Interval]) -> bool:
    """True when every pair of intervals overlaps (nothing on the board is separated)."""
    shown = [i for i in intervals if i.mean is not None]
    return len(shown) > 1 and all(a.overlaps(b) for k, a in enumerate(shown) for b in shown[k + 1:])


def all_at_chance(intervals: Sequence[Interval], chance: float, lower_is_better: bool) -> bool:
    """True when no entry is better than ``chance`` beyond its interval (or its value, with one seed)."""
    shown = [i for i in intervals if i.mean is not None]
    if not shown:
        return False

    def beats(i: Interval) -> bool:
        edge = i.mean if i.lo is None else (i.hi if lower_is_better else i.lo)
        return edge < chance if lower_is_better else edge > chance

    return not any(beats(i) for i in shown)
