"""The pages of the site: the index (the overview, the headlines, a list of every board by
kind), one page per board (its table and plot, filtered together), the method and the coverage,
the compare view, the findings, one page per encoding and one per training run."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections import defaultdict
from pathlib import Path

import duckdb
from jinja2 import Environment, PackageLoader, select_autoescape
from scipy import stats as scipy_stats

from suite.report import links, plots
from suite.report import stats
from suite.report.findings import check_findings
from suite.report.extrapolation_figure import extrapolation_figure
from suite.report.overview import answer_text, overview
from suite.report.corpus_view import comparisons as corpus_comparisons
from suite.report.scale_view import QUESTION_SCALE, questions as scale_questions
from suite.report.run_pages import run_pages
from suite.report.sweeps import lr_sweeps, size_order
from suite.report.board_kinds import kind_of
from suite.report.scores import ABSOLUTE_ACCURACY, TOLERANCE
from suite.report.boards import SHARE, Board, Cell
from suite.report.downloads import write_tables
from suite.report.figures import _dicts, info_of
from suite.report.leaderboard import Leaderboard, build
from suite.report.shown import (by_prominence, column_priority, compare_leaders, first_shown, main_column,
                                separates)
from suite.report.summary import glue_battery, header
from suite.results.machine_paths import without_machine_paths


def _num(value, digits=3) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.0f}" if digits == 0 else f"{value:.{digits}f}"


def _blank(value) -> str:
    """A missing figure as a dash, never a raw None."""
    return "\u2014" if value is None else str(value)


def interval_text(interval: stats.Interval, digits: int = 3) -> str:
    """A t interval over seeds as +- its half-width; any other (Wilson: not symmetric) as [lo, hi]."""
    if interval.lo is None:
        return ""
    if interval.symmetric:
        return f"\u00b1{interval.half_width:.{digits}f}"
    return f"[{interval.lo:.{digits}f}, {interval.hi:.{digits}f}]"


def environment(pages: set[str] = frozenset(), unpublished: set[str] = frozenset()) -> Environment:
    env = Environment(loader=PackageLoader("suite.report", "templates"), autoescape=select_autoescape(["html"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _num
    env.filters["blank"] = _blank
    env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, sort_keys=True)
    env.filters["colour"] = plots.colour
    env.filters["dash"] = plots.dash
    env.globals["column_priority"] = column_priority
    env.filters["intcomma"] = lambda v: "n/a" if v is None else f"{v:,}"
    env.filters["ci"] = interval_text
    env.filters["sentence"] = lambda text: text[:1].upper() + text[1:]
    env.filters.update(links.FILTERS)  # every href to a page is built from a checked id or name
    env.globals["missing"] = Cell(status="missing")
    env.globals["pages"] = pages  # the encodings that have a page (a checkpoint's own encoding may not)
    env.globals["unpublished"] = unpublished  # entries with figures the published snapshot lacks (computed here)
    return env


def _embedded_json(value) -> str:
    """JSON safe inside a <script> element: no '<', '>' or '&' that could close it."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# -- plots -----------------------------------------------------------------------------------------------------


def _length_series(board: Board, entries, shown: set[str] | None = None) -> list[plots.Series]:
    series = []
    for e in entries:
        points = []
        for s in board.scales:
            c = e.cells[f"s{s}"]
            lo, hi = (c.interval.lo, c.interval.hi) if c.has_bounds else (None, None)
            points.append((board.eval_len.get(s, s * (board.train_len or 1)), c.value, lo, hi))
        series.append(plots.Series(e.encoding, e.display_name, points,
                                   hidden=shown is not None and e.encoding not in shown))
    return series


