"""A real part of the published snapshot, for tests that need committed records but not all of them."""

from __future__ import annotations

import gzip
import json
import shutil
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
