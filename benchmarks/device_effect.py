"""The device effect: one rung of the ladder trained and evaluated on a CPU and on a GPU.

The tiny rung of grids/ladder-lm-question.yaml at seeds 0-2 (NoPE, RoPE with NTK-aware and YaRN on
its checkpoints, ALiBi; the three-rate learning-rate sweep at seed 0) was run again on a lent GPU by
scripts/gpu/ladder_rung.sh: the same run ids as the published CPU records, trained in bf16
autocast and evaluated in fp32 on the GPU instead of fp32 on one CPU thread. This script pairs the
two record sets and prints, as markdown:

1. the sweep: each rate's validation loss (seed 0, nats per byte: what suite.plan.tuning chooses on)
   and the rate each device chose;
2. the paired figures: bits per byte GPU minus CPU, per scale, over every evaluation both have,
   beside the CPU's spread between seeds (what a board's interval is made of);
3. the ordering at 16x on each device (mean over seeds 0-2 at each device's chosen rate).

    .venv/bin/python benchmarks/device_effect.py benchmarks/gpu-h200-2026-11-28-ladder

The GPU records are read from FOLDER/tiny-runs.jsonl.gz and FOLDER/tiny-evals.jsonl.gz, the CPU
records from the published snapshot (leaderboard/); both are checked as records on the way in.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from suite.plan.tuning import validation_loss  # noqa: E402
from suite.results.snapshot_files import EVALS, RUNS, read_records  # noqa: E402

SIZE, TASK, STEPS = "tiny", "lm", 600
ROWS = ("nope", "rope", "rope-ntk", "yarn", "alibi")


def bpb(record) -> float | None:
    return next((m.value for m in record.metrics if m.metric == "bpb"), None)


def rung_runs(runs) -> dict[str, object]:
    """run_id -> the tuned tiny-rung runs (600 steps, a learning-rate sweep) of the question rows."""
    return {r.run_id: r for r in runs if r.size == SIZE and r.task == TASK and r.status == "done"
            and r.run["train"]["steps"] == STEPS and r.run["train"].get("lr_sweep") and r.encoding in ROWS}


def figures(evals, runs) -> dict[str, tuple]:
    """eval_id -> (encoding, seed, scale, lr, bpb) of the done evaluations on those runs."""
    return {e.eval_id: (e.encoding, e.seed, e.scale, runs[e.run_id].run["train"]["lr"], bpb(e))
            for e in evals if e.run_id in runs and e.status == "done" and e.evaluator == "extrapolation"}


def chosen(runs) -> dict[str, float]:
    """trained encoding -> the rate its seeds 1-2 trained at (the sweep's choice)."""
    return {r.encoding: r.run["train"]["lr"] for r in runs.values() if r.seed > 0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the GPU records: tiny-runs.jsonl.gz, tiny-evals.jsonl.gz")
    parser.add_argument("--snapshot", type=Path, default=ROOT / "leaderboard")
    args = parser.parse_args()
    gpu_runs = rung_runs(read_records(args.folder / "tiny-runs.jsonl.gz", "training_run"))
    cpu_runs = rung_runs(read_records(args.snapshot / RUNS, "training_run"))
    cpu_runs = {i: r for i, r in cpu_runs.items() if r.seed in (0, 1, 2)}
    gpu = figures(read_records(args.folder / "tiny-evals.jsonl.gz", "evaluation"), gpu_runs)
    cpu = figures(read_records(args.snapshot / EVALS, "evaluation"), cpu_runs)

    print("## The sweep (seed 0): validation loss, nats per byte\n")
    print("| row | rate | CPU | GPU |\n| --- | ---: | ---: | ---: |")
    loss = {(device, r.encoding, r.run["train"]["lr"]): validation_loss(r)
            for device, runs in (("cpu", cpu_runs), ("gpu", gpu_runs)) for r in runs.values() if r.seed == 0}
    for enc in ("nope", "rope", "alibi"):
        for lr in sorted({k[2] for k in loss if k[1] == enc}):
            print(f"| {enc} | {lr:g} | {loss.get(('cpu', enc, lr), float('nan')):.4f} | "
                  f"{loss.get(('gpu', enc, lr), float('nan')):.4f} |")
    cpu_choice, gpu_choice = chosen(cpu_runs), chosen(gpu_runs)
    print("\nChosen rates: " + "; ".join(f"{enc} {cpu_choice.get(enc, float('nan')):g} on the CPU, "
                                         f"{gpu_choice.get(enc, float('nan')):g} on the GPU" for enc in ("nope", "rope", "alibi")))

    print("\n## GPU minus CPU, bits per byte, over the evaluations both have\n")
    spread = defaultdict(list)  # (encoding, scale) -> the CPU's per-seed figures at its chosen rate
    for enc, seed, scale, lr, value in cpu.values():
        if seed in (0, 1, 2) and lr == cpu_choice.get({"rope-ntk": "rope", "yarn": "rope"}.get(enc, enc)):
            spread[(enc, scale)].append(value)
    by_scale = defaultdict(list)
    for eval_id in gpu.keys() & cpu.keys():
        by_scale[gpu[eval_id][2]].append(gpu[eval_id][4] - cpu[eval_id][4])
    print("| scale | pairs | mean | largest absolute | CPU's median between-seed SD |\n| ---: | ---: | ---: | ---: | ---: |")
    for scale in sorted(by_scale):
        diffs = by_scale[scale]
        sds = [statistics.stdev(v) for (e, s), v in spread.items() if s == scale and len(v) > 1]
        print(f"| {scale}x | {len(diffs)} | {statistics.fmean(diffs):+.4f} | {max(map(abs, diffs)):.4f} | "
              f"{statistics.median(sds):.4f} |")

    print("\n## The ordering at 16x (mean over seeds 0-2 at each device's chosen rate)\n")
    print("| row | CPU | GPU |\n| --- | ---: | ---: |")
    means = {}
    for device, figs, choice in (("cpu", cpu, cpu_choice), ("gpu", gpu, gpu_choice)):
        for enc in ROWS:
            trained = {"rope-ntk": "rope", "yarn": "rope"}.get(enc, enc)
            vals = [f[4] for f in figs.values() if f[0] == enc and f[2] == 16 and f[3] == choice.get(trained)
                    and f[1] in (0, 1, 2)]
            means[(device, enc)] = statistics.fmean(vals) if len(vals) == 3 else None
    for enc in ROWS:
        print(f"| {enc} | " + " | ".join("-" if means[(d, enc)] is None else f"{means[(d, enc)]:.3f}"
                                          for d in ("cpu", "gpu")) + " |")
    for device in ("cpu", "gpu"):
        order = sorted((v, e) for (d, e), v in means.items() if d == device and v is not None)
        print(f"\n{device.upper()} order at 16x (lowest first): " + " < ".join(e for _, e in order))
    return 0


if __name__ == "__main__":
    sys.exit(main())