def overlay(board: Board, legend: bool = True, only: set[str] | None = None, shown: set[str] | None = None,
            fit_shown: bool = False, width: float = 560, height: float = 300) -> str:
    """Score against eval length (log2) of every entry (or those ``only`` names; ``shown``: the
    lines shown at first, the rest drawn hidden for the page's script), intervals as bands, the
    training length and the chance level marked; each encoding in its site-wide colour and dash
    (plots.assign_styles). The y range is the board's, so a row drawn alone sits where it sits
    among the others; ``fit_shown``: the range of the lines shown at first (a board's page, whose
    top rows one diverging row would flatten; a line shown later is cut at the plot's edge)."""
    every = _length_series(board, board.entries, shown)
    drawn = every if only is None else [s for s in every if s.key in only]
    ranged = [s for s in every if not s.hidden] if fit_shown else every
    info = info_of(board.metric)
    share = info is not None and info.unit == SHARE
    return plots.line_plot(drawn, title=board.title, xlabel="eval length (bytes, log2 axis)",
                           ylabel=info.display_name if info else board.metric, marker_x=board.train_len,
                           marker_label="training length", legend=legend, bounds=(0.0, 1.0) if share else None,
                           y_from=ranged, chance=board.chance, width=width, height=height)


def no_free_lunch(lb: Leaderboard, glue: Board, shown: set[str] | None = None) -> str | None:
    """One GLUE-style board's score against the LM extrapolation score of the same checkpoints (the
    language-modelling board of its size, task and recipe), with intervals: one recipe per plot.
    A row of the GLUE board is a checkpoint; its x is that checkpoint's own row on the LM board."""
    lm = next((b for b in lb.boards if kind_of(b).carries_checkpoint_columns and b.size == glue.size
               and b.task == glue.task and b.recipe == glue.recipe and not b.architecture), None)
    if lm is None:
        return None
    xs = {e.encoding: e.cells["extrapolation_score"] for e in lm.entries if "extrapolation_score" in e.cells}
    points = []
    for e in glue.entries:
        x, y = xs.get(e.encoding), e.cells["glue_score"]
        if x is None or x.value is None or y.value is None:
            continue
        points.append(plots.Point(e.encoding, e.display_name, x.value, y.value,
                                  (x.interval.lo, x.interval.hi) if x.has_bounds else None,
                                  (y.interval.lo, y.interval.hi) if y.has_bounds else None,
                                  hidden=shown is not None and e.encoding not in shown))
    if len(points) < 2:
        return None
    return plots.scatter_plot(points, title="No free lunch: extrapolation vs short tasks",
                              xlabel=f"LM extrapolation score on {lm.id} (higher: less lost beyond L)",
                              ylabel="GLUE-style score", legend=shown is None)


# -- pages -----------------------------------------------------------------------------------------------------


def encoding_pages(con, lb: Leaderboard) -> list[dict]:
    """One page per encoding as evaluated: its spec, the checkpoints it was evaluated on, plots."""
    evals = _dicts(con, """
        SELECT encoding, any_value(display_name) AS display_name, any_value(family) AS family,
               any_value(paper) AS paper, any_value(spec) AS spec, any_value(params) AS params,
               any_value(trained_as) AS trained_as, any_value(scale_behaviour) AS scale_behaviour,
               any_value(max_length) AS max_length, list(DISTINCT run_id) AS run_ids
        FROM evaluations WHERE NOT checkpoint_level GROUP BY encoding ORDER BY encoding""")
    curves = _curves(con)
    sweeps = lr_sweeps(con)
    sizes = {size: i for i, size in enumerate(size_order(lb.runs))}  # smallest first, as the scale view

    def in_size_order(rows: list[dict]) -> list[dict]:
        return sorted(rows, key=lambda r: (sizes.get(r["size"], len(sizes)), r["size"], r["task"], r["steps"] or 0,
                                           r["seq_len"] or 0, r["batch_size"] or 0, r["seed"], r["lr"]))
    pages = []
    for e in evals:
        spec = json.loads(e["spec"] or "{}")
        name = e["encoding"]
        svgs = [plots.line_plot(series, title=f"loss vs position ({size}, {task})", xlabel="position (bytes, log2 axis)",
                                ylabel="bits per byte", marker_x=train_len, marker_label="training length")
                for (enc, size, task), (series, train_len) in sorted(curves.items()) if enc == name]
        for board in lb.boards:
            if kind_of(board).overlaid and any(x.encoding == name for x in board.entries):
                svgs.append(overlay(board, only={name}))
        pages.append({"name": name, "display_name": e["display_name"], "family": e["family"], "paper": e["paper"],
                      "scores": own_scores(lb, name),
                      "description": spec.get("description", ""), "impl": spec.get("impl"),
                      "params": json.loads(e["params"] or "{}"), "conformance": spec.get("conformance"),
                      "train_positions": spec.get("train_positions"),
                      "trained_as": e["trained_as"] if e["trained_as"] != name else None,
                      "scale_behaviour": e["scale_behaviour"], "max_length": e["max_length"],
                      "runs": sorted((lb.runs[i] for i in e["run_ids"] if i in lb.runs),
                                     key=lambda r: (sizes.get(r["size"], len(sizes)), r["size"], r["task"],
                                                    r["recipe"].steps or 0, r["seed"])),
                      # a training-free variant was tuned as the encoding it evaluates the checkpoints of
                      "sweeps": in_size_order(sweeps.get(name) or sweeps.get(e["trained_as"] or name, [])),
                      "plots": [s for s in svgs if s], "colour": plots.colour(name)})
    return pages


