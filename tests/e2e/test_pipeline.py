"""End to end, small and real: Lightning fits, evaluation, records, DuckDB, the site, the CLI."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import duckdb
import pytest
import torch
import torch.nn.functional as F

from suite.cli.main import main
from suite.data.corpus import load_corpus
from suite.evaluation.evaluators.extrapolation import evaluate_lm, evaluation_span
from suite.plan.grid import expand
from suite.specs import Project, load_grid
from suite.results.store import ingest
from suite.training.checkpoints import load_checkpoint
from suite.training.fit import fit

from tests.conftest import REPO, copy_specs, write_yaml


def runs_of(grid_path: Path, root: Path):
    return expand(load_grid(grid_path, Project(root))).runs


def records(root: Path, folder: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((root / "results" / folder).glob("*.json"))]


def test_fit_is_deterministic_and_the_checkpoint_reloads(tiny_grid, project_root, tmp_path):
    run = runs_of(tiny_grid(encodings=["rope"]), project_root)[0]
    a = fit(run, tmp_path / "a", progress_bar=False)
    b = fit(run, tmp_path / "b", progress_bar=False)
    assert a.stats["final_train_loss"] == b.stats["final_train_loss"]
    for pa, pb in zip(a.module.parameters(), b.module.parameters()):
        assert torch.equal(pa, pb)
    assert a.stats["final_train_loss"] < math.log(256)  # it learned something from uniform
    reloaded = load_checkpoint(a.checkpoint)
    idx = torch.randint(0, 256, (2, 40))
    torch.testing.assert_close(reloaded.model(idx), a.module.model.eval()(idx))
    assert reloaded.run.run_id == run.run_id


def test_every_test_byte_is_scored_once_and_bpb_matches_a_direct_computation(tiny_grid, project_root, tmp_path):
    run = runs_of(tiny_grid(encodings=["alibi"]), project_root)[0]
    model = fit(run, tmp_path, progress_bar=False).module.model.eval()
    test = load_corpus(run.task.corpus)["test"]
    metrics, curves = evaluate_lm(model, test, 32, [1, 2, 4], tokens=896, batch_size=3, curve_buckets=4)
    metrics, curves = [m.as_dict() for m in metrics], [c.as_dict() for c in curves]
    span = evaluation_span(test, 896, 128)
    assert len(span) == 7 * 128 + 1  # 896 // 128 windows of the longest length; the same bytes at every scale
    for m in metrics:
        assert m["n"] == 7 * 128 and m["status"] == "ok" and m["eval_len"] == 32 * m["scale"]
        # direct: score each window on its own, one token at a time from the log-softmax
        windows = span[:-1].view(-1, m["eval_len"])
        targets = span[1:].view(-1, m["eval_len"])
        with torch.no_grad():
            logp = F.log_softmax(model(windows), dim=-1)
        direct = -logp.gather(-1, targets[..., None]).mean().item() / math.log(2)
        assert m["value"] == pytest.approx(direct, rel=1e-5)
    assert {c["scale"] for c in curves} == {1, 2, 4}
    longest = [c for c in curves if c["scale"] == 4]
    assert [c["pos_start"] for c in longest] == [0, 32, 64, 96] and sum(c["n"] for c in longest) == 7 * 128


def test_an_encoding_that_cannot_reach_a_length_is_not_applicable_there(tiny_grid, project_root):
    write_yaml(project_root / "encodings" / "bounded.yaml",
               {"name": "bounded", "display_name": "Bounded", "family": "absolute", "paper": "test",
                "impl": str(REPO / "tests" / "plugins" / "bounded.py") + ":BoundedSinusoidal"})
    grid = tiny_grid(name="bounded-grid", encodings=["bounded"])
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    status = {m["scale"]: (m["status"], m["value"]) for r in records(project_root, "evals") for m in r["metrics"]}
    assert status[1][0] == "ok" and status[1][1] > 0
    assert status[2] == ("not_applicable", None) and status[4] == ("not_applicable", None)


def test_a_failing_run_is_recorded_and_the_grid_goes_on(tiny_grid, project_root, capsys):
    write_yaml(project_root / "encodings" / "exploding.yaml",
               {"name": "exploding", "display_name": "Exploding", "family": "absolute", "paper": "test",
                "impl": "tests.plugins.bounded:Exploding"})
    grid = tiny_grid(name="failing", encodings=["exploding", "nope"])
    assert main(["--root", str(project_root), "run", str(grid), "--quiet"]) == 1
    runs = records(project_root, "runs")
    assert sorted(r["status"] for r in runs) == ["done", "failed"]
    failed = next(r for r in runs if r["status"] == "failed")
    assert "this encoding always fails" in failed["reason"]
    assert "1 piece(s) failed" in capsys.readouterr().err
    assert {r["encoding"] for r in records(project_root, "evals")} == {"nope"}  # the failed run's evaluations wait
    site = (project_root / "site" / "_build" / "runs" / f"{failed['run_id']}.html").read_text()
    assert "this encoding always fails" in site


@pytest.fixture(scope="module")
def finished_grid(tmp_path_factory, text_folder):
    """A real `posbench run` of a two-encoding grid, shared by the tests below."""
    root = copy_specs(tmp_path_factory.mktemp("e2e"), text_folder)
    enc = (root / "encodings" / "alibi.yaml")
    enc.write_text(enc.read_text().replace("display_name: ALiBi", "display_name: \"ALiBi <script>alert(1)</script>\""))
    grid = write_yaml(root / "grids" / "e2e.yaml", {
        "name": "e2e", "encodings": ["nope", "alibi"], "sizes": ["tiny"], "tasks": ["local"], "scales": [1, 2, 4],
        "train": {"steps": 20, "batch_size": 4, "seq_len": 32, "warmup_steps": 2},
        "eval": {"tokens": 2048, "batch_size": 4, "curve_buckets": 8}})
    assert main(["--root", str(root), "run", str(grid), "--quiet"]) == 0
    return root, grid


def test_run_leaves_records_database_and_site(finished_grid):
    root, _ = finished_grid
    assert len(records(root, "runs")) == 2
    assert len(records(root, "evals")) == 2 * 3 * 2  # runs x scales x (extrapolation, lm_rolling)
    with duckdb.connect(str(root / "results" / "posbench.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM runs WHERE status = 'done'").fetchone() == (2,)
        rows = con.execute("SELECT encoding, scale, eval_len, ratio FROM lm_scale ORDER BY encoding, scale").fetchall()
        assert [(r[0], r[1], r[2]) for r in rows] == [(e, s, 32 * s) for e in ("alibi", "nope") for s in (1, 2, 4)]
        assert all(r[3] == pytest.approx(1.0) for r in rows if r[1] == 1)
        assert con.execute("SELECT count(*) FROM curves").fetchone()[0] == 2 * 3 * 8
        # the same span through lm-eval's rolling log-likelihood gives the same figure
        pairs = con.execute("""SELECT d.value, l.value FROM metrics d JOIN metrics l USING (run_id, scale)
                               WHERE d.metric = 'bpb' AND l.metric = 'bpb_lmeval'""").fetchall()
        assert len(pairs) == 6 and all(lm == pytest.approx(direct, rel=1e-4) for direct, lm in pairs)
    index = (root / "site" / "_build" / "index.html").read_text()
    assert "encodings/nope.html" in index and "encodings/alibi.html" in index
    with duckdb.connect(str(root / "results" / "posbench.duckdb"), read_only=True) as con:
        (corpus,) = {r[0] for r in con.execute("SELECT corpus FROM runs").fetchall()}
    assert re.search(r"\(\d+ files, [\d,]+ bytes\)", corpus) and corpus in index  # the corpus and its size, in bytes
    assert "<svg" in (root / "site" / "_build" / "encodings" / "nope.html").read_text()


def test_spec_text_is_escaped_on_the_site(finished_grid):
    root, _ = finished_grid
    index = (root / "site" / "_build" / "index.html").read_text()
    assert "<script>alert(1)</script>" not in index
    assert "ALiBi &lt;script&gt;alert(1)&lt;/script&gt;" in index


def test_a_finished_grid_trains_nothing(finished_grid, capsys):
    root, grid = finished_grid
    results = root / "results"
    before = {p.name: p.stat().st_mtime_ns for p in results.glob("*/*.json")}
    assert main(["--root", str(root), "run", str(grid), "--quiet"]) == 0
    assert "0 run(s) with work to do, 0 evaluation(s) to run" in capsys.readouterr().out
    assert {p.name: p.stat().st_mtime_ns for p in results.glob("*/*.json")} == before
    assert main(["--root", str(root), "plan", str(grid)]) == 0
    out = capsys.readouterr().out
    assert "training runs: 2 done, 0 todo, 0 failed" in out and "evaluations: 12 done, 0 todo, 0 failed" in out


def test_ingest_is_idempotent(finished_grid, tmp_path):
    root, _ = finished_grid

    def snapshot(db):
        with duckdb.connect(str(db), read_only=True) as con:
            return {t: sorted(map(repr, con.execute(f"SELECT * FROM {t}").fetchall()))
                    for t in ("runs", "evaluations", "metrics", "curves")}

    db = tmp_path / "copy.duckdb"
    ingest(root / "results" / "runs", root / "results" / "evals", db)
    first = snapshot(db)
    ingest(root / "results" / "runs", root / "results" / "evals", db)
    assert snapshot(db) == first
    assert len(first["metrics"]) == 2 * 3 * 2  # runs x scales x (bpb, bpb_lmeval)


def test_leaderboard_prints_in_the_terminal(finished_grid, capsys):
    root, _ = finished_grid
    assert main(["--root", str(root), "leaderboard", "--all"]) == 0
    out = capsys.readouterr().out
    assert "NoPE" in out and "4x bpb" in out and "extrap. score" in out
    assert ("eff. length" in out) != ("Effective length (" in out)  # a column, or why it is left out


def test_eval_runs_lm_eval_tasks_on_a_trained_run_and_stores_them(finished_grid, capsys):
    root, _ = finished_grid
    run_id = sorted(p.stem for p in (root / "results" / "checkpoints").glob("*.ckpt"))[0]
    trained = {p.name: p.stat().st_mtime_ns for p in (root / "results" / "runs").glob("*.json")}
    assert main(["--root", str(root), "eval", run_id, "--tasks", "parity,flip_flop", "--scales", "1,2",
                 "--examples", "8", "--no-site"]) == 0
    evals = [r for r in records(root, "evals") if r["evaluator"] == "lmeval_task"]
    acc = {(m["task"], m["scale"]): m for r in evals for m in r["metrics"] if m["metric"] == "acc"}
    assert set(acc) == {("parity", 1), ("parity", 2), ("flip_flop", 1), ("flip_flop", 2)}
    assert all(r["run_id"] == run_id for r in evals)
    assert all(0 <= m["value"] <= 1 and m["n"] == 8 and m["source"].startswith("lm-eval") for m in acc.values())
    assert {p.name: p.stat().st_mtime_ns for p in (root / "results" / "runs").glob("*.json")} == trained
    with duckdb.connect(str(root / "results" / "posbench.duckdb"), read_only=True) as con:
        stored = con.execute("SELECT count(*) FROM metrics WHERE run_id = ? AND metric = 'acc'", [run_id]).fetchone()
    assert stored == (4,)


def test_eval_refuses_an_unknown_task_with_a_suggestion(finished_grid, capsys):
    root, _ = finished_grid
    run_id = sorted(p.stem for p in (root / "results" / "checkpoints").glob("*.ckpt"))[0]
    assert main(["--root", str(root), "eval", run_id, "--tasks", "passkey_"]) == 1
    assert "did you mean 'passkey'" in capsys.readouterr().err


def test_run_with_a_synthetic_task_and_glue_scores(tiny_grid, project_root, capsys):
    grid = tiny_grid(name="mixed", encodings=["rope"], tasks=["local", "flip_flop"], scales=[1, 2],
                     task_train={"steps": 10, "batch_size": 4, "seq_len": 32, "warmup_steps": 1},
                     task_recipes={"flip_flop": {"steps": 12, "lr": 0.002}},
                     eval={"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "task_examples": 4, "lmeval_rolling": False},
                     glue={"tasks": ["order"], "steps": 3, "batch_size": 4, "budget": 0.02})
    assert main(["--root", str(project_root), "run", str(grid), "--quiet"]) == 0
    runs = {r["task"]: r for r in records(project_root, "runs")}
    lm, task = runs["local"], runs["flip_flop"]
    # task_train is for synthetic tasks, and the task's own recipe goes over it
    assert lm["run"]["train"]["steps"] == 20
    assert (task["run"]["train"]["steps"], task["run"]["train"]["lr"], task["run"]["train"]["seq_len"]) == (12, 0.002, 32)
    # the learning curve: 8 evenly spaced steps; a held-out score where the task kind has one
    assert task["learning_curve"]["step"] == [2, 3, 5, 6, 8, 9, 11, 12]
    assert all(0 <= v <= 1 for v in task["learning_curve"]["heldout_exact_match"])
    assert len(task["learning_curve"]["train_loss"]) == 8
    assert all(v > 0 for v in task["learning_curve"]["heldout_loss"])  # nats per answer byte, held out
    # language modelling's held-out figure: the validation split's loss, what a tuned grid chooses on
    assert set(lm["learning_curve"]) == {"step", "train_loss", "val_loss"} and lm["learning_curve"]["step"][-1] == 20
    assert all(0 < v < math.log(256) + 1 for v in lm["learning_curve"]["val_loss"])
    assert task["provenance"]["corpus"].startswith("generated: flip_flop")
    metrics = {(r["task"], m["task"], m["metric"], m["scale"]) for r in records(project_root, "evals") for m in r["metrics"]}
    assert {(m[2], m[3]) for m in metrics if m[0] == "flip_flop"} == {("acc", 1), ("acc", 2)}
    assert {m[1] for m in metrics if m[0] == "local" and m[2] in ("score", "glue_score")} == {"glue/order", "glue"}
    with duckdb.connect(str(project_root / "results" / "posbench.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM task_scale WHERE task = 'flip_flop'").fetchone() == (2,)
        assert con.execute("SELECT count(*) FROM glue_scores WHERE metric = 'glue_score'").fetchone() == (1,)
    index = (project_root / "site" / "_build" / "index.html").read_text()
    assert "Task flip_flop (acc)" in index and "GLUE-style scores, size tiny" in index
    page = (project_root / "site" / "_build" / "runs" / f"{task['run_id']}.html").read_text()
    assert "Learning curve" in page and "held-out exact match at the training length vs training step" in page

    # every task evaluation stores its per-sample outputs, and they give back its figures exactly
    evals = [r for r in records(project_root, "evals") if r["task"] == "flip_flop"]
    assert len(evals) == 2 and all((project_root / r["samples"]).is_file() for r in evals)
    assert not any("samples" in r for r in records(project_root, "evals") if r["task"] == "local")
    with duckdb.connect(str(project_root / "results" / "posbench.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*), count(DISTINCT eval_id) FROM samples").fetchone() == (8, 2)
    assert (project_root / "site" / "_build" / "data" / "samples.parquet").is_file()
    capsys.readouterr()
    assert main(["--root", str(project_root), "rescore"]) == 0
    assert "rescored 2 figure(s) of 2 evaluation(s) from their samples: all equal" in capsys.readouterr().out
    # a stored figure that its samples do not give is found
    path = project_root / "results" / "evals" / f"{evals[0]['eval_id']}.json"
    record = json.loads(path.read_text())
    value = record["metrics"][0]["value"]
    record["metrics"][0]["value"] = value + 0.3 if value <= 0.5 else value - 0.3
    path.write_text(json.dumps(record))
    assert main(["--root", str(project_root), "rescore", evals[0]["eval_id"]]) == 1
    assert "1 differ" in capsys.readouterr().out
    assert main(["--root", str(project_root), "rescore", "0123456789abcdef"]) == 1

    # a second GLUE-style setting on the same backbone is a board of its own, never averaged into
    # the first; the first keeps its id
    other = tiny_grid(name="mixed-glue", encodings=["rope"], tasks=["local"], scales=[1, 2],
                      eval={"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False},
                      glue={"tasks": ["order"], "steps": 4, "batch_size": 4, "budget": 0.02})
    assert main(["--root", str(project_root), "run", str(other), "--quiet"]) == 0
    from suite.report.leaderboard import build

    with duckdb.connect(str(project_root / "results" / "posbench.duckdb"), read_only=True) as con:
        glue = build(con).glue
    assert [b.id for b in glue][0] == "glue-tiny-local" and len(glue) == 2 and glue[1].id.startswith("glue-tiny-local-ft4-")
    assert [b.title for b in glue] == ["GLUE-style scores, size tiny (fine-tuned 3 steps on order)",
                                       "GLUE-style scores, size tiny (fine-tuned 4 steps on order)"]
    assert all(len(b.entries) == 1 and len(b.seeds) == 1 for b in glue)

