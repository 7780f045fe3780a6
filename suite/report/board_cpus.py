"""Which machines computed a board, said on it: the CPU models when its seeds span several, and
the device when its runs trained on a GPU.

Under the pinned numerics (suite.core.numerics) the CPU model still decides a figure's bits:
MKL's AVX2 branch is Intel's promise on Intel CPUs only, and on an AMD CPU MKL takes its own
branch (docs/concepts/reproducibility.md). A board pairs its rows seed by seed, so each seed's
rows must come from one CPU model (the published snapshot is tested for it); different seeds may
come from different ones, which then act as a block factor across seeds. A reader who re-runs a
record needs to know which CPU it names, so a board whose seeds span CPU models says which seeds
ran where.
"""

from __future__ import annotations

from collections import defaultdict

from suite.report.board_types import Board


def seed_ranges(seeds: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> '0-2, 5, 7-8'."""
    out: list[str] = []
    last = None
    for seed in sorted(set(seeds)):
        if last is not None and seed == last + 1:
            out[-1] = f"{out[-1].split('-')[0]}-{seed}"
        else:
            out.append(str(seed))
        last = seed
    return ", ".join(out)


def board_runs(board: Board, runs: dict[str, dict]) -> list[dict]:
    """The training runs of the board's size, task, seeds and checkpoints (a training-free row's
    checkpoint is its ``trained_as``)."""
    encodings = {entry.trained_as or entry.encoding for entry in board.entries}
    seeds = set(board.seeds)
    return [run for run in runs.values() if run["size"] == board.size and run["task"] == board.task
            and run["seed"] in seeds and run["encoding"] in encodings]


def cpus_by_seed(board: Board, runs: dict[str, dict]) -> dict[int, set[str]]:
    """seed -> the CPU models named by the board's training runs (:func:`board_runs`)."""
    out: dict[int, set[str]] = defaultdict(set)
    for run in board_runs(board, runs):
        if run.get("cpu"):
            out[run["seed"]].add(run["cpu"])
    return dict(out)


def cpu_note(board: Board, runs: dict[str, dict]) -> str | None:
    """The board's note when its seeds come from more than one CPU model, else None."""
    by_seed = cpus_by_seed(board, runs)
    models = sorted({cpu for cpus in by_seed.values() for cpu in cpus})
    if len(models) < 2:
        return None
    mixed = sorted(seed for seed, cpus in by_seed.items() if len(cpus) > 1)
    parts = [f"{model} (seeds {seed_ranges([s for s, cpus in by_seed.items() if cpus == {model}])})"
             for model in models if any(cpus == {model} for cpus in by_seed.values())]
    text = (f"Computed on {len(models)} CPU models, each seed's rows on one: {'; '.join(parts)}. Under the pinned "
            "numerics the machine class still decides a figure's last bits (MKL's branch is Intel's on Intel CPUs "
            "only), so a record is bit-identical on the class it names and within the measured cross-class "
            "tolerances elsewhere.")
    if mixed:  # the snapshot's test forbids it; a database of one's own results may still have it
        text += (f" {'Seed' if len(mixed) == 1 else 'Seeds'} {seed_ranges(mixed)} "
                 f"{'mixes' if len(mixed) == 1 else 'mix'} CPU models across rows, so "
                 f"{'its' if len(mixed) == 1 else 'their'} paired differences compare two arithmetics.")
    return text


def devices_by_seed(board: Board, runs: dict[str, dict]) -> dict[str, set[int]]:
    """device -> the seeds of the board's training runs (:func:`board_runs`) on it: "cpu", or a GPU
    with its precision ("cuda:NVIDIA H200 (bf16-mixed)"), as the runs' records name them
    (suite.training.fit)."""
    where: dict[str, set[int]] = defaultdict(set)
    for run in board_runs(board, runs):
        device = run.get("device") or "cpu"
        where[device if device == "cpu" else f"{device} ({run.get('precision') or 'unknown precision'})"].add(run["seed"])
    return dict(where)


def gpus_of(board: Board, runs: dict[str, dict]) -> list[str]:
    """The GPUs (with their precision) the board's runs trained on; empty for a CPU board."""
    return sorted(d for d in devices_by_seed(board, runs) if d != "cpu")


def device_note(board: Board, runs: dict[str, dict]) -> str | None:
    """The board's note when any of its training runs ran on a GPU, else None. A GPU trains in
    bf16 autocast and evaluates in fp32 on its own kernels: another arithmetic than the CPU
    boards', by more than their tolerances (docs/how-to/run-on-a-gpu.md, "The device effect"),
    so such a board is its own device class."""
    where = devices_by_seed(board, runs)
    gpus = sorted(d for d in where if d != "cpu")
    if not gpus:
        return None
    text = (f"Trained on a GPU, {'; '.join(f'{d}: seeds {seed_ranges(sorted(where[d]))}' for d in gpus)}, and evaluated on "
            "it in fp32: a device class of its own. The GPU's arithmetic moves a figure by more than the CPU classes' "
            "tolerances, so compare this board's rows with each other, not with a CPU board's.")
    if "cpu" in where:
        text += (f" Seeds {seed_ranges(sorted(where['cpu']))} trained on a CPU: this board mixes device classes, and "
                 "its paired differences compare two arithmetics.")
    return text