def own_scores(lb: Leaderboard, name: str) -> list[dict]:
    """An encoding's row on every board that has it: the board's main figure, its interval and
    rank interval among how many rows (only where the board separates rows: :func:`separates`), and
    whether the board's headline names it (it could be first, on a board that separates rows)."""
    out = []
    for board in lb.all:
        entry = next((e for e in board.entries if e.encoding == name), None)
        key = main_column(board)
        if entry is None or key is None:
            continue
        cell, rank = entry.cells.get(key), entry.cells.get("rank")
        ranked = separates(board)
        out.append({"board": board, "column": board.column(key), "cell": cell or Cell(status="missing"),
                    "rank": rank.text if ranked and rank is not None and rank.text else None,
                    "rows": len(board.entries), "separates": ranked or rank is None,
                    # the headline names the rows whose rank interval starts at 1 (suite.report.headlines);
                    # a name's text inside the line would also match "NoPE" in "NoPE + Canon layers"
                    "named": bool(board.headline) and ranked and entry.rank == 1})
    return out


def _curves(con) -> dict[tuple, tuple[list, int]]:
    """(encoding, size, task) -> (one loss-vs-position series per scale, mean over seeds; the training length)."""
    rows = _dicts(con, """
        SELECT e.encoding, e.size, c.task, c.scale, (c.pos_start + c.pos_end) / 2.0 AS pos, avg(c.value) AS bits,
               any_value(coalesce(json_extract(r.run, '$.parent.train.seq_len'),  -- a child's scales are its parent's
                                 json_extract(r.run, '$.train.seq_len')))::INTEGER AS train_len
        FROM curves c JOIN evaluations e USING (eval_id) JOIN runs r ON r.run_id = e.run_id
        WHERE e.status = 'done' AND c.value IS NOT NULL
        GROUP BY e.encoding, e.size, c.task, c.scale, c.pos_start, c.pos_end
        ORDER BY e.encoding, e.size, c.task, c.scale, pos""")
    grouped: dict[tuple, dict[int, list]] = defaultdict(lambda: defaultdict(list))
    train_len = {}
    for r in rows:
        key = (r["encoding"], r["size"], r["task"])
        grouped[key][r["scale"]].append((r["pos"], r["bits"], None, None))
        train_len[key] = r["train_len"]
    return {key: ([plots.Series(f"{s}x", f"{s}x", pts, plots.scale_colour(i), "")
                   for i, (s, pts) in enumerate(sorted(by_scale.items()))], train_len[key])
            for key, by_scale in grouped.items()}


