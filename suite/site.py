"""DuckDB -> Jinja2 -> a static leaderboard site that works from file:// offline.

Pages: ``index.html`` (leaderboards, coverage, downloads), ``encodings/<name>.html``
(paper, parameters, scale behaviour, loss-vs-position and bpb-vs-scale plots), and
``runs/<run_id>.html`` (a training run: provenance, spec, every evaluation of its checkpoint). All text from specs is escaped by
Jinja2's autoescape; CSS and JavaScript are inlined, so no external assets.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import duckdb
from jinja2 import Environment, PackageLoader, select_autoescape

from . import plots
from .store import connect_readonly
from .scores import TOLERANCE, effective_length, extrapolation_score


def _env() -> Environment:
    env = Environment(loader=PackageLoader("suite", "templates"), autoescape=select_autoescape(["html"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = lambda v, d=3: "n/a" if v is None else f"{v:.{d}f}"
    env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, sort_keys=True)
    return env


def _dicts(con, sql: str, params=()) -> list[dict]:
    cur = con.execute(sql, params)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


def _scale_boards(rows: list[dict], title, value_key: str, lower_is_better: bool) -> list[dict]:
    """Group rows of a per-scale view into boards: one per (size, task, metric), a row per
    encoding with the value at each scale, the extrapolation score and the effective length."""
    boards: dict[tuple, dict] = {}
    for r in rows:
        key = (r["size"], r["task"], r.get("metric", "bpb"))
        board = boards.setdefault(key, {"title": title(r), "size": r["size"], "task": r["task"], "metric": key[2],
                                        "lower_is_better": lower_is_better, "scales": [], "rows": {}})
        if r["scale"] not in board["scales"]:
            board["scales"].append(r["scale"])
        entry = board["rows"].setdefault(r["encoding"], {"encoding": r["encoding"], "display_name": r["display_name"],
                                                         "family": r.get("family"), "trained_as": r.get("trained_as"),
                                                         "value": {}, "stderr": {},
                                                         "ratio": {}, "eval_len": {}, "n_seeds": r["n_seeds"]})
        applicable = not r["not_applicable"]
        entry["value"][r["scale"]] = r[value_key] if applicable else None
        entry["stderr"][r["scale"]] = r["stderr"] if applicable else None
        entry["ratio"][r["scale"]] = r.get("ratio") if applicable else None
        entry["eval_len"][r["scale"]] = r["eval_len"]
    out = []
    for board in boards.values():
        board["scales"].sort()
        for entry in board["rows"].values():
            entry["extrapolation_score"] = extrapolation_score(entry["value"], lower_is_better)
            entry["effective_length"] = effective_length(entry["value"], TOLERANCE, lower_is_better)
        first = board["scales"][0]
        sign = 1 if lower_is_better else -1
        board["rows"] = sorted(board["rows"].values(),
                               key=lambda e: (e["value"].get(first) is None, sign * (e["value"].get(first) or 0)))
        out.append(board)
    return out


def leaderboard_rows(con) -> list[dict]:
    """Language modelling boards: bpb at each scale, ratios, extrapolation score, effective length."""
    rows = _dicts(con, "SELECT * FROM lm_scale ORDER BY size, task, encoding, scale")
    return _scale_boards(rows, lambda r: f"Language modelling: {r['task']}, size {r['size']}", "bpb", lower_is_better=True)


def task_boards(con) -> list[dict]:
    """Synthetic-task boards (through lm-eval): accuracy at each scale."""
    rows = _dicts(con, "SELECT * FROM task_scale ORDER BY size, task, metric, encoding, scale")
    return _scale_boards(rows, lambda r: f"Task {r['task']} ({r['metric']}), size {r['size']}", "value", lower_is_better=False)


def glue_boards(con) -> list[dict]:
    """GLUE-style boards: a row per encoding, each task's score and the macro average."""
    rows = _dicts(con, "SELECT * FROM glue_scores WHERE metric IN ('score', 'glue_score') ORDER BY size, encoding, task")
    boards: dict[str, dict] = {}
    for r in rows:
        board = boards.setdefault(r["size"], {"title": f"GLUE-style scores, size {r['size']}", "size": r["size"],
                                              "tasks": [], "rows": {}})
        entry = board["rows"].setdefault(r["encoding"], {"encoding": r["encoding"], "display_name": r["display_name"],
                                                         "scores": {}, "glue_score": None, "source": r["source"]})
        if r["task"] == "glue":
            entry["glue_score"] = r["value"]
        else:
            name = r["task"].split("/", 1)[1]
            entry["scores"][name] = r["value"]
            if name not in board["tasks"]:
                board["tasks"].append(name)
    for board in boards.values():
        board["rows"] = sorted(board["rows"].values(), key=lambda e: -(e["glue_score"] or -1))
    return list(boards.values())


