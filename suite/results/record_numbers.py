"""What a record's numbers may be where the project computes with them: the checks every record
passes when it is read (suite.results.record_checks.problem), beside those of its names and paths.

A figure is plotted, pooled and ranked, so a value a stranger's record gives that no evaluator
could have produced (an accuracy of 6.25, a count below 0) would reach a board's arithmetic as a
"math domain error" with no file named, or a page as nonsense; it is refused where it is read,
naming its field.
"""

from __future__ import annotations

import math

from suite.results.rows import declaration

BOUND_SLACK = 1e-9  # a correlation or a mean computed in floats may pass its bound by an ulp or so
INT32 = 1 << 31  # the database stores shapes, lengths and positions as 32-bit integers
# provenance figures that are amounts (seconds, tokens per second, megabytes, a loss, counts): finite
# and at least 0; a run's header, the cost board and `replicate --cheapest` compute with them
AMOUNTS = ("wall_s", "cpu_s", "peak_memory_mb", "train_wall_s", "train_tokens_per_s", "final_train_loss",
           "n_params", "data_wait_s", "world_size", "resumed_from_step")
RECIPE_COUNTS = ("seq_len", "steps", "batch_size")  # run.train's, which the boards' recipes and plots read


def _figure_problem(record) -> str | None:
    """The first figure outside its metric's bounds (metrics.yaml: an accuracy above 1 is no
    accuracy, and a board's binomial arithmetic has no answer for it), or of a negative count or
    standard error; a metric without bounds, or not declared here (a plugin's), is not bounded."""
    for i, row in enumerate(getattr(record, "metrics", None) or ()):
        if row.n < 0:  # a count of examples or windows: the boards weigh figures by it
            return f"metrics.{i}.n: {row.n} is not a count (below 0)"
        if row.stderr is not None and row.stderr < 0:
            return f"metrics.{i}.stderr: {row.stderr!r} is below 0"
        if row.chance is not None and not (math.isfinite(row.chance) and 0 <= row.chance <= 1):
            return (f"metrics.{i}.chance: {row.chance!r} is not a share between 0 and 1 "
                    "(a board takes it for all its rows)")
        for field in ("scale", "eval_len"):
            if (value := getattr(row, field)) is not None and not 0 < value < INT32:
                return f"metrics.{i}.{field}: {value} is not between 1 and 2**31 - 1"
        info = declaration(row.metric)
        if row.value is None or info is None or info.bounds is None:
            continue
        low, high = info.bounds
        if (low is not None and row.value < low - BOUND_SLACK) or (high is not None and row.value > high + BOUND_SLACK):
            shown = ", ".join("unbounded" if b is None else f"{b:g}" for b in info.bounds)
            return (f"metrics.{i}.value: {row.value!r} is outside what {row.metric} can be "
                    f"([{shown}], suite/results/metrics.yaml)")
    return None


def _amount(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _provenance_problem(record) -> str | None:
    for field in AMOUNTS:
        value = getattr(record.provenance, field, None)
        if value is not None and not _amount(value):
            return f"provenance.{field}: {value!r} is not a finite amount at least 0"
    share = getattr(record.provenance, "data_wait_share", None)
    if share is not None and not (_amount(share) and share <= 1):
        return f"provenance.data_wait_share: {share!r} is not a share between 0 and 1"
    return None


def _recipe_problem(record) -> str | None:
    """A training run's recipe (run.train) as the boards read it: counts below 2**31, rates above 0."""
    train = (record.run or {}).get("train", {})  # a recipe without it, or without a count, reads as unknown
    if not isinstance(train, dict):
        return "run.train: not an object (the run's recipe)"
    for field in RECIPE_COUNTS:
        value, least = train.get(field), 0 if field == "steps" else 1  # 0 steps: a child evaluated as it starts
        whole = isinstance(value, int) and not isinstance(value, bool)
        if value is not None and not (whole and least <= value < INT32):
            return f"run.train.{field}: {value!r} is not a count between {least} and 2**31 - 1"
    rates = [("lr", train.get("lr"))] if train.get("lr") is not None else []
    sweep = train.get("lr_sweep")
    if sweep is not None and not isinstance(sweep, list):
        return f"run.train.lr_sweep: {sweep!r} is not a list of learning rates"
    rates += [(f"lr_sweep.{i}", rate) for i, rate in enumerate(sweep or [])]
    for where, rate in rates:
        if not (_amount(rate) and rate > 0):
            return f"run.train.{where}: {rate!r} is not a learning rate (a finite number above 0)"
    return None


def _curve_problem(record) -> str | None:
    """A training run's learning curve: one value per step in every series; an evaluation's
    loss-vs-position rows: positions and buckets below 2**31, counts at least 0."""
    curve = getattr(record, "learning_curve", None) or {}
    steps = len(curve.get("step", ()))
    for name, series in curve.items():
        if len(series) != steps:
            return f"learning_curve.{name}: {len(series)} values for {steps} steps"
        if name.endswith("loss") and any(v is not None and v < 0 for v in series):  # NaN: a diverged step
            return f"learning_curve.{name}: a loss below 0 (tuning picks the learning rate of the lowest)"
    for i, row in enumerate(getattr(record, "curves", None) or ()):
        for field in ("bucket", "pos_start", "pos_end", "eval_len", "scale"):
            if not 0 <= getattr(row, field) < INT32:
                return f"curves.{i}.{field}: {getattr(row, field)} is not between 0 and 2**31 - 1"
        if row.n < 0:
            return f"curves.{i}.n: {row.n} is not a count (below 0)"
    return None


def number_problem(record) -> str | None:
    """The first number of ``record`` that no run could have produced; None when all are sound."""
    return (_figure_problem(record) or _provenance_problem(record) or _curve_problem(record)
            or (_recipe_problem(record) if record.kind == "training_run" else None))
