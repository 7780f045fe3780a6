"""The leaderboard's boards, pages and terminal view, from real DuckDB files built by ``ingest``
from records written with ``write_record`` (hand-chosen figures, so every number is known)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from suite.report import stats
from suite.report.shown import PLOT_TOP
from suite.cli.main import main
from suite.results.record_types import SCHEMA_VERSION, from_json
from suite.results.records import write_record
from suite.results.rows import lower_is_better
from suite.report.site import render
from suite.report.leaderboard import build
from suite.results.store import connect_readonly, ingest
from suite.report.terminal import render_text

MACHINE = "/home/someone/private"  # an absolute path of the machine that ran it: never on the site
SPECS = {
    "rope": {"display_name": "RoPE", "family": "rotary", "params": {"base": 10000}},
    "yarn": {"display_name": "YaRN", "family": "rotary", "params": {"base": 10000, "scaling": "yarn", "beta_fast": 32}},
    "rope-llama3": {"display_name": "Llama 3 RoPE", "family": "rotary",
                    "params": {"base": 10000, "scaling": "llama3", "low_freq_factor": 1}},
    "alibi": {"display_name": "ALiBi", "family": "bias", "params": {}},
    "nope": {"display_name": "NoPE", "family": "none", "params": {}},
    "learned": {"display_name": "Learned", "family": "absolute", "params": {}},
    "sinusoidal-cape": {"display_name": "Sinusoidal + CAPE", "family": "absolute", "params": {"base": 10000},
                        "train_positions": {"impl": "cape", "params": {"max_global_shift": 1024.0}}},
}


def spec(name: str) -> dict:
    s = SPECS[name]
    return {"name": name, "display_name": s["display_name"], "family": s["family"], "impl": "rotary",
            "paper": f"{name} paper", "description": f"{name} description", "params": s["params"],
            "train_positions": s.get("train_positions")}


class Results:
    """Writes run and evaluation records into a temporary project's results/ the way the runner does."""

    def __init__(self, root: Path):
        self.root = root
        self.runs, self.evals = root / "results" / "runs", root / "results" / "evals"
        self.count = 0

    def run(self, encoding: str, seed: int, task: str = "lm", size: str = "tiny", seq_len: int = 32,
            tokens_per_s: float = 1000.0, n_params: int = 100_000, steps: int = 20,
            finished_at: str = "2026-11-20T10:00:00+00:00") -> dict:
        self.count += 1
        run_id = f"{self.count:016x}"  # an id as the planner makes them (16 hex digits)
        record = {
            "schema_version": SCHEMA_VERSION, "kind": "training_run", "run_id": run_id,
            "run": {"encoding": spec(encoding), "encoding_source": f"{MACHINE}/posbench/encodings/{encoding}.yaml",
                    "size": {"name": size, "d_model": 64, "n_layers": 2, "n_heads": 4, "d_ff": 256},
                    "task": {"name": task, "kind": "lm", "corpus": {"kind": "folder", "path": f"{MACHINE}/corpus"}},
                    "seed": seed, "train": {"seq_len": seq_len, "steps": steps, "batch_size": 4, "lr": 0.003},
                    "data_fingerprint": "fp"},
            "content": {"encoding": {"params": SPECS[encoding]["params"]}}, "encoding": encoding,
            "display_name": SPECS[encoding]["display_name"], "family": SPECS[encoding]["family"], "size": size,
            "task": task, "seed": seed, "status": "done", "reason": None, "checkpoint": f"results/checkpoints/{run_id}.ckpt",
            "provenance": {"git_commit": "0123456789abcdef", "versions": {"python": "3.11"}, "corpus": f"{MACHINE}/corpus (3 files)",
                           "corpus_fingerprint": "fp", "n_params": n_params, "train_tokens_per_s": tokens_per_s,
                           "peak_memory_mb": 500.0, "train_wall_s": 2.0, "wall_s": 3.0,
                           "finished_at": finished_at, "final_train_loss": 3.0},
        }
        write_record(from_json(record), self.runs)
        return record

    def evaluate(self, run: dict, metrics: list[dict], encoding: str | None = None, scale: int | None = 1,
                 evaluator: str = "extrapolation", settings: dict | None = None) -> dict:
        self.count += 1
        encoding = encoding or run["encoding"]
        record = {
            "schema_version": SCHEMA_VERSION, "kind": "evaluation", "eval_id": f"{self.count:016x}",
            "run_id": run["run_id"], "evaluation": {"encoding": spec(encoding)}, "evaluator": evaluator,
            "settings": settings if settings is not None else {"battery": "offline"} if evaluator == "glue" else {},
            "scale": scale, "encoding": encoding,
            "content": {"encoding": {"params": SPECS[encoding]["params"]}},
            "display_name": SPECS[encoding]["display_name"], "family": SPECS[encoding]["family"],
            "paper": f"{encoding} paper", "trained_as": run["encoding"], "checkpoint_level": evaluator == "glue",
            "size": run["size"], "task": run["task"], "seed": run["seed"], "status": "done", "reason": None,
            "metrics": metrics, "curves": [], "scale_behaviour": "extrapolate", "max_length": None,
            "provenance": {"wall_s": 1.0, "finished_at": "2026-11-21T10:00:00+00:00"},
        }
        write_record(from_json(record), self.evals)
        return record

    def bpb(self, run: dict, values: dict[int, float | None], encoding: str | None = None) -> None:
        """One extrapolation evaluation per scale; None: not applicable there."""
        for scale, value in values.items():
            row = {"task": run["task"], "metric": "bpb", "value": value, "n": 1000, "scale": scale,
                   "eval_len": 32 * scale, "stderr": 0.01, "window_policy": "non-overlapping windows of s x L",
                   "source": None, "chance": None, "status": "ok" if value is not None else "not_applicable"}
            self.evaluate(run, [row], encoding, scale)

    def acc(self, run: dict, metric: str, values: dict[int, float], n: int = 100, chance: float | None = 0.5) -> None:
        for scale, value in values.items():
            row = {"task": run["task"], "metric": metric, "value": value, "n": n, "scale": scale,
                   "eval_len": 32 * scale, "stderr": None, "window_policy": "loglikelihood of the answer",
                   "source": "lm-eval", "chance": chance, "status": "ok"}
            self.evaluate(run, [row], scale=scale, evaluator="lmeval_task")

    def glue(self, run: dict, order: float, overall: float) -> None:
        rows = [{"task": "glue/order", "metric": m, "value": order, "n": 50, "scale": None, "eval_len": None,
                 "stderr": None, "window_policy": None, "source": "offline battery", "chance": 0.5, "status": "ok"}
                for m in ("accuracy", "score")]
        rows.append({"task": "glue", "metric": "glue_score", "value": overall, "n": 1, "scale": None, "eval_len": None,
                     "stderr": None, "window_policy": None, "source": "offline battery", "chance": 0.5, "status": "ok"})
        self.evaluate(run, rows, scale=None, evaluator="glue")

    def database(self) -> Path:
        db = self.root / "results" / "posbench.duckdb"
        report = ingest(self.runs, self.evals, db)
        assert not report.problems
        return db


