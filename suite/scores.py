"""Summary scores of metric rows: pure Python, no torch (the site and the CLI read these).

Extrapolation score and effective length of a metric measured at several scales
(multiples of the training length).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

TOLERANCE = 0.1  # effective length: within 10% (relative) of the 1x value


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
                     lower_is_better: bool = False) -> int | None:
    """The largest scale ``s`` such that every scale up to ``s`` stays within ``tolerance``
    (relative) of the 1x value:

        higher is better:  m(s') >= (1 - tolerance) * m(1)  for every evaluated s' <= s
        lower is better:   m(s') <= (1 + tolerance) * m(1)  for every evaluated s' <= s

    In units of the training length (eval length = s x L); at least 1 when m(1) exists.
    A not-applicable scale (None) ends the run. Undefined (None) without a 1x value or
    when m(1) = 0 for a higher-is-better metric (nothing to stay close to).
    """
    m1 = values_by_scale.get(1)
    if m1 is None or (m1 == 0 and not lower_is_better):
        return None
    best = 1
    for s in sorted(s for s in values_by_scale if s > 1):
        value = values_by_scale[s]
        ok = value is not None and (value <= (1 + tolerance) * m1 if lower_is_better else value >= (1 - tolerance) * m1)
        if not ok:
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
