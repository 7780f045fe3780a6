"""Summary scores of metric rows: pure Python, no torch (the site and the CLI read these).

Extrapolation score and effective length of a metric measured at several scales
(multiples of the training length).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

TOLERANCE = 0.1  # effective length: within 10% (relative) of the 1x value
# effective length of an exact-match task: also at least this accuracy at every length up to
# it (RULER's threshold is a 7B model's 85.6%; the tiny models a CPU trains need a lower bar
# to say anything, and half the examples right is still well clear of every task's chance)
ABSOLUTE_ACCURACY = 0.5


def _retention(m1: float, ms: float | None, lower_is_better: bool) -> float:
    if ms is None:
        return 0.0
    if lower_is_better:
        return m1 / ms if ms > 0 else math.inf
    return ms / m1


def extrapolation_score(values_by_scale: Mapping[int, float | None], lower_is_better: bool = False) -> float | None:
    """How much of the 1x skill survives beyond the training length, averaged over scales > 1.

        higher is better (accuracy):  score = mean_{s > 1} m(s) / m(1)
        lower is better (bpb):        score = mean_{s > 1} m(1) / m(s)

    1.0: no degradation; below 1: skill lost; above 1: better with more context (bpb
    often is). A scale where the model cannot run (value None: not applicable)
    counts as retention 0, so an encoding is not flattered by where it cannot go.
    Undefined (None) without a 1x value, without scales > 1, or when m(1) = 0 for a
    higher-is-better metric (no in-distribution skill to retain).
    """
    m1 = values_by_scale.get(1)
    longer = sorted(s for s in values_by_scale if s > 1)
    if m1 is None or not longer or (m1 == 0 and not lower_is_better):
        return None
    return sum(_retention(m1, values_by_scale[s], lower_is_better) for s in longer) / len(longer)


def effective_length(values_by_scale: Mapping[int, float | None], tolerance: float = TOLERANCE,
                     lower_is_better: bool = False, absolute: float | None = None) -> int | None:
    """The largest scale ``s`` such that every scale up to ``s`` stays within ``tolerance``
    (relative) of the 1x value and, where ``absolute`` is given, at or above it (higher is
    better) or at or below it (lower is better), as RULER (Hsieh et al. 2024, Sec. 4: a
    fixed threshold) and NoLiMa (Modarressi et al. 2025: a share of the model's own base
    score) define it, both at once:

        higher is better:  m(s') >= (1 - tolerance) * m(1)  and  m(s') >= absolute  for every evaluated s' <= s
        lower is better:   m(s') <= (1 + tolerance) * m(1)  and  m(s') <= absolute  for every evaluated s' <= s

    In units of the training length (eval length = s x L). 0 when the 1x value itself
    misses the absolute threshold (shorter than one training length). A not-applicable
    scale (None) ends the run. Undefined (None) without a 1x value or when m(1) = 0 for a
    higher-is-better metric without an absolute threshold (nothing to stay close to).
    """
    m1 = values_by_scale.get(1)
    if m1 is None or (m1 == 0 and not lower_is_better and absolute is None):
        return None

    def meets_absolute(value: float) -> bool:
        return absolute is None or (value <= absolute if lower_is_better else value >= absolute)

    if not meets_absolute(m1):
        return 0
    best = 1
    for s in sorted(s for s in values_by_scale if s > 1):
        value = values_by_scale[s]
        ok = value is not None and (value <= (1 + tolerance) * m1 if lower_is_better else value >= (1 - tolerance) * m1)
        if not (ok and meets_absolute(value)):
            break
        best = s
    return best


def summarize(rows: list[dict], lower_is_better: Collection[str] = ("bpb",), tolerance: float = TOLERANCE) -> list[dict]:
    """One summary per (task, metric) of metric rows: extrapolation score and effective length."""
    series: dict[tuple[str, str], dict[int, float | None]] = {}
    for row in rows:
        series.setdefault((row["task"], row["metric"]), {})[row["scale"]] = row["value"]
    return [{"task": task, "metric": metric, "tolerance": tolerance,
             "extrapolation_score": extrapolation_score(values, metric in lower_is_better),
             "effective_length": effective_length(values, tolerance, metric in lower_is_better)}
            for (task, metric), values in series.items()]