BPB = {  # encoding -> per seed -> bpb at 1x, 2x, 4x: alibi clearly best, rope and yarn tied, learned n/a beyond 1x
    "alibi": {0: (1.00, 1.01, 1.02), 1: (1.01, 1.02, 1.02), 2: (1.02, 1.02, 1.03)},
    "rope": {0: (2.00, 2.10, 2.30), 1: (2.02, 2.12, 2.31), 2: (2.01, 2.11, 2.33)},
    "yarn": {0: (2.00, 2.11, 2.29), 1: (2.02, 2.11, 2.32), 2: (2.01, 2.12, 2.32)},
    "learned": {0: (1.50, None, None), 1: (1.51, None, None), 2: (1.52, None, None)},
}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """Three seeds of a language-modelling grid (with a training-free variant, a not-applicable
    encoding and GLUE-style scores), a one-seed task at chance and a one-seed task above it."""
    root = tmp_path_factory.mktemp("site")
    results = Results(root)
    runs = {}
    for enc in ("alibi", "rope", "learned"):
        for seed in (0, 1, 2):
            run = runs[(enc, seed)] = results.run(enc, seed, tokens_per_s=1000.0 + seed)
            results.bpb(run, dict(zip((1, 2, 4), BPB[enc][seed])))
            results.glue(run, order=0.9 if enc == "alibi" else 0.6, overall=0.9 if enc == "alibi" else 0.6 + 0.01 * seed)
            if enc == "rope":
                results.bpb(run, dict(zip((1, 2, 4), BPB["yarn"][seed])), encoding="yarn")
                results.bpb(run, {1: 2.5, 2: 2.6, 4: 2.7}, encoding="rope-llama3")
    for enc in ("alibi", "nope"):  # one seed, at chance: flip-flop-like
        results.acc(results.run(enc, 0, task="flip", seq_len=48), "acc", {1: 0.5, 2: 0.48, 4: 0.52})
    for enc, k in (("alibi", 90), ("nope", 40)):  # one seed, well above chance; a depth decile without 4x examples
        run = results.run(enc, 0, task="recall", seq_len=48)
        results.acc(run, "acc", {1: k / 100, 2: k / 200, 4: k / 400})
        results.acc(run, "acc_depth3", {1: 1.0, 2: 0.5} if enc == "alibi" else {1: 0.0, 2: 0.0, 4: 0.0}, n=4)
    db = results.database()
    render(db, root / "site")
    return root


