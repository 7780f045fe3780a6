"""A board whose seeds were computed on more than one CPU model says which seeds ran where
(suite.report.board_cpus), since the CPU model decides a figure's bits under the pinned numerics.
Built by ``ingest`` and the leaderboard from real records: the published four-layer board, whose
seeds came from two CPU models, cut to three encodings and the first seeds of each CPU model (a
cut, so the three ingests take the same time as more seeds are published)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from suite.report.board_cpus import seed_ranges
from suite.results.snapshot_files import EVALS, RUNS, read_records

from tests.report.records_to_boards import leaderboard_of
from tests.snapshot_cut import cut_snapshot

BOARD = ("tiny-4l", "lm")
ENCODINGS = ("nope", "rope", "yarn")
SEEDS_PER_CPU = 3


def test_seed_ranges_join_consecutive_seeds():
    assert seed_ranges([7, 0, 1, 2, 5, 8]) == "0-2, 5, 7-8"
    assert seed_ranges([3]) == "3" and seed_ranges([]) == ""


def board_notes(root: Path, runs: list, evals: list) -> str:
    board = leaderboard_of(root, runs, evals).find("lm-tiny-4l-lm")
    assert board is not None
    return " ".join(board.notes)


def with_cpu(record, cpu: str):
    numerics = {**record.provenance.numerics, "cpu": cpu}
    return dataclasses.replace(record, provenance=dataclasses.replace(record.provenance, numerics=numerics))


@pytest.fixture(scope="module")
def cut(tmp_path_factory):
    """The board's done runs of ENCODINGS and their evaluations, at the first SEEDS_PER_CPU seeds
    of each CPU model, with {CPU model: its seeds}."""
    folder = tmp_path_factory.mktemp("board-cpus") / "snapshot"
    cut_snapshot(folder, ["power-lm-tiny-4l"], lambda r: (r["size"], r["task"]) == BOARD
                 and r["encoding"] in ENCODINGS and r["status"] == "done")
    runs = read_records(folder / RUNS, "training_run")
    seeds_of: dict[str, set[int]] = {}
    for r in runs:
        seeds_of.setdefault(r.provenance.cpu, set()).add(r.seed)
    if len(seeds_of) < 2:
        pytest.skip("the published four-layer board names one CPU model")
    cpus = {cpu: set(sorted(seeds)[:SEEDS_PER_CPU]) for cpu, seeds in seeds_of.items()}
    kept = set().union(*cpus.values())
    runs = [r for r in runs if r.seed in kept]
    ids = {r.run_id for r in runs}
    return runs, [e for e in read_records(folder / EVALS, "evaluation") if e.run_id in ids], cpus


def test_a_board_of_two_cpu_models_says_which_seeds_ran_where(cut, tmp_path):
    runs, evals, cpus = cut
    notes = board_notes(tmp_path, runs, evals)
    expected = "; ".join(f"{cpu} (seeds {seed_ranges(sorted(seeds))})" for cpu, seeds in sorted(cpus.items()))
    assert f"Computed on {len(cpus)} CPU models, each seed's rows on one: {expected}." in notes
    assert "CPU models across rows" not in notes  # no seed mixes them


def test_a_board_of_one_cpu_model_says_nothing_of_it(cut, tmp_path):
    runs, evals, _ = cut
    notes = board_notes(tmp_path, [with_cpu(r, "One CPU") for r in runs], evals)
    assert "CPU model" not in notes


def test_a_seed_whose_rows_mix_cpu_models_is_named(cut, tmp_path):
    """A database of one's own results may pair figures of two CPUs within a seed (the published
    snapshot may not: tests/e2e/test_published.py); the board names that seed."""
    runs, evals, _ = cut
    seed = min(r.seed for r in runs)
    doctored = [with_cpu(r, "Another CPU") if (r.seed, r.encoding) == (seed, "rope") else r for r in runs]
    notes = board_notes(tmp_path, doctored, evals)
    assert f"Seed {seed} mixes CPU models across rows, so its paired differences compare two arithmetics." in notes
