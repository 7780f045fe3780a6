"""What a record's numbers may be where the project computes with them: the checks every record
passes when it is read (suite.results.record_checks.problem), beside those of its names and paths.

A figure is plotted, pooled and ranked, so a value a stranger's record gives that no evaluator
could have produced (an accuracy of 6.25, a count below 0) would reach a board's arithmetic as a
"math domain error" with no file named, or a page as nonsense; it is refused where it is read,
naming its field.
"""

from __future__ import annotations

from suite.results.rows import declaration

BOUND_SLACK = 1e-9  # a correlation or a mean computed in floats may pass its bound by an ulp or so


def _figure_problem(record) -> str | None:
    """The first figure outside its metric's bounds (metrics.yaml: an accuracy above 1 is no
    accuracy, and a board's binomial arithmetic has no answer for it), or of a negative count or
    standard error; a metric without bounds, or not declared here (a plugin's), is not bounded."""
    for i, row in enumerate(getattr(record, "metrics", None) or ()):
        if row.n < 0:  # a count of examples or windows: the boards weigh figures by it
            return f"metrics.{i}.n: {row.n} is not a count (below 0)"
        if row.stderr is not None and row.stderr < 0:
            return f"metrics.{i}.stderr: {row.stderr!r} is below 0"
        info = declaration(row.metric)
        if row.value is None or info is None or info.bounds is None:
            continue
        low, high = info.bounds
        if (low is not None and row.value < low - BOUND_SLACK) or (high is not None and row.value > high + BOUND_SLACK):
            shown = ", ".join("unbounded" if b is None else f"{b:g}" for b in info.bounds)
            return f"metrics.{i}.value: {row.value!r} is outside what {row.metric} can be ([{shown}], suite/results/metrics.yaml)"
    return None


def number_problem(record) -> str | None:
    """The first number of ``record`` that no run could have produced; None when all are sound."""
    return _figure_problem(record)