def attach_glue(lm_boards: list[dict], glue: list[dict]) -> None:
    """Put each encoding's GLUE-style score beside its extrapolation figures (same size)."""
    by_size = {b["size"]: {e["encoding"]: e["glue_score"] for e in b["rows"]} for b in glue}
    for board in lm_boards:
        board["has_glue"] = board["size"] in by_size
        for row in board["rows"]:
            row["glue_score"] = by_size.get(board["size"], {}).get(row["encoding"])


def no_free_lunch(lm_boards: list[dict], glue: list[dict]) -> str | None:
    """Scatter of LM extrapolation score against GLUE-style score, one point per encoding."""
    points = {}
    for board in glue:
        lm = next((b for b in lm_boards if b["size"] == board["size"]), None)
        if lm is None:
            continue
        extrapolation = {e["encoding"]: e for e in lm["rows"]}
        for e in board["rows"]:
            x = extrapolation.get(e["encoding"], {}).get("extrapolation_score")
            if x is not None and e["glue_score"] is not None:
                points[f"{e['display_name']} ({board['size']})"] = (x, e["glue_score"])
    return plots.scatter(points, "LM extrapolation score (higher: less degradation)", "GLUE-style score",
                         "No free lunch: extrapolation vs short tasks") if points else None


def _encoding_pages(con) -> list[dict]:
    """One page per encoding as evaluated: its spec, the checkpoints it was evaluated on, plots."""
    evals = _dicts(con, """
        SELECT encoding, any_value(display_name) AS display_name, any_value(family) AS family,
               any_value(paper) AS paper, any_value(spec) AS spec, any_value(params) AS params,
               any_value(trained_as) AS trained_as, any_value(scale_behaviour) AS scale_behaviour,
               any_value(max_length) AS max_length, list(DISTINCT run_id) AS run_ids
        FROM evaluations WHERE NOT checkpoint_level GROUP BY encoding ORDER BY encoding""")
    runs = {r["run_id"]: r for r in _dicts(con, "SELECT * FROM runs ORDER BY size, task, seed")}
    pages = []
    for e in evals:
        spec = json.loads(e["spec"])
        pages.append({"name": e["encoding"], "display_name": e["display_name"], "family": e["family"],
                      "paper": e["paper"], "description": spec.get("description", ""), "impl": spec.get("impl"),
                      "params": json.loads(e["params"]), "conformance": spec.get("conformance"),
                      "trained_as": e["trained_as"] if e["trained_as"] != e["encoding"] else None,
                      "scale_behaviour": e["scale_behaviour"], "max_length": e["max_length"],
                      "runs": [runs[i] for i in sorted(e["run_ids"]) if i in runs],
                      "plots": _encoding_plots(con, e["encoding"])})
    return pages


def _encoding_plots(con, encoding: str) -> list[str]:
    """Loss-vs-position at every scale and bpb-vs-scale, one pair per (size, task)."""
    curves = _dicts(con, """
        SELECT e.size, c.task, c.scale, any_value(r.run) AS run, (c.pos_start + c.pos_end) / 2.0 AS pos, avg(c.value) AS bits
        FROM curves c JOIN evaluations e USING (eval_id) JOIN runs r ON r.run_id = e.run_id
        WHERE e.encoding = ? AND e.status = 'done'
        GROUP BY e.size, c.task, c.scale, c.pos_start, c.pos_end ORDER BY e.size, c.task, c.scale, pos""", (encoding,))
    groups: dict[tuple, dict] = defaultdict(lambda: defaultdict(list))
    train_len = {}
    for c in curves:
        groups[(c["size"], c["task"])][f"{c['scale']}x"].append((c["pos"], c["bits"]))
        train_len[(c["size"], c["task"])] = json.loads(c["run"])["train"]["seq_len"]
    svgs = []
    for key, series in groups.items():
        svgs.append(plots.loss_vs_position(dict(series), train_len[key], f"loss vs position ({key[0]}, {key[1]})"))
    scale_rows = _dicts(con, "SELECT size, task, scale, bpb FROM lm_scale WHERE encoding = ? AND NOT not_applicable ORDER BY scale",
                        (encoding,))
    by_group: dict[str, list] = defaultdict(list)
    for r in scale_rows:
        by_group[f"{r['size']}/{r['task']}"].append((r["scale"], r["bpb"]))
    if by_group:
        svgs.append(plots.metric_vs_scale(dict(by_group), "bits per byte", "bpb vs eval scale"))
    task_rows = _dicts(con, """SELECT size, task, scale, value FROM task_scale
                               WHERE encoding = ? AND metric = 'acc' AND NOT not_applicable ORDER BY scale""", (encoding,))
    by_task: dict[str, list] = defaultdict(list)
    for r in task_rows:
        by_task[f"{r['task']} ({r['size']})"].append((r["scale"], r["value"]))
    if by_task:
        svgs.append(plots.metric_vs_scale(dict(by_task), "exact-match accuracy", "task accuracy vs eval scale"))
    return svgs


