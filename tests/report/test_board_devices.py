"""A board whose runs trained on a GPU says so, and one that mixes a GPU's seeds with a CPU's
says that too (suite.report.board_classes.device_note). Built by ``ingest`` and the leaderboard from
real records: the ladder's tiny rung of the question rows at seeds 0-2, trained on a lent H200
(benchmarks/gpu-h200-2026-11-28-ladder, the same run ids as the published CPU records), and the
published CPU records of that rung."""

from __future__ import annotations

from pathlib import Path

import pytest

from suite.results.snapshot_files import EVALS, RUNS, read_records

from tests.report.records_to_boards import leaderboard_of
from tests.snapshot_cut import cut_snapshot

ROOT = Path(__file__).resolve().parents[2]
GPU = ROOT / "benchmarks" / "gpu-h200-2026-11-28-ladder"
ROWS = ("nope", "rope", "alibi")


def in_rung(record) -> bool:
    """The tuned 600-step tiny runs of NoPE, RoPE and ALiBi at seeds 0-2."""
    train = record.run["train"]
    return (record.size == "tiny" and record.task == "lm" and record.encoding in ROWS and record.seed in (0, 1, 2)
            and train["steps"] == 600 and bool(train.get("lr_sweep")) and record.status == "done")


def rung(runs, evals) -> tuple[list, list]:
    runs = [r for r in runs if in_rung(r)]
    ids = {r.run_id for r in runs}
    return runs, [e for e in evals if e.run_id in ids]


@pytest.fixture(scope="module")
def gpu():
    return rung(read_records(GPU / "tiny-runs.jsonl.gz", "training_run"),
                read_records(GPU / "tiny-evals.jsonl.gz", "evaluation"))


@pytest.fixture(scope="module")
def cpu(tmp_path_factory):
    folder = tmp_path_factory.mktemp("board-devices") / "snapshot"
    cut_snapshot(folder, ["ladder-lm-question"], lambda r: r["size"] == "tiny" and r["seed"] in (0, 1, 2))
    return rung(read_records(folder / RUNS, "training_run"), read_records(folder / EVALS, "evaluation"))


def tiny_board_notes(root: Path, runs: list, evals: list) -> str:
    boards = [b for b in leaderboard_of(root, runs, evals).of_kind("lm") if (b.size, b.task) == ("tiny", "lm")]
    assert len(boards) == 1 and sorted(boards[0].seeds) == [0, 1, 2]
    return " ".join(boards[0].notes)


def test_a_board_trained_on_a_gpu_says_so(gpu, tmp_path):
    notes = tiny_board_notes(tmp_path, *gpu)
    assert "Trained on a GPU, cuda:NVIDIA H200 (bf16-mixed): seeds 0-2, and evaluated on it in fp32" in notes
    assert "mixes device classes" not in notes


def test_a_board_of_cpu_runs_says_nothing_of_devices(cpu, tmp_path):
    assert "GPU" not in tiny_board_notes(tmp_path, *cpu)


def test_a_board_that_mixes_a_gpu_seed_with_cpu_seeds_says_which(gpu, cpu, tmp_path):
    """Seed 2 from the GPU, seeds 0-1 from the CPU: as a results folder that gathered both could hold."""
    gpu_runs, gpu_evals = gpu
    cpu_runs, cpu_evals = cpu
    seed2 = {r.run_id for r in gpu_runs if r.seed == 2}
    runs = [r for r in cpu_runs if r.run_id not in seed2] + [r for r in gpu_runs if r.run_id in seed2]
    evals = [e for e in cpu_evals if e.run_id not in seed2] + [e for e in gpu_evals if e.run_id in seed2]
    notes = tiny_board_notes(tmp_path, runs, evals)
    assert "Trained on a GPU, cuda:NVIDIA H200 (bf16-mixed): seeds 2," in notes
    assert "Seeds 0-1 trained on a CPU: this board mixes device classes" in notes