def coverage_matrix(con) -> dict:
    """{'scales': [...], 'rows': [{'label', 'status', 'cells': {scale: status}}]}"""
    rows = _dicts(con, "SELECT encoding, size, task, seed, status, scale, scale_status FROM coverage "
                       "ORDER BY encoding, size, task, seed, scale")
    scales = sorted({r["scale"] for r in rows if r["scale"] is not None})
    matrix: dict[str, dict] = {}
    for r in rows:
        label = f"{r['encoding']} / {r['size']} / {r['task']} / seed {r['seed']}"
        entry = matrix.setdefault(label, {"label": label, "encoding": r["encoding"], "status": r["status"], "cells": {}})
        if r["scale"] is not None:
            entry["cells"][r["scale"]] = "done" if r["scale_status"] == "ok" else r["scale_status"]
    for entry in matrix.values():
        for s in scales:  # no evaluation record at that scale: its grid did not ask for one, or it has not run
            entry["cells"].setdefault(s, entry["status"] if entry["status"] != "done" else "not_run")
    return {"scales": scales, "rows": list(matrix.values())}


def board_json(board: Board) -> dict:
    """A board as data: the downloads and the compare view read this."""
    return {"id": board.id, "kind": board.kind, "title": board.title, "size": board.size, "task": board.task,
            "metric": board.metric, "seeds": board.seeds, "method": board.method, "warnings": board.warnings,
            "lower_is_better": board.lower_is_better, "chance": board.chance,
            "columns": [{"key": c.key, "label": c.label, "lower_is_better": c.lower_is_better} for c in board.columns],
            "rows": [{"encoding": e.encoding, "display_name": e.display_name, "trained_as": e.trained_as,
                      "cells": {k: {"mean": c.value, "lo": c.interval.lo if c.interval else None,
                                    "hi": c.interval.hi if c.interval else None, "status": c.status}
                                for k, c in e.cells.items()}} for e in board.entries]}


def write_downloads(con, out: Path, lb: Leaderboard) -> list[str]:
    """The tables and the boards as files, without the machine's absolute paths (suite.report.downloads)."""
    data = out / "data"
    names = write_tables(con, data)
    (data / "leaderboard.json").write_text(json.dumps(without_machine_paths([board_json(b) for b in lb.all]), indent=1))
    names.append("data/leaderboard.json")
    return names


def compare_data(lb: Leaderboard) -> dict:
    """What the compare view's script reads: every entry's per-seed values on every board, and the
    Student-t quantiles that its paired intervals need (the interval of stats.paired_comparison;
    a difference is significant at p < 0.05 exactly when its 95% interval excludes 0)."""
    boards, most = [], 1
    for b in lb.boards:
        if not b.compared:
            continue
        values = {e.encoding: [sorted(e.per_seed.get(k, {}).items()) for k in b.compared] for e in b.entries}
        most = max([most] + [len(v) for vs in values.values() for v in vs])
        boards.append({"id": b.id, "title": b.title, "lower_is_better": b.lower_is_better,
                       "columns": [b.column(k).label for k in b.compared], "values": values,
                       "names": {e.encoding: e.display_name for e in b.entries}})
    quantiles = {df: round(float(scipy_stats.t.ppf(0.5 + stats.LEVEL / 2, df)), 6) for df in range(1, most)}
    return {"boards": boards, "t": quantiles}


def unpublished_entries(con, published: set[str] | None) -> set[str]:
    """The encodings with an evaluation that the published snapshot does not hold (a contributor's
    new rows beside the published ones); none when there is no snapshot to compare with."""
    if not published:
        return set()
    return {r["encoding"] for r in _dicts(con, "SELECT eval_id, encoding FROM evaluations") if r["eval_id"] not in published}


