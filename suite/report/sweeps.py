"""What a size ladder and a tuning budget add to the pages: every learning rate a tuned grid
tried (suite.plan.tuning writes them as training runs), and the sizes in order of their weights
(the scale view's order, suite.report.scale_view)."""

from __future__ import annotations

import json
from collections import defaultdict

from suite.core.curves import VALIDATION_FIGURES
from suite.report.figures import _dicts


def lr_sweeps(con) -> dict[str, list[dict]]:
    """Every learning rate a tuned grid tried (suite.plan.tuning), by encoding as trained: each sweep
    run's size, task, steps, rate, validation loss and status, and whether it is the rate chosen
    (the run that was evaluated). Every variant, so no best-of-N is hidden. A sweep is one recipe's
    (its steps, training length and batch): a size ladder trains a size at two budgets, each with
    a sweep and a rate chosen of its own."""
    rows = _dicts(con, """
        SELECT r.run_id, r.encoding, r.size, r.task, r.seed, r.status, r.learning_curve,
               CAST(json_extract(r.run, '$.train.lr') AS DOUBLE) AS lr,
               CAST(json_extract(r.run, '$.train.steps') AS BIGINT) AS steps,
               CAST(json_extract(r.run, '$.train.seq_len') AS BIGINT) AS seq_len,
               CAST(json_extract(r.run, '$.train.batch_size') AS BIGINT) AS batch_size,
               json_extract(r.run, '$.train.lr_sweep') AS lr_sweep,
               EXISTS (SELECT 1 FROM evaluations e WHERE e.run_id = r.run_id) AS chosen
        FROM runs r
        WHERE json_extract(r.run, '$.train.lr_sweep') IS NOT NULL
          AND json_type(json_extract(r.run, '$.train.lr_sweep')) = 'ARRAY'
        ORDER BY r.encoding, r.size, r.task, steps, seq_len, batch_size, r.seed, lr""")
    sweep = lambda r: (r["encoding"], r["size"], r["task"], r["steps"], r["seq_len"], r["batch_size"], r["seed"])  # noqa: E731
    rates = defaultdict(set)  # the sweep is the seed that has several rates; the other seeds have the chosen one
    for r in rows:
        rates[sweep(r)].add(r["lr"])
    out: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if len(rates[sweep(r)]) < 2:
            continue
        curve = json.loads(r.pop("learning_curve") or "{}")
        figure = next((curve[n][-1] for n in VALIDATION_FIGURES if curve.get(n)), None)
        tried = json.loads(r.pop("lr_sweep"))
        out[r["encoding"]].append({**r, "validation_loss": figure, "budget": len(tried)})
    return out


def size_order(runs: dict[str, dict]) -> list[str]:
    """The sizes of the database's runs, smallest first (by their runs' weights: a size's largest
    count, since an encoding may add a few weights of its own)."""
    weights: dict[str, int] = {}
    for r in runs.values():
        if r.get("n_params"):
            weights[r["size"]] = max(weights.get(r["size"], 0), r["n_params"])
    return sorted(weights, key=lambda s: (weights[s], s))
