"""A run's id is what it computes, not where it is computed: the same folder corpus in two
checkouts in different places plans the same run ids (its content is in the data
fingerprint), and a change to a file of it plans new ones."""

from __future__ import annotations

import shutil
from pathlib import Path

from suite.plan.grid import load_plan
from suite.specs import Project

from tests.conftest import REPO

GRID = """name: mine
description: a folder corpus
encodings: [nope, rope]
sizes: [tiny]
tasks: [mine]
seeds: [0]
scales: [1, 2]
train: {steps: 10, batch_size: 4, seq_len: 32, lr: 0.003, warmup_steps: 2}
eval: {tokens: 1024, batch_size: 4, lmeval_rolling: false}
"""


def checkout(root: Path, text: str) -> Path:
    """A project at ``root`` with the repository's specs and a task reading ``data/`` beside them."""
    for folder in ("encodings", "sizes"):
        shutil.copytree(REPO / folder, root / folder)
    (root / "tasks").mkdir()
    (root / "tasks" / "mine.yaml").write_text("name: mine\nkind: lm\ncorpus: {kind: folder, path: ../data, glob: '*.txt'}\n")
    (root / "data").mkdir()
    for i in range(200):  # enough files for each split to have some (90/5/5 by a hash of the path)
        (root / "data" / f"doc{i}.txt").write_text(f"{text} {i} " * 20)
    (root / "grids").mkdir()
    (root / "grids" / "mine.yaml").write_text(GRID)
    return root


def run_ids(root: Path) -> list[str]:
    _, plan = load_plan(root / "grids" / "mine.yaml", Project(root))
    return sorted(r.run_id for r in plan.runs)


def test_the_same_folder_corpus_in_two_places_plans_the_same_runs(tmp_path):
    here = checkout(tmp_path / "a" / "posbench", "the same text")
    there = checkout(tmp_path / "b" / "elsewhere" / "fresh", "the same text")
    assert run_ids(here) == run_ids(there)


def test_another_folder_content_plans_other_runs(tmp_path):
    here = checkout(tmp_path / "a", "the same text")
    other = checkout(tmp_path / "b", "other text")
    assert set(run_ids(here)).isdisjoint(run_ids(other))
