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

**Text sampling** (:func:`text_variance`). A bits-per-byte figure is measured on a sample of
text, and every seed (and every row of a board) reads the *same* sample: its text error does
not average out over seeds, and the between-seed spread cannot see it. A board's figure is
modelled as crossed random effects of seeds and passages (Y[s, d] = mu + a_s + t_d + e_sd;
the same model as "clustered standard errors" for evaluation questions, Miller 2024, "Adding
Error Bars to Evals", arXiv:2411.00640, sec. 2-3), whose mean over k seeds and P passages has
variance var(a)/k + var(t)/P + var(e)/(kP). Estimated by moments:

    se^2 = max(s^2, floor) / k  +  v_text,     v_text = var_d(mean over seeds of Y[., d]) / P

where s^2 is the per-seed values' sample variance (expectation var(a) + var(e)/P) and the
second term's expectation is var(t)/P + var(e)/(kP): together they count var(e)/(kP) twice,
a small overstatement (conservative). A paired comparison takes Y as the per-passage
difference of the two rows, so text effects the rows share cancel and only their interaction
counts. The interval and the test use Student's t with the Welch-Satterthwaite degrees of
freedom of the two terms (Satterthwaite 1946), and are never narrower (a p-value never smaller)
than over the seeds alone: with three seeds it is their t quantile, not their variance, that
makes an interval wide, and a well-measured text term would otherwise buy back degrees of
freedom the seeds never had. Records without per-passage values (the first
contiguous bytes design, suite.evaluation.evaluators.extrapolation) have only each run's
window-level standard error: v_text is then the mean over seeds of its square, and for a
difference the sum of the two rows' (as if their windows' errors were independent: the
same text makes them positively correlated, so this overstates the difference's variance).
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
class TextVariance:
    """The text-sampling variance of a mean over seeds (or of a paired difference), its degrees
    of freedom, and how it was estimated."""

    variance: float
    dof: float  # passages - 1; inf for a bound from recorded standard errors
    method: str  # PASSAGES or WINDOW_BOUND

    def __post_init__(self):
        if not (math.isfinite(self.variance) and self.variance >= 0):
            object.__setattr__(self, "variance", 0.0)


PASSAGES = "passages resampled"
WINDOW_BOUND = "bounded by the runs' window-level error (passages not recorded)"
TEXT_METHOD = " + text sampling"

def run_text_variance(run: "np.ndarray | float") -> float:
    """The text-sampling variance of one run's figure: its passages' var / P, or the variance recorded."""
    if isinstance(run, np.ndarray):
        return float(run.var(ddof=1) / len(run)) if len(run) > 1 else 0.0
    return float(run)


def text_variance(a: Mapping[int, "np.ndarray | float"], b: Mapping[int, "np.ndarray | float"] | None,
                  seeds: Sequence[int]) -> TextVariance | None:
    """The text-sampling variance of the mean over ``seeds`` of row a (of a - b, with b), from
    the runs' passages (crossed seeds x passages, see the module docstring) where every run
    has the same passages; else the bound from the runs' own text variances. None without text."""
    runs = [a.get(s) for s in seeds] + ([b.get(s) for s in seeds] if b is not None else [])
    if not seeds or any(r is None for r in runs):
        return None
    arrays = [r for r in runs if isinstance(r, np.ndarray)]
    if len(arrays) == len(runs) and len({len(r) for r in arrays}) == 1 and len(arrays[0]) > 1:
        x = np.stack([a[s] for s in seeds])
        if b is not None:
            x = x - np.stack([b[s] for s in seeds])
        per_passage = x.mean(axis=0)
        return TextVariance(float(per_passage.var(ddof=1) / len(per_passage)), float(len(per_passage) - 1), PASSAGES)
    variance = float(np.mean([run_text_variance(a[s]) for s in seeds]))
    if b is not None:
        variance += float(np.mean([run_text_variance(b[s]) for s in seeds]))
    return TextVariance(variance, math.inf, WINDOW_BOUND)


def satterthwaite(seed_part: float | np.ndarray, seed_dof, text_part, text_dof):
    """Degrees of freedom of a sum of two variance estimates (Satterthwaite 1946): (A + B)^2 /
    (A^2 / dof_A + B^2 / dof_B); works on arrays. A zero total keeps the seeds' dof."""
    seed_part, text_part = np.asarray(seed_part, float), np.asarray(text_part, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = seed_part ** 2 / np.asarray(seed_dof, float) + np.where(
            np.isinf(text_dof), 0.0, text_part ** 2 / np.asarray(text_dof, float))
        dof = (seed_part + text_part) ** 2 / denominator
    return np.where((denominator > 0) & np.isfinite(dof), dof, np.asarray(seed_dof, float))


@dataclass(frozen=True)
class Interval:
    mean: float | None
    lo: float | None
    hi: float | None
    n: int
    method: str

    @property
    def symmetric(self) -> bool:
        """A t interval (mean +- its half-width), with or without text sampling; not a Wilson or clipped one."""
        return self.lo is not None and self.method in (METHOD, METHOD + TEXT_METHOD)

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
                  share: bool = False, text: TextVariance | None = None) -> Interval:
    """Mean and t interval of per-seed values (None values are left out).

    ``floor``: the least variance of one seed's value (the mean sampling variance of a share);
    ``share``: the interval is clipped to [0, 1]; ``text``: the text-sampling variance of the
    mean (:func:`text_variance`), added to the seeds' with Satterthwaite's degrees of freedom."""
    xs = np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if len(xs) == 0:
        return Interval(None, None, None, 0, "no value")
    mean = float(xs.mean())
    if len(xs) == 1:
        return Interval(mean, None, None, 1, "one seed")
    seed_part = max(float(xs.var(ddof=1)), floor or 0.0) / len(xs)
    text_part = text.variance if text is not None else 0.0
    half = _t_quantile(0.5 + level / 2, len(xs) - 1) * math.sqrt(seed_part)
    if text is not None:  # never narrower than over the seeds alone (module docstring)
        dof = float(satterthwaite(seed_part, len(xs) - 1, text_part, text.dof))
        half = max(half, float(scipy_stats.t.ppf(0.5 + level / 2, dof)) * math.sqrt(seed_part + text_part))
    method = METHOD + (TEXT_METHOD if text is not None else "")
    lo, hi = mean - half, mean + half
    if share and (lo < 0.0 or hi > 1.0):
        return Interval(mean, max(0.0, lo), min(1.0, hi), len(xs), CLIPPED)
    return Interval(mean, lo, hi, len(xs), method)


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
    text: np.ndarray | None = None  # the text-sampling variance in se^2 (None: none)


def paired_t(diffs: np.ndarray, floors: np.ndarray | None = None, text: np.ndarray | None = None,
             text_dof: np.ndarray | None = None) -> PairedT:
    """Paired t-tests of the rows of ``diffs`` (pairs x seeds, nan where a seed is not shared).

    ``floors`` (same shape): the sampling variance of each per-seed difference (0 where the
    figure has none); ``text`` (pairs): the text-sampling variance of each mean difference
    (:func:`text_variance`; 0 where none), with ``text_dof``. Vectorized: a board of 30 rows
    has 435 pairs, and the calibration tests simulate thousands of boards."""
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
    seed_part = variance / safe_n
    text = np.zeros_like(seed_part) if text is None else np.nan_to_num(np.asarray(text, float))
    text_dof = np.full_like(seed_part, np.inf) if text_dof is None else np.asarray(text_dof, float)
    dof = satterthwaite(seed_part, np.maximum(n - 1, 1), text, text_dof)
    se = np.sqrt(seed_part + text)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(mean) / se
    p = 2 * scipy_stats.t.sf(t, dof)
    if text is not None and np.any(text):  # never smaller than over the seeds alone (module docstring)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.maximum(p, 2 * scipy_stats.t.sf(np.abs(mean) / np.sqrt(seed_part), np.maximum(n - 1, 1)))
    # a zero standard error (no floor, the same difference on every seed): the t-test's limit
    p = np.where(se == 0, np.where(mean == 0, 1.0, 0.0), p)
    p = np.where(n < 2, np.nan, p)
    return PairedT(np.where(n > 0, mean, np.nan), se, n, p, text if np.any(text) else None)


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
                      floor_b: Mapping[int, float] | None = None, level: float = LEVEL,
                      text_a: Mapping[int, "np.ndarray | float"] | None = None,
                      text_b: Mapping[int, "np.ndarray | float"] | None = None) -> Comparison:
    """Paired t-test of per-seed values ``a[seed] - b[seed]`` over the shared seeds.

    ``floor_a``, ``floor_b``: seed -> the sampling variance of that seed's value (shares);
    ``text_a``, ``text_b``: seed -> that run's text (:func:`text_variance`)."""
    shared = sorted(s for s in a.keys() & b.keys() if a[s] is not None and b[s] is not None)
    if not shared:
        return Comparison(None, Interval(None, None, None, 0, "no value"), None, 0)
    diffs = np.array([[a[s] - b[s] for s in shared]])
    floors = None
    if floor_a or floor_b:
        floors = np.array([[(floor_a or {}).get(s, 0.0) + (floor_b or {}).get(s, 0.0) for s in shared]])
    text = text_variance(text_a, text_b, shared) if text_a and text_b else None
    test = paired_t(diffs, floors, None if text is None else np.array([text.variance]),
                    None if text is None else np.array([text.dof]))
    mean, n = float(test.mean[0]), len(shared)
    if n < 2:
        return Comparison(mean, Interval(mean, None, None, 1, "one seed"), None, 1)
    seed_part = float(test.se[0]) ** 2 - (text.variance if text else 0.0)
    half = _t_quantile(0.5 + level / 2, n - 1) * math.sqrt(max(seed_part, 0.0))
    if text is not None:  # never narrower than over the seeds alone (module docstring)
        dof = float(satterthwaite(seed_part, n - 1, text.variance, text.dof))
        half = max(half, float(scipy_stats.t.ppf(0.5 + level / 2, dof)) * float(test.se[0]))
    method = METHOD + (TEXT_METHOD if text else "")
    return Comparison(mean, Interval(mean, mean - half, mean + half, n, method), float(test.p[0]), n)


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