def build_from(root: Path):
    with connect_readonly(root / "results" / "posbench.duckdb") as con:
        return build(con)


def board(root: Path, board_id: str):
    with connect_readonly(root / "results" / "posbench.duckdb") as con:
        return build(con).find(board_id)


def index(root: Path) -> str:
    return (root / "site" / "index.html").read_text()


def board_html(root: Path, board_id: str) -> str:
    """A board's own page (site/boards/<id>.html): its table and its plot."""
    return (root / "site" / "boards" / f"{board_id}.html").read_text()


def method(root: Path) -> str:
    return (root / "site" / "method.html").read_text()


def section(html: str, board_id: str) -> str:
    start = html.index(f'<section class="board" id="{board_id}"')
    return html[start: html.index("</section>", start)]


def test_cells_are_means_over_seeds_with_t_intervals(project):
    """With the text sampling of their records' window error (0.01 each, the fixture's): the
    same text at every seed, so its variance is added whole (suite.report.stats)."""
    lm = board(project, "lm-tiny-lm")
    alibi = next(e for e in lm.entries if e.encoding == "alibi")
    window = {seed: 0.01 ** 2 for seed in range(3)}
    expected = stats.seed_interval([1.00, 1.01, 1.02], text=stats.text_variance(window, None, [0, 1, 2]))
    assert expected.half_width >= stats.seed_interval([1.00, 1.01, 1.02]).half_width  # never narrower
    assert alibi.cells["s1"].value == pytest.approx(1.01)
    assert (alibi.cells["s1"].interval.lo, alibi.cells["s1"].interval.hi) == pytest.approx((expected.lo, expected.hi))
    per_seed = [sum(v) / 3 for v in BPB["alibi"].values()]  # overall score: per seed the mean over scales
    assert alibi.cells["score"].value == pytest.approx(sum(per_seed) / 3)
    # the scales read the same bytes: their errors fully correlated, the mean's sd is the mean sd
    score_text = stats.text_variance(window, None, [0, 1, 2])
    assert alibi.cells["score"].interval.hi == pytest.approx(stats.seed_interval(per_seed, text=score_text).hi)
    assert lm.seeds == [0, 1, 2] and stats.METHOD in lm.method
    html = section(board_html(project, "lm-tiny-lm"), "lm-tiny-lm")
    assert f"\u00b1{expected.half_width:.3f}" in html  # the interval reaches the page


