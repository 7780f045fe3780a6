"""The throughputs `posbench plan` turns FLOPs into CPU-hours with (suite.plan.estimate.CPU),
measured on the published snapshot, and how far each grid's estimate lands from its records.

For every grid the snapshot names, the grid is planned (suite.plan.grid.expand) and each planned
piece that the snapshot holds as done on the CPU is paired with the wall-clock seconds its record
states. Training runs: FLOPs by suite.plan.estimate.train_flops; evaluations: those with a FLOP
count (suite.plan.estimate.eval_flops). A piece planned by several grids counts once in the
throughputs and in every grid that plans it.

    .venv/bin/python benchmarks/calibrate_plan.py              # the snapshot in leaderboard/
    .venv/bin/python benchmarks/calibrate_plan.py --snapshot FOLDER

It prints the training and evaluation throughputs (sum of FLOPs over sum of seconds), then, per
grid, its CPU-hours by the records and the estimate over them at the constants in
suite.plan.estimate (the ones `posbench plan` uses now) and at the throughputs just measured.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from suite.plan.estimate import CPU, eval_flops, train_flops
from suite.plan.grid import expand
from suite.results.snapshot_files import EVALS, RUNS, read_info, read_records
from suite.specs import Project, load_grid

ROOT = Path(__file__).resolve().parent.parent


def measured(snapshot: Path):
    """Per grid: [(id, kind, FLOPs, wall_s)] of its done CPU pieces that have a FLOP count."""
    runs = {r.id: r for r in read_records(snapshot / RUNS, "training_run")}
    evals = {e.id: e for e in read_records(snapshot / EVALS, "evaluation")}
    project = Project(ROOT)
    per_grid = {}
    for name in read_info(snapshot)["grids"]:
        plan = expand(load_grid(ROOT / "grids" / f"{name}.yaml", project))
        pieces = []
        for run in plan.runs:
            record = runs.get(run.run_id)
            if record and record.status == "done" and record.provenance.device == "cpu" and record.provenance.wall_s:
                pieces.append((run.run_id, "train", train_flops(run), record.provenance.wall_s))
        for evaluation in plan.evaluations:
            record, flops = evals.get(evaluation.eval_id), eval_flops(evaluation)
            if record and record.status == "done" and flops > 0 and record.provenance.wall_s:
                pieces.append((evaluation.eval_id, "eval", flops, record.provenance.wall_s))
        per_grid[name] = pieces
    return per_grid


def throughput(pieces, kind: str) -> tuple[float, float]:
    """(FLOP/s, seconds) over the pieces of one kind."""
    flops = sum(p[2] for p in pieces if p[1] == kind)
    seconds = sum(p[3] for p in pieces if p[1] == kind)
    return flops / seconds, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshot", type=Path, default=ROOT / "leaderboard")
    args = parser.parse_args()
    per_grid = measured(args.snapshot)
    every = list({p[0]: p for pieces in per_grid.values() for p in pieces}.values())
    (train, train_s), (evaluation, eval_s) = throughput(every, "train"), throughput(every, "eval")
    print(f"training: {train / 1e9:.1f} GFLOP/s over {train_s / 3600:.1f} h of {sum(p[1] == 'train' for p in every)} runs")
    print(f"evaluation: {evaluation / 1e9:.1f} GFLOP/s over {eval_s / 3600:.2f} h of {sum(p[1] == 'eval' for p in every)} "
          "evaluations with a FLOP count")
    print(f"{'grid':<22} {'pieces':>7} {'h by records':>13} {'estimate now':>13} {'estimate at these':>18}")
    for name, pieces in per_grid.items():
        hours = sum(p[3] for p in pieces) / 3600
        if not hours:
            continue

        def estimate(train_rate: float, eval_rate: float) -> float:
            return sum(p[2] / (train_rate if p[1] == "train" else eval_rate) for p in pieces) / 3600

        print(f"{name:<22} {len(pieces):>7} {hours:>13.2f} {estimate(CPU.train_flops, CPU.eval_flops) / hours:>12.2f}x "
              f"{estimate(train, evaluation) / hours:>17.2f}x")


if __name__ == "__main__":
    main()
