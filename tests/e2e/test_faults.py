"""Faults degrade to a record, never a stuck grid: each test breaks one thing of a finished
grid, reruns it, and checks that the grid finishes with every other piece done and that what
was there before is kept (set aside in results/aside/ with its reason), never lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from suite.cli.main import main
from suite.evaluation.base import EvalResult
from suite.plan.evaluators import EVALUATORS, Evaluator

EVAL = {"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False}
TRAIN = {"steps": 20, "batch_size": 4, "seq_len": 32, "warmup_steps": 2}


def records(root, folder):
    return {p.stem: json.loads(p.read_text()) for p in sorted((root / "results" / folder).glob("*.json"))}


def run(root, grid, *extra):
    return main(["--root", str(root), "run", str(grid), "--quiet", "--no-site", *extra])


def aside(root):
    folder = root / "results" / "aside"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def finished_grid(tiny_grid, root, scales=(1, 2)):
    grid = tiny_grid("faults", encodings=["nope", "rope"], scales=list(scales), eval=EVAL, train=TRAIN)
    assert run(root, grid) == 0
    return grid


def test_an_unloadable_checkpoint_is_set_aside_and_its_run_trained_again(tiny_grid, project_root, capsys):
    finished_grid(tiny_grid, project_root)
    runs = records(project_root, "runs")
    broken = next(i for i, r in runs.items() if r["encoding"] == "rope")
    checkpoint = project_root / "results" / "checkpoints" / f"{broken}.ckpt"
    checkpoint.write_bytes(checkpoint.read_bytes()[:1000])  # truncated, as a full disk leaves it
    grid = tiny_grid("faults", encodings=["nope", "rope"], scales=[1, 2, 4], eval=EVAL, train=TRAIN)  # work is pending
    capsys.readouterr()
    assert run(project_root, grid) == 0
    out = capsys.readouterr().out
    assert "checkpoint of rope/tiny/local/seed0 cannot be loaded" in out and "training it again" in out
    kept = aside(project_root)
    assert f"{broken}.ckpt" in " ".join(kept) and f"{broken}.json" in " ".join(kept)  # checkpoint and done record
    reason = next(project_root / "results" / "aside" / n for n in kept if n.endswith(f"{broken}.ckpt.reason"))
    assert "unloadable checkpoint" in reason.read_text()
    after = records(project_root, "runs")
    assert after[broken]["status"] == "done" and after[broken]["provenance"]["final_train_loss"] == \
        runs[broken]["provenance"]["final_train_loss"]  # the same numerics give the same run
    other = next(i for i in runs if i != broken)
    assert after[other] == runs[other]  # the other run was not touched
    assert all(e["status"] == "done" for e in records(project_root, "evals").values())
    assert len(records(project_root, "evals")) == 6


def test_a_done_run_whose_checkpoint_is_gone_keeps_its_record_aside_and_says_so(tiny_grid, project_root, capsys):
    finished_grid(tiny_grid, project_root)
    gone = next(iter(records(project_root, "runs")))
    (project_root / "results" / "checkpoints" / f"{gone}.ckpt").unlink()
    grid = tiny_grid("faults", encodings=["nope", "rope"], scales=[1, 2, 4], eval=EVAL, train=TRAIN)
    capsys.readouterr()
    assert run(project_root, grid) == 0
    assert "is trained again (no usable checkpoint); its done record is kept as results/aside/" in capsys.readouterr().out
    assert any(n.endswith(f"{gone}.json") for n in aside(project_root))
    assert len(records(project_root, "evals")) == 6


def test_a_run_trained_again_to_the_same_weights_keeps_its_evaluations(tiny_grid, project_root):
    finished_grid(tiny_grid, project_root)
    before = records(project_root, "evals")
    gone = next(iter(records(project_root, "runs")))
    (project_root / "results" / "checkpoints" / f"{gone}.ckpt").unlink()
    grid = tiny_grid("faults", encodings=["nope", "rope"], scales=[1, 2, 4], eval=EVAL, train=TRAIN)
    assert run(project_root, grid) == 0
    after = records(project_root, "evals")
    assert all(after[i] == e for i, e in before.items())  # the same numerics, the same weights: not redone
    assert not [n for n in aside(project_root) if n.endswith(tuple(f"{i}.json" for i in before))]


@pytest.mark.parametrize("earlier_digest", ["0" * 64, None], ids=["other weights", "no digest"])
def test_a_run_trained_again_to_other_weights_has_its_evaluations_done_again(tiny_grid, project_root, capsys,
                                                                            earlier_digest):
    """As when a run trained on a GPU, or published before records named their weights, is
    trained again here: the evaluations of the earlier weights go aside and are redone."""
    finished_grid(tiny_grid, project_root)
    runs = records(project_root, "runs")
    retrained = next(iter(runs))
    path = project_root / "results" / "runs" / f"{retrained}.json"
    record = json.loads(path.read_text())
    assert len(record["provenance"]["weights_sha256"]) == 64
    record["provenance"]["weights_sha256"] = earlier_digest
    path.write_text(json.dumps(record))
    (project_root / "results" / "checkpoints" / f"{retrained}.ckpt").unlink()
    earlier = {i for i, e in records(project_root, "evals").items() if e["run_id"] == retrained}
    assert len(earlier) == 2
    grid = tiny_grid("faults", encodings=["nope", "rope"], scales=[1, 2, 4], eval=EVAL, train=TRAIN)
    capsys.readouterr()
    assert run(project_root, grid) == 0
    assert "2 evaluation(s) of its earlier weights set aside" in capsys.readouterr().out
    kept = aside(project_root)
    assert all(any(n.endswith(f"{i}.json") for n in kept) for i in earlier)
    reason = next(project_root / "results" / "aside" / n for n in kept if n.endswith(f"{min(earlier)}.json.reason"))
    assert "trained again with other weights" in reason.read_text()
    evals = records(project_root, "evals")
    trained_at = records(project_root, "runs")[retrained]["provenance"]["finished_at"]
    mine = [e for e in evals.values() if e["run_id"] == retrained]
    assert len(mine) == 3 and all(e["status"] == "done" for e in mine)
    assert all(e["provenance"]["finished_at"] >= trained_at for e in mine)  # every one on the new weights
    assert len(evals) == 6


def test_a_corrupt_resume_checkpoint_is_set_aside_and_the_run_trains_from_the_start(tiny_grid, project_root):
    grid = tiny_grid("faults", encodings=["nope", "rope"], scales=[1], eval=EVAL, train=TRAIN)
    from suite.plan.grid import load_plan
    from suite.specs import Project

    _, plan = load_plan(grid, Project(project_root))
    hpc = project_root / "results" / "hpc" / plan.runs[0].run_id
    hpc.mkdir(parents=True)
    (hpc / "hpc_ckpt_1.ckpt").write_bytes(b"PK\x03\x04 not a checkpoint")
    assert run(project_root, grid) == 0
    runs = records(project_root, "runs")
    assert len(runs) == 2 and all(r["status"] == "done" for r in runs.values())
    assert not hpc.exists() and any(n.endswith(plan.runs[0].run_id) for n in aside(project_root))


class NoFigures(Evaluator):
    """An evaluator that returns nothing (a bug in a contributor's evaluator)."""

    per_scale = False

    @staticmethod
    def evaluate(model, context):
        return EvalResult(metrics=[])


def test_an_evaluation_without_metrics_is_a_failure_and_the_grid_goes_on(tiny_grid, project_root, monkeypatch):
    monkeypatch.setitem(EVALUATORS._items, "no-figures", NoFigures)
    grid = tiny_grid("faults", encodings=["nope"], scales=[1], eval=EVAL, train=TRAIN,
                     evaluations=[{"evaluator": "no-figures"}])
    assert run(project_root, grid) == 1  # a failed piece
    evals = list(records(project_root, "evals").values())
    failed = [e for e in evals if e["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["evaluator"] == "no-figures"
    assert "returned no metrics" in failed[0]["reason"]
    assert [e["status"] for e in evals if e["evaluator"] != "no-figures"] == ["done"]


class SwallowsSigterm(Evaluator):
    """An evaluator in which a SIGTERM lands inside a library that turns the handler's exception into
    its own error, as DuckDB did on a GPU loan ("Query interrupted" from write_samples'
    executemany, for the SystemExit a time limit's SIGTERM raised)."""

    per_scale = False

    @staticmethod
    def evaluate(model, context):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler runs here, in the main thread
        except SystemExit:
            raise RuntimeError("Query interrupted") from None
        return EvalResult(metrics=[])


def test_a_sigterm_that_a_library_turns_into_its_own_error_still_exits_143(tiny_grid, project_root, monkeypatch):
    """The process exits 143 and records nothing of the piece, as for any SIGTERM: the piece did
    not fail, it was stopped."""
    monkeypatch.setitem(EVALUATORS._items, "swallows-sigterm", SwallowsSigterm)
    grid = tiny_grid("faults", encodings=["nope"], scales=[1], eval=EVAL, train=TRAIN,
                     evaluations=[{"evaluator": "swallows-sigterm"}])
    with pytest.raises(SystemExit) as exit_:
        run(project_root, grid)
    assert exit_.value.code == 128 + signal.SIGTERM
    assert not [e for e in records(project_root, "evals").values() if e["evaluator"] == "swallows-sigterm"]
    assert not list((project_root / "results" / "claims").glob("*.json"))  # its claim released


@pytest.mark.parametrize("after_claim_s", [0.0, 1.0], ids=["before-the-fit", "in-the-fit"])
def test_sigterm_during_training_exits_143_and_a_rerun_completes(tiny_grid, project_root, after_claim_s):
    """A SIGTERM as soon as the run is claimed lands before Lightning's fit has its handler (Python's
    default would end the process there, claim and all); a second later it lands in the fit on an
    idle machine. Either way: exit 143, nothing recorded, the claim released."""
    grid = tiny_grid("faults", encodings=["nope"], scales=[1], eval=EVAL,
                     train={"steps": 3000, "batch_size": 4, "seq_len": 32, "warmup_steps": 2})
    env = {**os.environ, "TQDM_DISABLE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "suite.cli.main", "--root", str(project_root), "run", str(grid),
                             "--quiet", "--no-site"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    claims = project_root / "results" / "claims"
    while not list(claims.glob("run-*.json")) and proc.poll() is None:  # training has begun
        time.sleep(0.1)
    time.sleep(after_claim_s)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=300)
    assert proc.returncode == 128 + signal.SIGTERM
    assert not records(project_root, "runs")  # nothing recorded as done
    assert not list(claims.glob("*.json"))  # its claim released: a rerun takes the run up at once
    assert main(["--root", str(project_root), "plan", str(grid)]) == 0


def test_a_run_another_worker_just_recorded_as_failed_is_not_trained_again(tiny_grid, project_root, monkeypatch):
    """The race: this process saw the run to do, another recorded it failed before this one took
    its claim. Without --retry-failed the failure stands (no second training over it)."""
    from rich.console import Console

    from suite.execution import runner
    from suite.plan.grid import load_plan
    from suite.specs import Project

    grid = tiny_grid("faults", encodings=["nope"], scales=[1], eval=EVAL,
                     train={"steps": 30, "batch_size": 4, "seq_len": 32, "warmup_steps": 1, "lr": 1000.0})
    assert run(project_root, grid) == 1  # diverges: a failed record
    (failed,) = records(project_root, "runs").values()
    assert failed["status"] == "failed"
    project = Project(project_root)
    _, plan = load_plan(grid, project)
    seen = iter([True])  # the first look (before the claim) still saw the run to do
    real = runner.needs_training
    monkeypatch.setattr(runner, "needs_training", lambda *a, **k: next(seen, None) or real(*a, **k))
    work = runner._Pass(project, Console(quiet=True), retry_failed=False, progress_bar=False)
    assert work.train(plan.runs[0]) is None
    assert records(project_root, "runs")[failed["run_id"]] == failed  # the failed record is as it was