def test_rank_intervals_span_what_paired_tests_cannot_separate_and_na_ranks_last(project):
    lm = board(project, "lm-tiny-lm")
    ranks = {e.encoding: (e.rank, e.rank_hi) for e in lm.entries}
    # alibi beats all; rope and yarn cannot be told apart: each could be 2nd or 3rd; learned has
    # no 2x or 4x: no overall score, no rank
    assert ranks["alibi"] == (1, 1) and ranks["rope"] == ranks["yarn"] == (2, 3) and ranks["learned"] == (None, None)
    assert ranks["rope-llama3"] == (4, 4)  # significantly worse than alibi, rope and yarn
    assert {e.encoding: e.cells["rank"].text for e in lm.entries if e.rank} == {
        "alibi": "1", "rope": "2-3", "yarn": "2-3", "rope-llama3": "4"}
    # rows in the order of their means at 4x: yarn (2.310) before rope (2.313), learned (none) last
    assert [e.encoding for e in lm.entries] == ["alibi", "yarn", "rope", "rope-llama3", "learned"]
    learned = next(e for e in lm.entries if e.encoding == "learned")
    assert learned.cells["s2"].status == "not_applicable" and learned.cells["score"].value is None
    assert not any("overlap" in w for w in lm.warnings)  # alibi's interval is separated from the others
    html = section(board_html(project, "lm-tiny-lm"), "lm-tiny-lm")
    assert re.search(r'<td class="c-rank" data-value="2\.0003" title="simultaneous[^"]*">2-3</td>', html)


def test_training_free_variants_are_marked_and_share_their_checkpoint(project):
    lm = board(project, "lm-tiny-lm")
    assert {e.encoding: e.trained_as for e in lm.entries}["yarn"] == "rope"
    glue = board(project, "glue-tiny-lm")
    scores = {e.encoding: e.cells["glue_score"].value for e in glue.entries}
    assert "yarn" not in scores and scores["rope"] == pytest.approx(0.61)  # one row per checkpoint, not a tie of two
    assert next(e for e in glue.entries if e.encoding == "rope").shared_by == ["rope-llama3", "yarn"]
    lm_glue = {e.encoding: e.cells["glue"].value for e in lm.entries}
    assert lm_glue["yarn"] == lm_glue["rope"] == pytest.approx(0.61)  # beside the LM figures: its checkpoint's
    assert "&#8627; rope checkpoint" in section(board_html(project, "lm-tiny-lm"), "lm-tiny-lm")
    cost = board(project, "cost-tiny-lm")
    assert next(e for e in cost.entries if e.encoding == "rope").shared_by == ["rope-llama3", "yarn"]


def test_a_one_seed_accuracy_board_says_so_and_shows_wilson_intervals(project):
    recall = board(project, "task-tiny-recall-acc")
    assert recall.seeds == [0] and "one seed" in recall.method and "Wilson" in recall.method
    cell = next(e for e in recall.entries if e.encoding == "alibi").cells["s1"]
    expected = stats.wilson_interval(90, 100)
    assert (cell.interval.lo, cell.interval.hi) == pytest.approx((expected.lo, expected.hi))
    assert {e.encoding: e.rank for e in recall.entries} == {"alibi": 1, "nope": 1}  # one seed: every rank a tie
    html = section(board_html(project, "task-tiny-recall-acc"), "task-tiny-recall-acc")
    assert "One seed" in html and f"[{expected.lo:.3f}, {expected.hi:.3f}]" in html
    lm_html = section(board_html(project, "lm-tiny-lm"), "lm-tiny-lm")
    assert "one seed" not in lm_html.lower()


def test_a_board_at_chance_warns_and_ranks_nothing(project):
    flip = board(project, "task-tiny-flip-acc")
    assert flip.chance == 0.5
    assert any("sits at chance" in w for w in flip.warnings)
    assert all(e.rank is None for e in flip.entries)
    html = section(board_html(project, "task-tiny-flip-acc"), "task-tiny-flip-acc")
    assert "Every row sits at chance (0.5)" in html and "chance level" in html
    assert "Every row sits at chance" in render_text(project / "results" / "posbench.duckdb", "task-tiny-flip-acc")


def test_a_board_whose_intervals_all_overlap_says_so():
    intervals = [stats.seed_interval([1.0, 1.2, 1.1]), stats.seed_interval([1.05, 1.15, 1.1])]
    assert stats.all_overlap(intervals)  # the condition the warning uses


