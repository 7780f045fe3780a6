"""Each run's text, for the intervals and paired tests of figures measured on a sample of text.

A bits-per-byte figure is a mean over the passages of the test split it read; the boards'
statistics add that text sampling to the seeds' (suite.report.stats, "Text sampling"). Here a
board's rows get, per column and seed, what the statistics need of a run's text: its
per-passage values where the evaluation recorded them (the passages design of
suite.evaluation.evaluators.extrapolation, read from the samples table), else the square of
its recorded window-level standard error (the first-bytes design), and how the derived
columns (the mean over scales, the change from 1x to the longest scale) combine them: the
passages are the same at every scale, so a per-passage mean or difference is exact. With only
variances: the scales read the same bytes, so their errors are positively correlated; the
variance of a mean over scales is then at most the square of the mean standard error (full
correlation), and that of a difference at most the sum of the two variances (no correlation).
"""

from __future__ import annotations

import math

import numpy as np

from suite.report import stats

TEXT_METRICS = frozenset({"bpb", "key_bpb"})  # figures of an evaluation over a sample of the test split


def load_passages(con) -> dict[str, np.ndarray]:
    """eval_id -> the per-passage bits of an evaluation that recorded passages, in passage order."""
    rows = con.execute("SELECT eval_id, list(correct ORDER BY doc_id) FROM samples WHERE metric = 'bpb' "
                       "GROUP BY eval_id").fetchall()
    return {eval_id: np.asarray(values, dtype=float) for eval_id, values in rows}


def text_of_figure(figure: dict, passages: dict[str, np.ndarray]):
    """A figure's text (its passages, or its window-level variance), None where it has none."""
    if figure.get("metric") not in TEXT_METRICS or figure.get("status") != "ok":
        return None
    parts = passages.get(figure.get("eval_id"))
    if parts is not None and len(parts) > 1:
        return parts
    stderr = figure.get("stderr")
    return float(stderr) ** 2 if stderr is not None and math.isfinite(stderr) else None


def run_texts(rows: list[dict]) -> dict[int, object]:
    """seed -> the text of that seed's figure (the first where a seed has several)."""
    out: dict[int, object] = {}
    for f in rows:
        if f.get("text") is not None and f.get("seed") is not None:
            out.setdefault(f["seed"], f["text"])
    return out


def _all_passages(runs: list) -> bool:
    return all(isinstance(r, np.ndarray) for r in runs) and len({len(r) for r in runs}) == 1


def mean_of(columns: list[dict[int, object]], seeds) -> dict[int, object]:
    """Per seed, the text of the mean of several columns' figures (the score: mean over scales)."""
    out = {}
    for seed in seeds:
        runs = [c.get(seed) for c in columns]
        if not runs or any(r is None for r in runs):
            continue
        if _all_passages(runs):
            out[seed] = np.mean(np.stack(runs), axis=0)
        else:  # fully correlated scales: the sd of the mean is at most the mean sd
            out[seed] = float(np.mean([math.sqrt(stats.run_text_variance(r)) for r in runs])) ** 2
    return out


def difference_of(later: dict[int, object], first: dict[int, object]) -> dict[int, object]:
    """Per seed, the text of the difference later - first of two columns of one run (the change)."""
    out = {}
    for seed in later.keys() & first.keys():
        a, b = later[seed], first[seed]
        if _all_passages([a, b]):
            out[seed] = a - b
        else:
            out[seed] = stats.run_text_variance(a) + stats.run_text_variance(b)  # positively correlated: at most the sum
    return out


def cell_text(runs: dict[int, object], seeds) -> stats.TextVariance | None:
    """The text-sampling variance of a cell's mean over ``seeds``."""
    return stats.text_variance(runs, None, sorted(seeds)) if runs else None


def text_note(entries) -> str:
    """What a board's method adds for text sampling: how its runs' text entered ("" without text)."""
    runs = [t for e in entries for column in e.text.values() for t in column.values()]
    if not runs:
        return ""
    if all(isinstance(t, np.ndarray) for t in runs):
        return ("; plus text sampling: the evenly spaced passages every run read, resampled as crossed with the seeds "
                "(docs/concepts/boards.md, \"Text sampling\")")
    return ("; plus text sampling, bounded by each run's window-level error: these records read the test split's "
            "first bytes, not passages, so two rows' text errors are taken as independent, which overstates a "
            "difference's (the rows read the same bytes) "
            "(docs/concepts/boards.md, \"Text sampling\")")
