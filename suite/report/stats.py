"""Statistics for the leaderboard: intervals over seeds, paired comparisons, ranks with ties.

Pure (numpy and scipy, no torch), so the site and the terminal use it directly.

* **Interval over seeds** (:func:`seed_interval`): the mean of the per-seed values with a
  two-sided 95% Student-t interval, mean +- t_{0.975, n-1} s / sqrt(n). One seed gives
  no interval (``method = "one seed"``): a board says so instead of showing one.
* **Sampling interval of an accuracy** (:func:`wilson_interval`): the Wilson score
  interval of k successes in n examples (Wilson 1927), for a single model's accuracy.
* **Paired comparison** (:func:`paired_comparison`): two entries measured on the same
  seeds (same data and initialisation per seed): the mean per-seed difference, its
  t interval and the two-sided paired t-test's p-value.
* **Ranks with ties** (:func:`rank_with_ties`): rank = 1 + the number of entries that are
  significantly better (paired test at level 0.05 over shared seeds). Entries that no
  better-scoring entry beats significantly share a rank, so noise is never ranked.
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


def seed_interval(values: Sequence[float | None], level: float = LEVEL) -> Interval:
    """Mean and t interval of per-seed values (None values are left out)."""
    xs = np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if len(xs) == 0:
        return Interval(None, None, None, 0, "no value")
    mean = float(xs.mean())
    if len(xs) == 1:
        return Interval(mean, None, None, 1, "one seed")
    sd = float(xs.std(ddof=1))
    half = _t_quantile(0.5 + level / 2, len(xs) - 1) * sd / math.sqrt(len(xs))
    return Interval(mean, mean - half, mean + half, len(xs), METHOD)


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
class Comparison:
    """a - b over the seeds both have."""

    mean_difference: float | None
    interval: Interval
    p_value: float | None
    n_shared: int

    def significant(self, alpha: float = ALPHA) -> bool:
        return self.p_value is not None and self.p_value < alpha


def paired_comparison(a: Mapping[int, float], b: Mapping[int, float]) -> Comparison:
    """Paired t-test of per-seed values ``a[seed] - b[seed]`` over the shared seeds."""
    shared = sorted(s for s in a.keys() & b.keys() if a[s] is not None and b[s] is not None)
    diffs = [a[s] - b[s] for s in shared]
    interval = seed_interval(diffs)
    if len(diffs) < 2:
        return Comparison(interval.mean, interval, None, len(diffs))
    if np.allclose(diffs, diffs[0]):  # no spread: the t statistic is undefined, the sign is not
        return Comparison(interval.mean, interval, 0.0 if diffs[0] != 0 else 1.0, len(diffs))
    # the paired t-test, t = mean(d) / (sd(d) / sqrt(n)) on n - 1 degrees of freedom, in closed
    # form: scipy's ttest_rel gives the same p but its overhead dominated rendering large boards
    n, mean, sd = len(diffs), float(np.mean(diffs)), float(np.std(diffs, ddof=1))
    p = float(2 * scipy_stats.t.sf(abs(mean / (sd / math.sqrt(n))), n - 1))
    return Comparison(interval.mean, interval, p, len(diffs))


def rank_with_ties(per_seed: Mapping[str, Mapping[int, float]], lower_is_better: bool,
                   alpha: float = ALPHA) -> dict[str, int | None]:
    """Rank = 1 + the number of entries significantly better (paired, shared seeds).

    ``per_seed`` maps an entry to its per-seed values; an entry without values gets
    None. With one seed nothing is significant, so every entry ranks 1: a board says
    "one seed" rather than ranking noise.
    """
    sign = -1.0 if lower_is_better else 1.0
    ranks: dict[str, int | None] = {}
    for name, mine in per_seed.items():
        if not any(v is not None for v in mine.values()):
            ranks[name] = None
            continue
        better = 0
        for other, theirs in per_seed.items():
            if other == name:
                continue
            c = paired_comparison(theirs, mine)
            if c.mean_difference is not None and sign * c.mean_difference > 0 and c.significant(alpha):
                better += 1
        ranks[name] = 1 + better
    return ranks


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
