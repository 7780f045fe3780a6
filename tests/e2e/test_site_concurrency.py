"""Two renders of one site at once: each builds in a folder of its own and swaps it in by
renames, so both succeed and a whole site is left. (They used to share one staging folder, and
the second to start removed what the first was writing.)"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def one_grids_snapshot(target: Path, grid: str = "gemma3", size: str = "tiny-6l") -> None:
    """The published snapshot cut down to one grid's runs (those of ``size``) and their
    evaluations: a real snapshot whose site takes seconds to render, not the whole one's
    minute, so two renders still overlap without holding both cores for a minute."""
    target.mkdir()
    with gzip.open(REPO / "leaderboard" / "runs.jsonl.gz", "rt") as f:
        runs = [line for line in f if json.loads(line)["size"] == size]
    kept = {json.loads(line)["run_id"] for line in runs}
    with gzip.open(REPO / "leaderboard" / "evals.jsonl.gz", "rt") as f:
        evals = [json.loads(line) for line in f]
    evals = [e for e in evals if e["run_id"] in kept]
    for name, lines in (("runs.jsonl.gz", runs), ("evals.jsonl.gz", [json.dumps(e) + "\n" for e in evals])):
        with gzip.open(target / name, "wt") as f:
            f.writelines(lines)
    shutil.copyfile(REPO / "leaderboard" / "bench.jsonl.gz", target / "bench.jsonl.gz")
    for e in evals:
        if e.get("samples"):
            (target / "samples").mkdir(exist_ok=True)
            shutil.copyfile(REPO / "leaderboard" / "samples" / f"{e['eval_id']}.parquet",
                            target / "samples" / f"{e['eval_id']}.parquet")
    info = json.loads((REPO / "leaderboard" / "SNAPSHOT.json").read_text())
    info.update(grids=[grid], training_runs=len(runs), evaluations=len(evals))
    (target / "SNAPSHOT.json").write_text(json.dumps(info))


def test_two_renders_of_the_published_site_at_once_both_succeed(project_root):
    one_grids_snapshot(project_root / "leaderboard")
    with gzip.open(project_root / "leaderboard" / "runs.jsonl.gz") as f:
        assert len(f.readlines()) == 6  # gemma3's six
    env = {**os.environ, "TQDM_DISABLE": "1"}
    procs = [subprocess.Popen([sys.executable, "-m", "suite.cli.main", "--root", str(project_root), "site",
                               "--published"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    site = project_root / "site" / "published"
    assert (site / "index.html").is_file() and (site / "findings.html").is_file()
    assert not [p.name for p in (project_root / "site").iterdir() if p.name.startswith(".")]  # nothing left over