def test_overlap_warning_reaches_the_page(tmp_path):
    results = Results(tmp_path)
    for enc, noises in (("alibi", (0.0, 0.3, -0.2)), ("nope", (0.01, -0.25, 0.3))):
        for seed, noise in enumerate(noises):
            results.bpb(results.run(enc, seed), {1: 2.0 + noise, 2: 2.1 + noise})
    render(results.database(), tmp_path / "site")
    html = section(board_html(tmp_path, "lm-tiny-lm"), "lm-tiny-lm")
    assert "intervals of all rows overlap: this board does not separate" in html


def test_a_later_recipe_never_renames_a_board_and_is_listed_after_it(tmp_path):
    """Board ids are stable: the recipe that finished first keeps the plain id; a grid added
    later (a smoke run of 5 steps, here) gets its recipe in its ids, whatever it holds."""
    results = Results(tmp_path)
    for seed in (0, 1):
        results.bpb(results.run("rope", seed), {1: 2.0 + seed, 2: 2.1 + seed})
    database = results.database()
    with connect_readonly(database) as con:
        before = [b.id for b in build(con).all]
    assert before == ["lm-tiny-lm", "cost-tiny-lm"]
    smoke = results.run("alibi", 0, steps=5, finished_at="2026-11-25T10:00:00+00:00")  # later, and a smaller budget
    results.bpb(smoke, {1: 1.0, 2: 1.0})
    with connect_readonly(results.database()) as con:
        lb = build(con)
    assert [b.id for b in lb.all] == ["lm-tiny-lm", "lm-tiny-lm-l32-5x4", "cost-tiny-lm", "cost-tiny-lm-l32-5x4"]
    assert [e.encoding for e in lb.find("lm-tiny-lm").entries] == ["rope"]  # the smoke row did not join or displace it
    assert "(L = 32, 5 steps x 4)" in lb.find("lm-tiny-lm-l32-5x4").title


def test_overlapping_intervals_that_paired_tests_separate_are_a_note_not_a_warning(tmp_path):
    """Each seed's nope model is 0.05 worse than its alibi model, while seeds differ by 0.3: the
    unpaired intervals overlap, the paired differences do not."""
    results = Results(tmp_path)
    for enc, shift in (("alibi", 0.0), ("nope", 0.05)):
        for seed, noise in enumerate((0.0, 0.3, -0.2)):
            results.bpb(results.run(enc, seed), {1: 2.0 + noise, 2: 2.1 + shift + noise + 0.001 * seed * (enc == "nope")})
    render(results.database(), tmp_path / "site")
    html = section(board_html(tmp_path, "lm-tiny-lm"), "lm-tiny-lm")
    assert "does not separate" not in html
    assert "paired tests over shared seeds, which do separate rows" in html


def test_an_encoding_page_states_its_training_position_ids(tmp_path, project):
    """A spec with a training-time transform says so on its page; one without does not."""
    results = Results(tmp_path)
    results.bpb(results.run("sinusoidal-cape", 0), {1: 3.5, 2: 3.55})
    render(results.database(), tmp_path / "site")
    page = (tmp_path / "site" / "encodings" / "sinusoidal-cape.html").read_text()
    assert "Training position ids" in page and "cape" in page and "max_global_shift" in page
    assert "Training position ids" not in (project / "site" / "encodings" / "rope.html").read_text()


def test_a_depth_board_has_every_scale_of_its_task(project):
    depth = board(project, "breakdown-tiny-recall-acc_depth3")
    assert depth.scales == [1, 2, 4]  # alibi has no 4x example in this decile; nope has
    alibi = next(e for e in depth.entries if e.encoding == "alibi")
    assert alibi.cells["s4"].status == "missing"
    assert 'data-col="s4"' in section(board_html(project, "breakdown-tiny-recall-acc_depth3"), "breakdown-tiny-recall-acc_depth3")


def test_columns_sort_in_their_metrics_direction(project):
    for board_id, metric in (("lm-tiny-lm", "bpb"), ("task-tiny-recall-acc", "acc")):
        th = re.search(r'<th data-col="s1"[^>]*data-dir="(\w+)"', section(board_html(project, board_id), board_id)).group(1)
        assert th == ("asc" if lower_is_better(metric) else "desc")


