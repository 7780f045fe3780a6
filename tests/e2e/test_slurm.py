"""The slurm executor against a real single-node SLURM cluster on loopback (tests/e2e/slurm_cluster.py):
a grid submitted as a job array runs to completion, and a task preempted the way SLURM
does it (SIGUSR1 to the task, Lightning's hpc checkpoint and `scontrol requeue`) resumes
to the weights and loss of an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import duckdb
import pytest
import torch

from suite.cli.main import main
from suite.plan.grid import expand
from suite.specs import Project, load_grid
from suite.training.checkpoints import load_checkpoint, resume_dir
from suite.training.fit import fit
from suite.core.runtime import RESUME_EVERY_ENV
from tests.e2e import slurm_cluster

QUICK_EVAL = {"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False}
SUBMIT = ["--executor", "slurm", "--partition", "debug", "--cpus-per-task", "1", "--max-concurrent", "2", "--quiet"]


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    reason = slurm_cluster.ensure_installed()
    if reason:
        pytest.skip(reason)
    cluster = slurm_cluster.start(tmp_path_factory.mktemp("slurm"))
    before = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(cluster.conf)  # sbatch, squeue, scontrol from this process reach it
    yield cluster
    cluster.stop()
    if before is None:
        os.environ.pop("SLURM_CONF", None)
    else:
        os.environ["SLURM_CONF"] = before


def submitted(root: Path) -> tuple[Path, str]:
    (job_file,) = (root / "results" / "slurm").glob("*/job_id")
    return job_file.parent, job_file.read_text().strip()


def tasks(cluster, job_id: str) -> dict[str, tuple[str, str]]:
    """Array task -> (state, reason) for the tasks still in squeue."""
    lines = cluster.run("squeue", "-h", "-r", "-j", job_id, "-o", "%i %T %r", check=False).split("\n")
    return {p[0]: (p[1], p[2]) for p in (line.split() for line in lines) if len(p) == 3}


def wait_until_gone(cluster, job_id: str, timeout_s: float, on_pending=None) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        queued = tasks(cluster, job_id)
        if not queued:
            return
        for task, (state, reason) in queued.items():
            if on_pending and state == "PENDING" and reason == "BeginTime":
                on_pending(task)
        time.sleep(0.5)
    raise AssertionError(f"array {job_id} still queued after {timeout_s}s: {tasks(cluster, job_id)}\n{cluster.logs()}")


def records(root: Path, folder: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((root / "results" / folder).glob("*.json"))]


def test_a_grid_runs_to_completion_as_a_job_array(cluster, tiny_grid, project_root, capsys):
    # a fine-tuned child too: its task waits for (or trains) its parent, whichever task starts first
    grid = tiny_grid(name="array", encodings=["nope", "rope"], scales=[1, 2], eval=QUICK_EVAL,
                     train={"steps": 10, "batch_size": 4, "seq_len": 32, "warmup_steps": 1},
                     extensions=[{"parent": "rope", "encodings": ["rope-pi"], "factor": 2, "steps": 5}])
    assert main(["--root", str(project_root), "run", str(grid), *SUBMIT]) == 0
    folder, job_id = submitted(project_root)
    out = capsys.readouterr().out
    assert f"submitted job array {job_id}" in out and "#SBATCH --array=0-2%2" in (folder / "job.sbatch").read_text()
    assert not (project_root / "results" / "posbench.duckdb").exists()  # submitting does not ingest
    wait_until_gone(cluster, job_id, timeout_s=240)

    plan = expand(load_grid(grid, Project(project_root)))
    runs, evals = records(project_root, "runs"), records(project_root, "evals")
    logs = "\n".join(p.read_text() for p in folder.glob("*.out"))
    assert sorted(r["run_id"] for r in runs) == sorted(r.run_id for r in plan.runs), logs
    assert sorted(e["eval_id"] for e in evals) == sorted(e.eval_id for e in plan.evaluations), logs
    assert {r["status"] for r in runs + evals} == {"done"}
    assert sorted(p.name for p in folder.glob("*.out")) == [f"{job_id}_{i}.out" for i in range(3)]
    child = next(r for r in runs if r["lineage"])
    assert child["encoding"] == "rope-pi-ft2x" and child["lineage"]["parent_run_id"] == plan.runs[1].run_id

    assert main(["--root", str(project_root), "status", str(grid), "--ingest"]) == 0
    out = capsys.readouterr().out
    assert "training runs │    3 │       0 │       0 │      0" in out, out
    assert "evaluations │    6 │       0 │       0 │      0" in out, out
    assert f"array {job_id}" in out
    with duckdb.connect(str(project_root / "results" / "posbench.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM evaluations WHERE status = 'done'").fetchone() == (6,)
    assert main(["--root", str(project_root), "site"]) == 0
    assert (project_root / "site" / "_build" / "index.html").is_file()


def test_a_preempted_task_is_requeued_and_resumes_to_the_same_weights(cluster, tiny_grid, project_root, tmp_path,
                                                                       monkeypatch):
    steps = 1500
    # a resume point every half second of training (the job inherits this environment, as sbatch
    # exports it): the signal goes once one is written, so it lands mid-training on a fast core
    # as on a busy one, where a fixed wait could land after the last step or before the first
    monkeypatch.setenv(RESUME_EVERY_ENV, "0.5")
    grid = tiny_grid(name="requeue", encodings=["rope"], scales=[1], eval=QUICK_EVAL,
                     train={"steps": steps, "batch_size": 4, "seq_len": 32, "warmup_steps": 10})
    assert main(["--root", str(project_root), "run", str(grid), *SUBMIT]) == 0
    folder, job_id = submitted(project_root)
    run = expand(load_grid(grid, Project(project_root))).runs[0]
    claim = project_root / "results" / "claims" / f"run-{run.run_id}.json"
    points = resume_dir(project_root / "results" / "checkpoints", run)
    deadline = time.time() + 300
    while not list(points.glob("hpc_ckpt_*.ckpt")) and time.time() < deadline:  # into training, by steps
        time.sleep(0.1)
    assert claim.exists() and list(points.glob("hpc_ckpt_*.ckpt")), "no resume point: the task never trained"
    cluster.run("scancel", "--signal=USR1", f"{job_id}_0")  # what --signal=SIGUSR1@90 sends before the time limit

    released: list[str] = []

    def release(task: str) -> None:  # a requeued job waits 120 s (BeginTime); an admin may start it now
        if task not in released:
            cluster.run("scontrol", "update", f"JobId={task}", "StartTime=now")
            released.append(task)

    wait_until_gone(cluster, job_id, timeout_s=300, on_pending=release)
    log = (folder / f"{job_id}_0.out").read_text()
    assert released and "restart 1" in log, log  # it ran twice: requeued by Lightning's scontrol call

    (record,) = records(project_root, "runs")
    assert record["status"] == "done", log
    resumed_from = record["provenance"]["resumed_from_step"]
    assert resumed_from is not None and 0 < resumed_from < steps, log
    assert not resume_dir(project_root / "results" / "checkpoints", run).exists()

    torch.set_num_threads(1)  # as the task ran (--cpus-per-task 1)
    monkeypatch.delenv(RESUME_EVERY_ENV)  # the reference trains without a stop
    reference = fit(run, tmp_path / "checkpoints", progress_bar=False)
    assert record["provenance"]["final_train_loss"] == reference.stats["final_train_loss"]
    mine = load_checkpoint(project_root / record["checkpoint"]).model.state_dict()
    theirs = reference.module.model.state_dict()
    assert all(torch.equal(mine[k], theirs[k]) for k in theirs)
    assert [e["status"] for e in records(project_root, "evals")] == ["done"]
