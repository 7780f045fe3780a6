"""Lightning DDP on CPU (gloo, 2 processes) and exact resume from a checkpoint taken mid-run.

DDP: one run trained by `posbench run-one MANIFEST 0 --devices 2` (Lightning launches
the second rank by re-running the command; each rank takes half of every batch, so the
global batch is the recipe's) against the same run trained in one process. Every rank
sees the same data, the gradients are averaged over equal halves (the mean of the two
half-batch losses is the full-batch loss when no target is ignored, as in language
modelling), so the two differ only by the order of float additions in the gradient
all-reduce and the loss: the final loss within 1e-5 relative, every weight within 1e-5.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from suite.plan.grid import expand
from suite.execution.manifest import manifest_of, write_manifest
from suite.results.records import read_record
from suite.specs import Project, load_grid
from suite.training.checkpoints import load_checkpoint, resume_dir
from suite.training.fit import TrainingFailed, fit
from suite.core.runtime import RESUME_EVERY_ENV

QUICK_EVAL = {"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False}
LOSS_RTOL, WEIGHT_ATOL = 1e-5, 1e-5


def one_run_plan(tiny_grid, root: Path, steps: int, encoding: str = "rope"):
    grid = tiny_grid(name="one", encodings=[encoding], scales=[1], eval=QUICK_EVAL,
                     train={"steps": steps, "batch_size": 4, "seq_len": 32, "warmup_steps": 2})
    return grid, expand(load_grid(grid, Project(root)))


def single_process(run, folder: Path):
    torch.set_num_threads(1)
    return fit(run, folder / "checkpoints", progress_bar=False)


def test_a_run_resumed_twice_names_every_earlier_commit_that_trained_it(tiny_grid, project_root, tmp_path,
                                                                        monkeypatch):
    """Killed under commit A, then under B, finished under B: its record names A (the steps B
    trained are git_commit's); finished under C instead, it names A and B in their order."""
    _, plan = one_run_plan(tiny_grid, project_root, steps=20)
    run = plan.runs[0]
    for finish, expected in (("B", "A"), ("C", "A, B")):
        checkpoints = tmp_path / finish / "checkpoints"
        monkeypatch.setenv(RESUME_EVERY_ENV, "1e-9")
        for commit, step in (("A", 5), ("B", 10)):
            with pytest.raises(TrainingFailed, match="preempted"):
                fit(run, checkpoints, progress_bar=False, commit=commit, callbacks=[StopAt(step, requeue=False).callback])
        monkeypatch.delenv(RESUME_EVERY_ENV)
        resumed = fit(run, checkpoints, progress_bar=False, commit=finish)
        assert (resumed.stats["resumed_from_step"], resumed.stats["resumed_from_commit"]) == (10, expected)


def test_ddp_over_two_cpu_processes_matches_one_process(tiny_grid, project_root, tmp_path):
    grid, plan = one_run_plan(tiny_grid, project_root, steps=20)
    manifest = write_manifest(manifest_of(plan, Project(project_root), str(grid), False), tmp_path / "manifest.json")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1"}
    done = subprocess.run([sys.executable, "-m", "suite.cli.main", "--root", str(project_root), "run-one", str(manifest), "0",
                           "--devices", "2"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    run = plan.runs[0]
    record = read_record(project_root / "results" / "runs" / f"{run.run_id}.json", "training_run")
    assert record.status == "done" and record.provenance.world_size == 2
    assert read_record(next((project_root / "results" / "evals").glob("*.json")), "evaluation").status == "done"

    reference = single_process(run, tmp_path / "single")
    assert reference.stats["world_size"] == 1
    assert record.provenance.final_train_loss == pytest.approx(reference.stats["final_train_loss"], rel=LOSS_RTOL)
    ddp_weights = load_checkpoint(project_root / record.checkpoint).model.state_dict()
    for name, value in reference.module.model.state_dict().items():
        torch.testing.assert_close(ddp_weights[name], value, atol=WEIGHT_ATOL, rtol=0, msg=name)


class StopAt:
    """Stops the process's training at the start of step ``step``, as a preemption or a kill does;
    with ``requeue``, first writes an hpc checkpoint where Lightning's requeue handler would."""

    def __init__(self, step: int, requeue: bool = True):
        import lightning as L

        outer = self

        class Callback(L.Callback):
            def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
                if trainer.global_step == outer.step:
                    if requeue:
                        trainer.save_checkpoint(trainer._checkpoint_connector.hpc_save_path(trainer.default_root_dir))
                    raise RuntimeError("preempted")

        self.step, self.callback = step, Callback()


@pytest.mark.parametrize("written_by, encoding", [("requeue", "rope"), ("resume-point", "rope"),
                                                  ("requeue", "randomized"), ("resume-point", "randomized")])
def test_a_resumed_run_ends_with_the_weights_of_an_uninterrupted_one(tiny_grid, project_root, tmp_path, monkeypatch,
                                                                     written_by, encoding):
    """The hpc checkpoint of a requeue (SLURM's signal) or of the periodic resume point (a process
    killed without warning: suite.training.trainer.ResumePoints, here one at every step boundary).
    Randomized positions draw from the global generator at every step: the checkpoint carries its
    state, so the resumed steps draw what the uninterrupted ones drew."""
    _, plan = one_run_plan(tiny_grid, project_root, steps=30, encoding=encoding)
    run = plan.runs[0]
    reference = single_process(run, tmp_path / "reference")

    checkpoints = tmp_path / "resumed" / "checkpoints"
    if written_by == "resume-point":
        monkeypatch.setenv(RESUME_EVERY_ENV, "1e-9")
    with pytest.raises(TrainingFailed, match="preempted"):
        fit(run, checkpoints, progress_bar=False, commit="older",
            callbacks=[StopAt(13, requeue=written_by == "requeue").callback])
    left = [p.name for p in resume_dir(checkpoints, run).iterdir()]
    assert len(left) == 1 and left[0].startswith("hpc_ckpt_"), left  # the earlier points removed, no partial file
    monkeypatch.delenv(RESUME_EVERY_ENV, raising=False)
    resumed = fit(run, checkpoints, progress_bar=False, commit="newer")
    assert resumed.stats["resumed_from_step"] == 13
    assert resumed.stats["resumed_from_commit"] == "older" and "resumed_from_commit" not in reference.stats
    assert not resume_dir(checkpoints, run).exists()  # finished: the hpc checkpoint is gone
    assert resumed.stats["final_train_loss"] == reference.stats["final_train_loss"]  # exactly: CPU is deterministic
    # the learning curve's points before the stop travel in the hpc checkpoint
    assert resumed.learning_curve["step"] == [4, 8, 12, 15, 19, 23, 27, 30]
    assert resumed.learning_curve == reference.learning_curve
    mine, theirs = resumed.module.model.state_dict(), reference.module.model.state_dict()
    assert all(torch.equal(mine[k], theirs[k]) for k in theirs)
