"""``posbench verify`` computes with the numerics the grid computed with: the grid's workers
and verify pin them in one place (suite.core.numerics), each record names them, and verify
starts a process with a record's own when they are not the shell's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from suite.cli.main import main
from suite.core import machine, numerics

EVAL = {"tokens": 1024, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False}


def posbench(root, *args, **env) -> subprocess.CompletedProcess:
    numerics_variables = set(numerics.STANDARD.variables())  # the shell asks for none of them
    clean = {k: v for k, v in os.environ.items() if k not in numerics_variables}
    return subprocess.run([sys.executable, "-m", "suite.cli.main", "--root", str(root), *args],
                          env={**clean, "TQDM_DISABLE": "1", **env}, capture_output=True, text=True)


def test_grid_workers_record_the_numerics_verify_reproduces_bit_for_bit(tiny_grid, project_root, capsys):
    grid = tiny_grid("numerics", encodings=["rope", "alibi"], scales=[1, 2], eval=EVAL)
    # a shell asking for all cores: the workers still compute on one thread each, at AVX2
    out = posbench(project_root, "run", str(grid), "--quiet", "--no-site", "--jobs", "2", OMP_NUM_THREADS="2")
    assert out.returncode == 0, out.stdout + out.stderr
    records = sorted((project_root / "results" / "runs").glob("*.json"))
    evals = sorted((project_root / "results" / "evals").glob("*.json"))
    assert len(records) == 2 and len(evals) == 4
    for path in records + evals:
        recorded = json.loads(path.read_text())["provenance"]["numerics"]
        assert numerics.Numerics.from_record(recorded) == numerics.STANDARD
        assert recorded["cpu"] == numerics.cpu_model()
        assert recorded.get("mkl_branch") == numerics.mkl_branches().get("mkl_branch")  # MKL's own report
        assert machine.compare(recorded, numerics.measured()).same  # every class field named, and this machine's
    capsys.readouterr()
    assert main(["--root", str(project_root), "verify", str(records[0])]) == 0
    out = capsys.readouterr().out
    assert "match: 3 of 3 figure(s) match, 3 bit for bit" in out and "numerics differ" not in out
    assert "machine class: the same machine class" in out

    # the same record as if computed on another stepping of the CPU: another machine class, so its
    # figures are compared within the cross-class tolerances and verify says so
    record = json.loads(records[0].read_text())
    record["provenance"]["numerics"]["stepping"] = "99"
    records[0].write_text(json.dumps(record))
    assert main(["--root", str(project_root), "verify", str(records[0])]) == 0
    out = capsys.readouterr().out
    assert "machine class: another machine class (stepping: recorded 99, here " in out
    assert "tolerance each kind of figure within its measured cross-class tolerance" in out
    assert "match: 3 of 3 figure(s) match, 3 bit for bit" in out


def test_a_record_made_with_other_numerics_is_verified_with_its_own(tiny_grid, project_root, capfd):
    grid = tiny_grid("threads", encodings=["rope"], scales=[1, 2], eval=EVAL)
    out = posbench(project_root, "run", str(grid), "--quiet", "--no-site", POSBENCH_THREADS="2")
    assert out.returncode == 0, out.stdout + out.stderr
    (record,) = (project_root / "results" / "runs").glob("*.json")
    assert json.loads(record.read_text())["provenance"]["numerics"]["threads"] == 2
    capfd.readouterr()
    assert main(["--root", str(project_root), "verify", str(record)]) == 0  # this process: one thread
    out = capfd.readouterr().out
    assert "re-running in a process with the record's numerics: 2 thread(s), ATen at avx2" in out
    assert "match: 3 of 3 figure(s) match, 3 bit for bit" in out and "numerics differ" not in out
