"""Nothing lost, nothing corrupted: divergence, killed processes, concurrent processes, bad files.

Real `posbench` processes on tiny grids; the record files are the evidence.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from suite.cli.main import main
from suite.plan.grid import expand
from suite.specs import Project, load_grid
from suite.core.runtime import RESUME_EVERY_ENV

QUICK_EVAL = {"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False}


def posbench(root: Path, *args: str, env: dict | None = None, **popen) -> subprocess.Popen:
    """A real `posbench` process (one thread: several share this machine's cores), with ``env`` added."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TQDM_DISABLE": "1", **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "suite.cli.main", "--root", str(root), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen)


def records(root: Path, folder: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((root / "results" / folder).glob("*.json"))]


def plan_of(root: Path, grid: Path):
    return expand(load_grid(grid, Project(root)))


def test_a_diverging_run_is_recorded_as_failed_and_the_grid_completes(tiny_grid, project_root, capsys):
    grid = tiny_grid(name="diverge", encodings=["nope", "rope"], scales=[1, 2], eval=QUICK_EVAL,
                     train={"steps": 30, "batch_size": 4, "seq_len": 32, "warmup_steps": 1, "lr": 1000.0})
    assert main(["--root", str(project_root), "run", str(grid), "--quiet"]) == 1
    runs = records(project_root, "runs")
    assert len(runs) == 2 and {r["status"] for r in runs} == {"failed"}
    for r in runs:
        assert "diverged" in r["reason"] and isinstance(r["step"], int)
        assert (project_root / r["log"]).is_file()
    assert not list((project_root / "results" / "checkpoints").glob("*.ckpt"))  # no NaN weights kept
    assert (project_root / "site" / "_build" / "index.html").is_file()  # ingested and rendered all the same
    assert "2 piece(s) failed" in capsys.readouterr().err


def test_a_killed_run_resumes_with_exactly_one_record_per_piece(tiny_grid, project_root):
    """SIGKILL, which no process can catch (a session's end, the OOM killer), once the first run has
    written a resume point (suite.training.trainer.ResumePoints, here every 0.2 s of training):
    the rerun takes the stale claim and resumes that run from its point."""
    grid = tiny_grid(name="killed", encodings=["nope", "alibi"], scales=[1, 2], eval=QUICK_EVAL,
                     train={"steps": 400, "batch_size": 4, "seq_len": 32, "warmup_steps": 2})
    proc = posbench(project_root, "run", str(grid), "--quiet", "--no-site", env={RESUME_EVERY_ENV: "0.2"})
    claims, hpc = project_root / "results" / "claims", project_root / "results" / "hpc"
    deadline = time.time() + 120
    while not list(hpc.glob("*/hpc_ckpt_*.ckpt")) and time.time() < deadline:  # 400 steps take seconds
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert list(claims.glob("run-*.json")), "the killed process left its claim behind"
    assert list(hpc.glob("*/hpc_ckpt_*.ckpt")), "no resume point before the kill"
    # a stray temporary file, as a kill inside a record write leaves it
    (project_root / "results" / "runs").mkdir(parents=True, exist_ok=True)
    (project_root / "results" / "runs" / ".tmp-123-abc.part").write_text('{"half": ')
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0  # takes the stale claim
    plan = plan_of(project_root, grid)
    assert sorted(r["run_id"] for r in records(project_root, "runs")) == sorted(r.run_id for r in plan.runs)
    assert sorted(r["eval_id"] for r in records(project_root, "evals")) == sorted(e.eval_id for e in plan.evaluations)
    assert all(r["status"] == "done" for r in records(project_root, "runs") + records(project_root, "evals"))
    resumed = sorted(r["provenance"].get("resumed_from_step") or 0 for r in records(project_root, "runs"))
    assert resumed[0] == 0 and 0 < resumed[1] < 400, resumed  # the run killed resumed from its point, the other did not
    assert not list(claims.glob("*.json")) and not list(hpc.glob("*/*"))


def test_eight_concurrent_processes_divide_the_work(tiny_grid, project_root):
    grid = tiny_grid(name="crowd", encodings=["nope", "rope", "alibi", "t5"], seeds=[0, 1], scales=[1, 2],
                     eval=QUICK_EVAL, train={"steps": 10, "batch_size": 4, "seq_len": 32, "warmup_steps": 1})
    # one of them renders the site too; eight site renders would add nothing the claims count
    procs = [posbench(project_root, "run", str(grid), "--quiet", *(["--no-site"] if i else [])) for i in range(8)]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, "\n".join(outputs)
    plan = plan_of(project_root, grid)
    trained = sum(o.count("trained in") for o in outputs)
    evaluated = sum(o.count("extrapolation ") for o in outputs)
    assert trained == len(plan.runs) == 8  # no run trained twice
    assert evaluated == len(plan.evaluations) == 16  # no evaluation done twice
    assert len(records(project_root, "runs")) == 8 and len(records(project_root, "evals")) == 16
    with duckdb.connect(str(project_root / "results" / "posbench.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM evaluations WHERE status = 'done'").fetchone() == (16,)


def test_jobs_show_one_progress_display_and_keep_each_workers_output_in_its_log(tiny_grid, project_root):
    grid = tiny_grid(name="jobs", encodings=["nope", "rope", "alibi"], scales=[1, 2], eval=QUICK_EVAL,
                     train={"steps": 10, "batch_size": 4, "seq_len": 32, "warmup_steps": 1})
    proc = posbench(project_root, "run", str(grid), "--jobs", "2")
    output = proc.communicate(timeout=600)[0]
    assert proc.returncode == 0, output
    assert output.count("grid jobs:") == 1 and "run 1/" not in output  # the workers' lines are in their logs
    assert "2 worker processes" in output
    lines = [line for line in output.splitlines() if " pieces" in line]
    assert lines and lines[-1].startswith("9/9 pieces; ") and "elapsed" in lines[-1]  # 3 runs + 6 evaluations
    counts = [int(line.split("/", 1)[0]) for line in lines]
    assert counts == sorted(counts)  # a line each time the count grows
    logs = sorted((project_root / "results" / "logs").glob("worker-*.log"))
    assert [p.name for p in logs] == ["worker-1.log", "worker-2.log"]
    assert sum(p.read_text().count("trained in") for p in logs) == 3  # each run trained once, by one worker


def test_a_corrupt_record_is_redone_and_a_corrupt_database_rebuilt(tiny_grid, project_root, capsys):
    grid = tiny_grid(name="heal", encodings=["nope"], scales=[1, 2], eval=QUICK_EVAL)
    assert main(["--root", str(project_root), "run", str(grid), "--quiet"]) == 0
    victim = sorted((project_root / "results" / "evals").glob("*.json"))[0]
    victim.write_text('{"schema_version": 2, "kind": "evaluation", "eval_')  # truncated
    database = project_root / "results" / "posbench.duckdb"
    database.write_bytes(b"this is not a DuckDB file" * 100)
    assert main(["--root", str(project_root), "plan", str(grid)]) == 0
    assert "evaluations: 1 done, 1 todo, 0 failed" in capsys.readouterr().out  # the corrupt one is to do again
    assert main(["--root", str(project_root), "ingest"]) == 0
    assert f"skipped {victim}" in capsys.readouterr().err  # reported with file and reason, not fatal
    assert main(["--root", str(project_root), "run", str(grid), "--quiet"]) == 0
    assert json.loads(victim.read_text())["status"] == "done"
    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM evaluations").fetchone() == (2,)


@pytest.mark.parametrize("garbage", [b"", b"\x00\xff\xfe", b"[1, 2, 3]", b'{"schema_version": 2, "kind": "training_run"}'])
def test_ingest_skips_every_kind_of_bad_record(tmp_path, garbage):
    from suite.results.store import ingest

    runs, evals = tmp_path / "runs", tmp_path / "evals"
    runs.mkdir()
    evals.mkdir()
    (runs / "0000000000000000.json").write_bytes(garbage)
    report = ingest(runs, evals, tmp_path / "db.duckdb")
    assert report.runs == 0 and len(report.problems) == 1 and report.problems[0].path.name == "0000000000000000.json"


def test_a_terminated_jobs_run_stops_its_workers_and_a_rerun_completes(tiny_grid, project_root):
    """SIGTERM to `posbench run --jobs 2` (kill, a scheduler's cancel) stops its workers with it,
    instead of leaving them training unseen; the rerun takes over their claims."""
    grid = tiny_grid(name="term", encodings=["nope", "alibi"], scales=[1], eval=QUICK_EVAL,
                     train={"steps": 600, "batch_size": 4, "seq_len": 32, "warmup_steps": 2})
    proc = posbench(project_root, "run", str(grid), "--jobs", "2", "--quiet", "--no-site")
    claims = project_root / "results" / "claims"
    try:
        deadline = time.time() + 1200  # a guard against a hang: on a busy machine the workers start late
        while len(list(claims.glob("run-*.json"))) < 2 and time.time() < deadline:  # both workers train
            assert proc.poll() is None, f"the run ended before both workers trained at once:\n{proc.communicate()[0]}"
            time.sleep(0.2)
        owners = [json.loads(p.read_text())["pid"] for p in claims.glob("run-*.json")]
        assert len(owners) == 2 and proc.pid not in owners
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGTERM
    for pid in owners:  # the parent waited for them: gone, not orphaned
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not list((project_root / "results" / "runs").glob("*.json"))  # stopped mid-training
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    plan = plan_of(project_root, grid)
    assert sorted(r["run_id"] for r in records(project_root, "runs")) == sorted(r.run_id for r in plan.runs)
    assert all(r["status"] == "done" for r in records(project_root, "runs") + records(project_root, "evals"))
