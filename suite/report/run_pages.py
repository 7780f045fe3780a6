"""The site's page of each training run: its provenance, spec, learning curve and every
evaluation of its checkpoint."""

from __future__ import annotations

import json
from collections import defaultdict

from suite.report import plots
from suite.report.figures import _dicts
from suite.results.machine_paths import without_machine_paths


def run_pages(con) -> list[dict]:
    """One page per training run: provenance, spec, and every evaluation of its checkpoint."""
    runs = _dicts(con, "SELECT * FROM runs ORDER BY encoding")
    metrics: dict[str, list[dict]] = defaultdict(list)
    for m in _dicts(con, """SELECT m.*, e.encoding AS evaluated_as, e.evaluator FROM metrics m JOIN evaluations e USING (eval_id)
                            ORDER BY m.run_id, e.encoding, m.task, m.metric, m.scale"""):  # one query, not one per run
        metrics[m["run_id"]].append(m)
    failed = defaultdict(list)
    for e in _dicts(con, "SELECT run_id, eval_id, evaluator, encoding, scale, reason FROM evaluations WHERE status = 'failed'"):
        failed[e["run_id"]].append(e)
    for r in runs:
        r["run"] = without_machine_paths(json.loads(r["run"]))
        r["corpus"] = without_machine_paths(r["corpus"]) if r["corpus"] else r["corpus"]
        r["versions"] = json.loads(r["versions"])
        r["metrics"] = metrics[r["run_id"]]
        r["failed_evaluations"] = failed[r["run_id"]]
        r["evaluated_as"] = sorted({m["evaluated_as"] for m in r["metrics"]} | {r["encoding"]})
        r["window_policies"] = sorted({m["window_policy"] for m in r["metrics"] if m["window_policy"]})
        r["learning_curve"] = json.loads(r["learning_curve"]) if r.get("learning_curve") else {}
        r["learning_plots"] = learning_plots(r)
        r["lineage"] = json.loads(r["lineage"]) if r.get("lineage") else None
    children = defaultdict(list)  # parent run id -> its fine-tuned children, linked both ways
    for r in runs:
        if r["lineage"]:
            children[r["lineage"]["parent_run_id"]].append({"run_id": r["run_id"], "encoding": r["encoding"],
                                                             "display_name": r["display_name"]})
    for r in runs:
        r["children"] = children[r["run_id"]]
    return runs


LEARNING_FIGURES = {"heldout_exact_match": ("held-out exact match at the training length", (0.0, 1.0)),
                    "train_loss": ("training loss (nats per target byte)", None)}


def learning_plots(run: dict) -> list[str]:
    """The run's learning curve (suite.training.learning_curve), one plot per figure: held-out
    exact match first (did the model learn its task?), then the training loss."""
    curve = run["learning_curve"]
    steps = curve.get("step") or []
    out = []
    for name, (label, bounds) in LEARNING_FIGURES.items():
        values = curve.get(name)
        if not values:
            continue
        series = plots.Series(run["encoding"], run["display_name"], [(s, v, None, None) for s, v in zip(steps, values)])
        out.append(plots.line_plot([series], title=f"{label} vs training step", xlabel="training step", ylabel=label,
                                   log2_x=False, legend=False, bounds=bounds, height=220))
    return out
