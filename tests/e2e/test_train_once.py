"""Train once, evaluate many: what is trained, what is evaluated, and what is never redone.

Real `posbench run`s of tiny grids; the files under results/ are the evidence (a
record or checkpoint that is not rewritten keeps its modification time).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from suite.cli.main import main
from suite.plan.grid import expand
from suite.specs import Project, load_grid
from suite.results.store import ingest

QUICK_EVAL = {"tokens": 2048, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False}
ROTARY_VARIANTS = ["rope", "rope-pi", "rope-ntk", "rope-dynamic-ntk", "yarn", "rope-llama3"]


def run(root: Path, grid: Path) -> None:
    assert main(["--root", str(root), "run", str(grid), "--quiet", "--no-site"]) == 0


def files(root: Path) -> dict[str, int]:
    """Every record and checkpoint under results/, with its modification time."""
    results = root / "results"
    return {str(p.relative_to(results)): p.stat().st_mtime_ns
            for pattern in ("runs/*.json", "evals/*.json", "checkpoints/*.ckpt") for p in results.glob(pattern)}


def evals(root: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in (root / "results" / "evals").glob("*.json")}


@pytest.fixture
def finished(tiny_grid, project_root):
    """A finished grid of NoPE at 1x and 2x; returns a function writing variants of it."""

    def grid(**overrides) -> Path:
        return tiny_grid(**{"name": "once", "encodings": ["nope"], "scales": [1, 2], "eval": QUICK_EVAL, **overrides})

    run(project_root, grid())
    return grid


def test_adding_a_scale_trains_nothing_and_evaluates_only_the_new_scale(finished, project_root):
    before = files(project_root)
    run(project_root, finished(scales=[1, 2, 4]))
    after = files(project_root)
    assert {k: v for k, v in after.items() if k in before} == before  # nothing redone
    new = [evals(project_root)[Path(k).name] for k in set(after) - set(before)]
    assert [(e["evaluator"], e["scale"]) for e in new] == [("extrapolation", 4)]  # and no new run or checkpoint


def test_adding_an_evaluator_trains_nothing(finished, project_root):
    before = files(project_root)
    run(project_root, finished(evaluations=[{"evaluator": "lmeval_task", "settings": {"task": "parity", "examples": 4}}]))
    after = files(project_root)
    assert {k: v for k, v in after.items() if k in before} == before
    new = sorted((e["evaluator"], e["scale"]) for k, e in evals(project_root).items() if f"evals/{k}" not in before)
    assert new == [("lmeval_task", 1), ("lmeval_task", 2)]


def test_two_grids_that_share_a_training_run_share_its_checkpoint(finished, tiny_grid, project_root):
    before = files(project_root)
    other = tiny_grid(name="other", encodings=["rope", "nope"], scales=[1], eval=QUICK_EVAL)
    nope_run = next(r for r in expand(load_grid(other, Project(project_root))).runs if r.encoding.name == "nope")
    assert f"checkpoints/{nope_run.run_id}.ckpt" in before  # the first grid trained it
    run(project_root, other)
    after = files(project_root)
    assert {k: v for k, v in after.items() if k in before} == before
    assert len([k for k in after if k.startswith("checkpoints/")]) == 2  # only RoPE was trained


def test_the_rotary_variants_evaluate_one_checkpoint(tiny_grid, project_root):
    grid = tiny_grid(name="rotary", encodings=ROTARY_VARIANTS, scales=[1, 2], eval=QUICK_EVAL)
    plan = expand(load_grid(grid, Project(project_root)))
    assert len(plan.runs) == 1 and plan.runs[0].encoding.name == "rope"
    run(project_root, grid)
    assert len(list((project_root / "results" / "checkpoints").glob("*.ckpt"))) == 1
    records = list(evals(project_root).values())
    assert {r["run_id"] for r in records} == {plan.runs[0].run_id}
    assert sorted((r["encoding"], r["scale"]) for r in records) == sorted((e, s) for e in ROTARY_VARIANTS for s in (1, 2))
    bpb = {(r["encoding"], r["scale"]): r["metrics"][0]["value"] for r in records}
    # at the training length every variant is the RoPE model itself; beyond it they differ
    assert {bpb[(e, 1)] for e in ROTARY_VARIANTS} == {bpb[("rope", 1)]}  # the same float: the same computation
    assert len({bpb[(e, 2)] for e in ROTARY_VARIANTS}) == len(ROTARY_VARIANTS)


def test_removing_an_evaluation_record_reruns_only_that_evaluation(finished, project_root):
    before = files(project_root)
    removed = sorted(k for k in before if k.startswith("evals/"))[0]
    (project_root / "results" / removed).unlink()
    run(project_root, finished())
    after = files(project_root)
    assert set(after) == set(before)
    assert [k for k in after if after[k] != before[k]] == [removed]


def test_ingest_reports_each_record_it_cannot_use_and_ingests_the_rest(finished, project_root):
    runs, evals_dir = project_root / "results" / "runs", project_root / "results" / "evals"
    (runs / "0123456789abcdef.json").write_text(json.dumps({"schema_version": 1, "cell_id": "0123456789abcdef", "metrics": []}))
    (evals_dir / "truncated.json").write_text('{"schema_version": 2, "kind": "evalu')
    (evals_dir / ".tmp-123.part").write_text("{")  # a write in progress: never read
    report = ingest(runs, evals_dir, project_root / "results" / "posbench.duckdb")
    assert report.runs == 1 and report.evaluations == 2
    reasons = {p.path.name: p.reason for p in report.problems}
    assert set(reasons) == {"0123456789abcdef.json", "truncated.json"}
    assert "previous layout" in reasons["0123456789abcdef.json"] and "not valid JSON" in reasons["truncated.json"]