def render_site(con: duckdb.DuckDBPyConnection, out: Path, snapshot: dict | None = None,
                published: set[str] | None = None) -> Path:
    """``snapshot``: rendering the published snapshot itself (its SNAPSHOT.json, for the header);
    ``published``: the snapshot's evaluation ids, to mark the rows computed here beside it."""
    # built beside it in a folder of this process's own, so that two renders at once never share one
    staging = out.with_name(f".{out.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:  # a render that fails leaves no staging folder behind
        return _render_into(staging, con, out, snapshot, published)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _render_into(staging: Path, con: duckdb.DuckDBPyConnection, out: Path, snapshot: dict | None,
                 published: set[str] | None) -> Path:
    for folder in ("encodings", "runs", "boards"):
        (staging / folder).mkdir(parents=True)
    battery, chances = glue_battery(con)
    lb = build(con, chances)
    plots.assign_styles(by_prominence(lb))  # one colour and dash per encoding, on every page
    encodings = encoding_pages(con, lb)
    env = environment({page["name"] for page in encodings if links.encoding_page(page["name"])},
                      unpublished_entries(con, published))
    runs = run_pages(con)
    common = {"n_runs": len(runs), "head": header(con, lb.runs), "method": stats.METHOD, "snapshot": snapshot}
    downloads = write_downloads(con, staging, lb)

    def page(name: str, template: str, root: str = "", **values) -> None:
        (staging / name).write_text(env.get_template(template).render(root=root, page=template[:-5], **common,
                                                                      **values))

    ov = overview(lb.all, lb.runs)
    at_scale = scale_questions(lb.all, size_order(lb.runs))
    page("index.html", "index.html", lb=lb, sections=lb.sections(), ov=ov, downloads=downloads, at_scale=at_scale,
         gpu_sizes=sorted({b.size for b in lb.all if b.gpus}))
    page("method.html", "method.html", battery=battery, tolerance=TOLERANCE, absolute_accuracy=ABSOLUTE_ACCURACY)
    page("coverage.html", "coverage.html", coverage=coverage_matrix(con))
    # the same answers as the index's, from the same canonical boards (suite.report.overview)
    asked = [a for a in ov.answers if a.question.kind in QUESTION_SCALE]
    page("scale.html", "scale.html", questions=at_scale,
         answers=[answer_text(a) for a in asked], canonical_ids={a.board.id for a in asked if a.board},
         corpora=corpus_comparisons(lb.all, {a.board.id for a in ov.answers if a.board}))
    for board in lb.all:  # a page's file name is built from its checked id, name or run id; anything else has none
        if links.board_page(board.id):
            shown = first_shown(board)
            plot = (overlay(board, legend=False, shown=shown, fit_shown=True, width=760, height=380)
                    if kind_of(board).overlaid else "")
            page(links.board_page(board.id), "board.html", "../", b=board, plot=plot, shown=shown,
                 scatter=no_free_lunch(lb, board, shown) if board in lb.glue else None, families=board.families,
                 extrapolation=extrapolation_figure(board, shown))
    leaders = compare_leaders(lb, ov)
    compare = {b.id: overlay(b, shown=set(leaders)) for b in lb.boards if b.compared}
    all_encodings = {e.encoding: e.display_name for b in lb.boards if b.compared for e in b.entries}
    page("compare.html", "compare.html", lb=lb, plots=compare, encodings=sorted(all_encodings.items()),
         leaders=leaders, data=_embedded_json(compare_data(lb)))
    page("findings.html", "findings.html", checks=check_findings(lb.all))
    for enc in encodings:
        if links.encoding_page(enc["name"]):
            page(links.encoding_page(enc["name"]), "encoding.html", "../", enc=enc)
    for run in runs:
        if links.run_page(run["run_id"]):
            page(links.run_page(run["run_id"]), "run.html", "../", run=run)
    swap_in(staging, out)
    return out / "index.html"


def swap_in(staging: Path, out: Path, attempts: int = 20) -> None:
    """Replace ``out`` with ``staging`` by renames: the old site is renamed aside, then removed. Two
    renders that finish at once each retry until one of their sites is in place (both are whole)."""
    for _ in range(attempts):
        old = out.with_name(f".{out.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        try:
            os.rename(out, old)
        except FileNotFoundError:
            old = None
        try:
            os.rename(staging, out)
        except OSError:  # another render put its site there between our two renames: try again
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            continue
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return
    shutil.rmtree(staging, ignore_errors=True)
    raise OSError(f"{out}: could not put the rendered site in place after {attempts} attempts")