def test_ids_are_unique_and_links_resolve(project):
    site = project / "site"
    pages = [*site.glob("*.html"), *site.glob("*/*.html")]
    assert {"index.html", "compare.html", "findings.html", "method.html", "coverage.html"} <= {p.name for p in pages}
    for page in pages:
        ids, links = collect(page.read_text())
        assert len(ids) == len(set(ids)), page
        for href in links:
            target, _, fragment = href.partition("#")
            if not target:
                assert fragment in ids, (page, href)
            elif "://" not in target:
                assert (page.parent / target).resolve().is_file(), (page, href)


def collect(html: str) -> tuple[list[str], list[str]]:
    ids, links = [], []

    class Parser(HTMLParser):
        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if "id" in attrs:
                ids.append(attrs["id"])
            for key in ("href", "src"):
                if attrs.get(key) and not attrs[key].startswith("data:"):
                    links.append(attrs[key])

    Parser().feed(html)
    return ids, links


def test_run_pages_show_policies_no_raw_none_and_no_machine_paths(project):
    pages = list((project / "site" / "runs").glob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text()
        assert MACHINE not in text and "Window policy: None" not in text
        assert not re.search(r">\s*None\s*<", text), page
    rope = next(p.read_text() for p in pages if "glue/order" in p.read_text() and "yarn" in p.read_text())
    assert "non-overlapping windows of s x L" in rope
    assert "encodings/rope.yaml" in rope and ".../corpus" in rope


def test_an_encoding_page_has_its_scores_and_ranks_on_every_board_and_its_papers_link(project):
    page = (project / "site" / "encodings" / "alibi.html").read_text()
    table = page[page.index('id="t-scores"'):]
    table = table[:table.index("</table>")]
    lb = build_from(project)
    mine = [b for b in lb.all if any(e.encoding == "alibi" for e in b.entries)]
    assert len(mine) >= 3
    apart = 0
    for b in mine:  # every board that has the row, linked, with the row's rank where the board's ranks separate rows
        assert f'href="../boards/{b.id}.html"' in table
        entry = next(e for e in b.entries if e.encoding == "alibi")
        if entry.cells.get("rank") and entry.cells["rank"].text:
            row = next(r for r in table.split("<tr>") if f'../boards/{b.id}.html"' in r)
            n = len(b.entries)
            separated = any(e.rank is not None and (e.rank > 1 or e.rank_hi < n) for e in b.entries)
            apart += separated
            assert (f">{entry.cells['rank'].text}<" in row) == separated, (b.id, row)
            assert ("none apart" in row) != separated
            assert (">yes" in row) == (separated and bool(b.headline) and entry.rank == 1)  # the headline names it
    assert apart >= 1
    assert 'href="https://arxiv.org/' in page  # the paper's link: its arXiv page or an arXiv title search


def test_each_encoding_page_lists_its_own_parameters(project):
    pages = project / "site" / "encodings"
    assert "beta_fast" in (pages / "yarn.html").read_text() and "low_freq_factor" not in (pages / "yarn.html").read_text()
    assert "low_freq_factor" in (pages / "rope-llama3.html").read_text()


def test_header_states_the_run(project):
    html = index(project)
    run = html[html.index('<dl class="run"'): html.index("</dl>")]
    assert "tiny" in run and "100,000 parameters" in run and "L = 32 bytes, 20 steps" in run
    assert "2,560 training tokens" in run and "0, 1, 2 (3 seeds)" in run and "0123456789abcdef" in run
    assert "2026-11-20 to 2026-11-21" in run


def test_the_glue_battery_is_documented(project):
    html = method(project)
    battery = html[html.index('id="battery-table"'):]
    battery = battery[: battery.index("</table>")]
    assert "SST-2" in battery and "0.50" in battery  # order mirrors SST-2; chance of a uniform guess


def test_compare_data_holds_every_entrys_seeds(project):
    html = (project / "site" / "compare.html").read_text()
    data = json.loads(re.search(r'<script type="application/json" id="compare-data">(.*?)</script>', html).group(1))
    lm = next(b for b in data["boards"] if b["id"] == "lm-tiny-lm")
    s1 = lm["columns"].index("bpb 1x")
    assert lm["values"]["alibi"][s1] == [[seed, v[0]] for seed, v in BPB["alibi"].items()]
    assert data["t"]["2"] == pytest.approx(stats.seed_interval([0.0, 1.0, 2.0]).half_width / (1 / 3 ** 0.5), rel=1e-5)
    assert re.search(r'class="series[^"]*" data-key="alibi"', html)


def test_the_terminal_shows_every_board_in_80_columns(project, capsys):
    assert main(["--root", str(project), "leaderboard", "--all"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    for board_id in ("lm-tiny-lm", "task-tiny-flip-acc", "task-tiny-recall-acc", "glue-tiny-lm", "cost-tiny-lm"):
        assert f"board {board_id}" in out
    assert "\u00b1" in out and "one seed" in out and "Every row sits at chance" in out


def test_the_terminal_picks_a_board_and_formats(project, capsys):
    assert main(["--root", str(project), "leaderboard", "--board", "lm-tiny-lm", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("board,encoding,trained_as,column,mean,lo,hi")
    assert any(line.startswith("lm-tiny-lm,yarn,rope,rank,2,2,3,\"simultaneous") for line in lines)  # rank 2-3
    assert main(["--root", str(project), "leaderboard", "--board", "task-tiny-recall-acc", "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "| encoding | rank |" in md and "one seed" in md
    assert main(["--root", str(project), "leaderboard", "--board", "lm-tiny"]) == 1
    assert "did you mean 'lm-tiny-lm'" in capsys.readouterr().err


def test_effective_length_uses_both_thresholds_and_states_them(project):
    """An accuracy board's effective length: within 10% of its own 1x mean (NoLiMa) and at
    or above the absolute bar (RULER); an entry below the bar at 1x reads '<1x'. The page
    states both thresholds."""
    recall = board(project, "task-tiny-recall-acc")
    eff = {e.encoding: e.cells["effective_length"].text for e in recall.entries}
    assert eff == {"alibi": "1x", "nope": "<1x"}  # alibi: 0.9 at 1x, 0.45 at 2x; nope: 0.4 at 1x
    column = recall.column("effective_length").description
    assert "10% (relative)" in column and "50% exact match (absolute" in column
    html = method(project)
    assert "85.6%" in html and "50% accuracy" in html


def test_extrapolation_boards_rank_at_the_longest_scale_and_say_so(project):
    """Ranks answer "which encoding extrapolates best": at the longest scale (4x here), not by a
    mean over scales that mixes in 1x."""
    lm = board(project, "lm-tiny-lm")
    assert lm.ranked_by == "s4" and "Ranked by bpb 4x; rows in the order of their means." in lm.notes
    assert "rank interval in bpb 4x" in lm.column("rank").description
    assert "Holm-corrected" in lm.column("rank").description


def test_each_ranked_board_has_a_headline_naming_its_best_entry(project, capsys):
    lm = board(project, "lm-tiny-lm")
    assert lm.headline == ("At 4x: ALiBi, ahead of every other entry (paired over seeds, Holm-corrected p < 0.05; "
                           "too few seeds to confirm). Its lead over YaRN: 1.287 bpb at 4x, 1.000 at 1x (78% of it "
                           "already there within the training length).")
    assert lm.headline_status == "too few seeds"  # three seeds: none to split into discovery and confirmation
    glue = board(project, "glue-tiny-lm")
    assert glue.headline.startswith("GLUE-style score: ALiBi, ahead of")
    assert board(project, "task-tiny-recall-acc").headline.endswith("with one seed no lead is significant.")
    assert board(project, "task-tiny-flip-acc").headline is None  # at chance: nothing to headline
    html = index(project)
    listed = html[html.index('id="boards"'):html.index('id="downloads"')]  # the index lists each board with its headline
    row = next(r for r in listed.split("<tr>") if 'href="boards/lm-tiny-lm.html"' in r)
    assert "ALiBi, ahead of every other entry" in row
    assert main(["--root", str(project), "leaderboard", "--board", "lm-tiny-lm"]) == 0
    assert "At 4x: ALiBi, ahead of every other entry" in capsys.readouterr().out


def test_effective_length_is_shown_only_where_it_tells_rows_apart(project):
    recall = board(project, "task-tiny-recall-acc")  # alibi 1x, nope <1x: shown
    assert "effective_length" in [c.key for c in recall.columns]
    flip = board(project, "task-tiny-flip-acc")  # both rows the same figures: the same effective length
    assert "effective_length" not in [c.key for c in flip.columns]
    assert any(n.startswith("Effective length (") and "does not tell these rows apart" in n for n in flip.notes)


def test_an_encoding_keeps_one_colour_on_every_page_and_a_plot_shows_its_top_rows(project):
    """Every swatch, line, point and legend item of an encoding has one colour on every page (one
    site-wide assignment, suite.report.plots.assign_styles); a board's plot shows its top rows at
    first and draws the rest hidden, for its legend to show."""
    colours: dict[str, set[str]] = {}
    encodings = {e.encoding for b in build_from(project).all for e in b.entries}
    for page in (project / "site").rglob("*.html"):
        html = page.read_text()
        for key, colour in re.findall(r'class="swatch" data-key="([^"]+)" style="background: ([^"]+)"', html):
            colours.setdefault(key, set()).add(colour)
        for key, group in re.findall(r'<g class="(?:series|legend-item)" data-key="([^"]+)"[^>]*>(.*?)</g>', html, re.S):
            if key in encodings:
                colours.setdefault(key, set()).update(re.findall(r'(?:stroke|fill)="(#[0-9a-f]{6}|hsl[^"]+)"', group))
    assert len(colours) >= 5 and {k: v for k, v in colours.items() if len(v) != 1} == {}
    lm = board(project, "lm-tiny-lm")
    html = board_html(project, "lm-tiny-lm")
    plot = re.findall(r"<svg.*?</svg>", html, re.S)[0]
    hidden = re.findall(r'<g class="series" data-key="([^"]+)" data-order="\d+" style="display:none">', plot)
    assert hidden == [e.encoding for e in lm.entries[PLOT_TOP:]]
    assert len(re.findall(r'<input type="checkbox" value="[^"]+" checked data-top>', html)) == min(PLOT_TOP,
                                                                                                   len(lm.entries))


def test_length_plots_share_the_board_axis_and_mark_chance(project):
    """An encoding page draws its row on the board's y range (ALiBi's flat line stays flat);
    a task plot draws the chance line; the compare view has a legend."""
    page = (project / "site" / "encodings" / "alibi.html").read_text()
    board_svg = board_html(project, "lm-tiny-lm")
    ticks = lambda svg: re.findall(r'text-anchor="end"[^>]*>([0-9.]+)</text>', svg)  # noqa: E731
    lm_plot = next(s for s in re.findall(r"<svg.*?</svg>", page, re.S) if "Language modelling" in s)
    board_ticks = ticks(re.findall(r"<svg.*?</svg>", board_svg, re.S)[0])
    assert len(board_ticks) >= 3 and ticks(lm_plot) == board_ticks  # alibi alone spans 1.01-1.02: its own axis would
    plot_after = lambda board_id: re.findall(r"<svg.*?</svg>", board_html(project, board_id), re.S)[0]  # noqa: E731
    assert 'class="chance"' in plot_after("task-tiny-recall-acc")  # chance 0.5
    assert 'class="chance"' not in plot_after("lm-tiny-lm")  # bits per byte: no chance level
    compare = (project / "site" / "compare.html").read_text()
    assert 'class="legend-item"' in compare


def test_the_terminal_answers_first_and_lists_the_boards_one_line_each(project, capsys):
    """Without --board or --all: the answers, then an index of the boards, no board's table."""
    assert main(["--root", str(project), "leaderboard"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Answers") and "Boards (" in out and "--all" in out
    assert "  lm-tiny-lm  (" in out and "board lm-tiny-lm" not in out  # listed, not printed
    assert max(len(line) for line in out.splitlines()) <= 80