def _run_pages(con) -> list[dict]:
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
        r["run"] = json.loads(r["run"])
        r["versions"] = json.loads(r["versions"])
        r["metrics"] = metrics[r["run_id"]]
        r["failed_evaluations"] = failed[r["run_id"]]
        r["evaluated_as"] = sorted({m["evaluated_as"] for m in r["metrics"]})
    return runs


def _write_downloads(con, out: Path) -> list[str]:
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    names = []
    for table in ("runs", "evaluations", "metrics", "curves"):
        for fmt, opts in (("csv", "(HEADER, DELIMITER ',')"), ("parquet", "(FORMAT PARQUET)")):
            target = data / f"{table}.{fmt}"
            con.execute(f"COPY {table} TO '{target}' {opts}")
            names.append(f"data/{table}.{fmt}")
    rows = _dicts(con, "SELECT * FROM lm_scale ORDER BY encoding, size, task, scale")
    (data / "leaderboard.json").write_text(json.dumps(rows, indent=1, default=str))
    names.append("data/leaderboard.json")
    return names


def render(database: Path, out: Path) -> Path:
    """Render the whole site into ``out`` (replaced atomically enough: built beside, then swapped)."""
    with connect_readonly(database) as con:
        return _render(con, out)


def _render(con: duckdb.DuckDBPyConnection, out: Path) -> Path:
    env = _env()
    staging = out.with_name(out.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "encodings").mkdir(parents=True)
    (staging / "runs").mkdir()
    meta = {m["metric"]: m for m in _dicts(con, "SELECT * FROM metric_meta")}
    boards = leaderboard_rows(con)
    tasks = task_boards(con)
    glue = glue_boards(con)
    attach_glue(boards, glue)
    encodings = _encoding_pages(con)
    runs = _run_pages(con)
    coverage = _dicts(con, "SELECT encoding, size, task, seed, status, scale, scale_status FROM coverage ORDER BY encoding, scale")
    downloads = _write_downloads(con, staging)
    common = {"meta": meta, "n_runs": len(runs)}
    (staging / "index.html").write_text(env.get_template("index.html").render(
        boards=boards, task_boards=tasks, glue_boards=glue, scatter=no_free_lunch(boards, glue), tolerance=TOLERANCE,
        coverage=_coverage_matrix(coverage), downloads=downloads, encodings=encodings, root="", **common))
    for page in encodings:
        (staging / "encodings" / f"{page['name']}.html").write_text(
            env.get_template("encoding.html").render(enc=page, root="../", **common))
    for run in runs:
        (staging / "runs" / f"{run['run_id']}.html").write_text(env.get_template("run.html").render(run=run, root="../", **common))
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    return out / "index.html"


def _coverage_matrix(rows: list[dict]) -> dict:
    """{'scales': [...], 'rows': [{'label', 'status', 'cells': {scale: status}}]}"""
    scales = sorted({r["scale"] for r in rows if r["scale"] is not None})
    matrix: dict[str, dict] = {}
    for r in rows:
        label = f"{r['encoding']} / {r['size']} / {r['task']} / seed {r['seed']}"
        entry = matrix.setdefault(label, {"label": label, "encoding": r["encoding"], "status": r["status"], "cells": {}})
        if r["scale"] is not None:
            entry["cells"][r["scale"]] = "done" if r["scale_status"] == "ok" else r["scale_status"]
    for entry in matrix.values():
        for s in scales:
            entry["cells"].setdefault(s, entry["status"] if entry["status"] != "done" else "pending")
    return {"scales": scales, "rows": list(matrix.values())}
