"""The rates `posbench plan` turns FLOPs into CPU-hours with (suite.plan.estimate.CPU), and how
far each grid's estimate lands from the published snapshot's records.

For every grid the snapshot names, the grid is planned (suite.plan.grid.expand) and each planned
piece that the snapshot holds as done on the CPU is paired with the wall-clock seconds its record
states. Training runs: FLOPs by suite.plan.estimate.train_flops, one core's seconds by
suite.plan.estimate.train_seconds; evaluations: those with a FLOP count
(suite.plan.estimate.eval_flops), one core's seconds by suite.plan.estimate.eval_seconds. A piece planned by several grids counts once in the snapshot's
figures and in every grid that plans it.

    .venv/bin/python benchmarks/calibrate_plan.py              # the snapshot in leaderboard/
    .venv/bin/python benchmarks/calibrate_plan.py --snapshot FOLDER
    .venv/bin/python benchmarks/calibrate_plan.py --rungs grids/ladder-lm.yaml [--root PROJECT]
    .venv/bin/python benchmarks/calibrate_plan.py --eval-costs grids/ladder-lm.yaml grids/ladder-lm-question.yaml [--write]

``--eval-costs`` fits NoPE's evaluation law (seconds of one evaluated token against its FLOPs in
the matmuls and in attention: suite.plan.estimate.CpuClass.eval_scale, eval_exponent,
eval_attention_rate) to the CPU time of NoPE's evaluation
pieces of the grids named, at ``--sizes`` (tiny and small: the rungs the ladder has complete),
and prints each point's fitted / measured; with ``--write`` it rewrites
suite/plan/eval_overheads.yaml, each encoding's work over NoPE's from the same pieces (and from
the bench records for an encoding they lack).

``--rungs`` compares, per size of each grid named (a ladder's rungs), the CPU time the records of
the snapshot (or of PROJECT/results/, with --root) state with `posbench plan GRID --size S`'s
estimate on cores of their own, over the pieces the records hold as done. A record's CPU time is
its ``cpu_s`` (the process's own: another process sharing the cores does not add to it), or its
``wall_s`` if it is older than that field.

It prints the fit of one core's training step time (suite.plan.rate) to the bench records with
each point's fitted / measured; the snapshot's training and evaluation throughputs (sum of FLOPs
over sum of seconds) and its records' seconds over plan's one-core estimate (the shared pace);
then, per grid, its CPU-hours by the records and over them: plan's estimate on cores of their
own, the same at the shared pace (both at the constants of suite.plan.estimate, the ones
`posbench plan` uses now), and what one FLOP rate for every model (the snapshot's training
throughput, plan's rate before issue 57) gives.
"""

from __future__ import annotations

import argparse
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

import yaml

from suite.plan.estimate import (CPU, EVAL_OVERHEADS, eval_flops, eval_seconds, eval_token_flops, train_flops,
                                 train_seconds)
from suite.plan.grid import expand
from suite.plan.rate import fit, step_points
from suite.results.bench_records import bench_records
from suite.results.snapshot_files import EVALS, RUNS, read_bench, read_info, read_records
from suite.specs import Project, load_grid

ROOT = Path(__file__).resolve().parent.parent
EVAL_SIZES = ("tiny", "small")  # the ladder's rungs complete when the evaluation law was fitted
FIT_RECORDS = ROOT / "benchmarks" / "plan-rate-2026-11-27"  # the bench records made for the fit


def fit_records(snapshot: Path = ROOT / "leaderboard") -> list[dict]:
    """The bench records suite.plan.rate is fitted on: the snapshot's and those of FIT_RECORDS."""
    return read_bench(snapshot, read_info(snapshot)["bench"]) + bench_records(FIT_RECORDS)


def measured(snapshot: Path):
    """Per grid: [(id, kind, FLOPs, wall_s, seconds of one core by plan)] of its done CPU pieces
    that have a FLOP count."""
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
                share = _share_trained(record, run)
                pieces.append((run.run_id, "train", train_flops(run) * share, record.provenance.wall_s,
                               train_seconds(run) * share))
        for evaluation in plan.evaluations:
            record, flops = evals.get(evaluation.eval_id), eval_flops(evaluation)
            if record and record.status == "done" and flops > 0 and record.provenance.wall_s:
                pieces.append((evaluation.eval_id, "eval", flops, record.provenance.wall_s, eval_seconds(evaluation)))
        per_grid[name] = pieces
    return per_grid


def results_records(root: Path) -> tuple[dict, dict]:
    """The training and evaluation records of ``root``'s results/, by id."""
    from suite.results.records import scan

    project = Project(root)
    return ({r.id: r for r in scan(project.runs, "training_run").records},
            {e.id: e for e in scan(project.evals, "evaluation").records})


def snapshot_records(snapshot: Path) -> tuple[dict, dict]:
    """The training and evaluation records of a published snapshot, by id."""
    return ({r.id: r for r in read_records(snapshot / RUNS, "training_run")},
            {e.id: e for e in read_records(snapshot / EVALS, "evaluation")})


def _done_on_cpu(record) -> bool:
    """Whether a piece's record (None: not run) is done, and not on a GPU (another device class)."""
    return record is not None and record.status == "done" and getattr(record.provenance, "device", None) != "cuda"


def _share_trained(record, run) -> float:
    """The share of a run's steps its record's CPU time covers: a run resumed from a resume point
    (suite.training.trainer.ResumePoints) records the time of its last attempt alone."""
    resumed = (record.provenance.resumed_from_step or 0) if record is not None else 0
    resumed = min(max(resumed, 0), run.train.steps)  # a snapshot's record is a stranger's: no share outside [0, 1]
    return (run.train.steps - resumed) / run.train.steps if run.train.steps else 1.0


def rung_pieces(grid_file: Path, runs: dict, evals: dict):
    """Per size of the grid: (pieces planned, [(kind, seconds the record states, plan's seconds of
    one core)] of its done CPU pieces among ``runs`` and ``evals``, how many state their CPU time).
    A tuned grid's rates are chosen from the same records, as `posbench run` chose them."""
    from suite.plan.grid import load_plan
    from suite.plan.tuning import chooser

    grid, plan = load_plan(grid_file, Project(ROOT), tuned=chooser(runs.get))
    out = {}
    for size in grid.sizes:
        rung, pieces, with_cpu = plan.of_sizes([size.name]), [], 0
        for kind, record, plan_s in (
                *[("train", runs.get(r.run_id), train_seconds(r) * _share_trained(runs.get(r.run_id), r))
                  for r in rung.runs],
                *[("eval", evals.get(e.eval_id), eval_seconds(e)) for e in rung.evaluations]):
            if not _done_on_cpu(record):
                continue
            with_cpu += record.provenance.cpu_s is not None
            pieces.append((kind, record.provenance.cpu_s or record.provenance.wall_s, plan_s))
        out[size.name] = (len(rung.runs) + len(rung.evaluations), pieces, with_cpu)
    return out


def print_rungs(grids: list[Path], runs: dict, evals: dict) -> None:
    print(f"{'grid':<26} {'size':<8} {'done':>10} {'h by records':>13} {'plan (own cores)':>17} {'plan / records':>15}"
          f" {'training':>9} {'evaluation':>11}")
    for grid_file in grids:
        for size, (planned, pieces, with_cpu) in rung_pieces(grid_file, runs, evals).items():
            if not pieces:
                print(f"{grid_file.stem:<26} {size:<8} {0:>4} of {planned:<4} (no records)")
                continue
            hours, plan_h = sum(p[1] for p in pieces) / 3600, sum(p[2] for p in pieces) / 3600
            clock = "" if with_cpu == len(pieces) else f" ({len(pieces) - with_cpu} by wall time)"
            parts = [sum(p[2] for p in pieces if p[0] == kind) / sum(p[1] for p in pieces if p[0] == kind)
                     if any(p[0] == kind for p in pieces) else None for kind in ("train", "eval")]
            print(f"{grid_file.stem:<26} {size:<8} {len(pieces):>4} of {planned:<4} {hours:>13.3f} {plan_h:>17.3f} "
                  f"{plan_h / hours:>14.2f}x " + " ".join(f"{'-' if r is None else f'{r:.2f}x':>{w}}"
                                                          for r, w in zip(parts, (9, 11))) + clock)


def evaluation_pieces(grids: list[Path], runs: dict, evals: dict, sizes: tuple[str, ...]):
    """(planned evaluation, its record) for the done CPU evaluation pieces with a FLOP count and a
    CPU time of the grids' planned evaluations at ``sizes``, each once (a tuned grid's rates chosen
    from the same records, as `posbench run` chose them)."""
    from suite.plan.grid import load_plan
    from suite.plan.tuning import chooser

    seen = {}
    for grid_file in grids:
        _, plan = load_plan(grid_file, Project(ROOT), tuned=chooser(runs.get))
        for e in plan.of_sizes(list(sizes)).evaluations:
            record = evals.get(e.eval_id)
            if _done_on_cpu(record) and record.provenance.cpu_s and eval_flops(e):
                seen.setdefault(e.eval_id, (e, record))
    return list(seen.values())


@dataclass(frozen=True)
class EvalPoint:
    """NoPE's evaluation pieces of one size and scale: a token's FLOPs in the matmuls (2 N) and in
    attention (4 n_layers T d), and the median CPU seconds of a token."""

    shape: str
    matmul_flops: float
    attention_flops: float
    seconds: float
    records: int


def eval_points(pieces) -> list[EvalPoint]:
    """NoPE's evaluation law's points: per (size, scale), the median over its pieces of their CPU
    seconds per evaluated token."""
    found: dict[tuple, list] = {}
    for e, record in pieces:
        if e.encoding.name == "nope":
            key = (e.run.size.name, e.scale, *eval_token_flops(e))
            found.setdefault(key, []).append(record.provenance.cpu_s / e.settings["tokens"])
    return sorted((EvalPoint(f"{size} {scale}x", matmul, attention, statistics.median(seconds), len(seconds))
                   for (size, scale, matmul, attention), seconds in found.items()), key=lambda p: p.seconds)


def fit_eval_law(points: list[EvalPoint]) -> tuple[float, float, float]:
    """(scale, exponent, attention FLOP/s) of a token's seconds = scale x its matmul FLOPs **
    exponent + its attention FLOPs / rate: least squares on the logarithm of fitted / measured."""
    import numpy as np
    from scipy.optimize import least_squares

    m, a, y = (np.array([getattr(p, f) for p in points]) for f in ("matmul_flops", "attention_flops", "seconds"))

    def residuals(theta):
        log_scale, exponent, log_rate = theta
        return np.log(np.exp(log_scale) * m**exponent + a / np.exp(log_rate)) - np.log(y)

    fitted = least_squares(residuals, x0=[math.log(1e-10), 0.8, math.log(2e10)]).x
    return math.exp(fitted[0]), float(fitted[1]), math.exp(fitted[2])


def record_overheads(pieces) -> dict[str, dict[int, float]]:
    """encoding -> {scale: microseconds per token per layer and head over NoPE's}: per (size,
    scale), the median of its pieces' CPU seconds per token less NoPE's median there, over the
    size's layers x heads; then the mean over the sizes measured."""
    per_token: dict[tuple, list[float]] = {}
    shape = {}
    for e, record in pieces:
        key = (e.encoding.name, e.run.size.name, e.scale)
        per_token.setdefault(key, []).append(record.provenance.cpu_s / e.settings["tokens"])
        shape[e.run.size.name] = e.run.size.n_layers * e.run.size.n_heads
    by: dict[str, dict[int, list[float]]] = {}
    for (encoding, size, scale), seconds in per_token.items():
        nope = per_token.get(("nope", size, scale))
        if encoding != "nope" and nope:
            added = (statistics.median(seconds) - statistics.median(nope)) / shape[size] * 1e6
            by.setdefault(encoding, {}).setdefault(int(scale), []).append(added)
    return {enc: {scale: round(statistics.fmean(v), 3) for scale, v in sorted(scales.items())}
            for enc, scales in sorted(by.items())}


def bench_overheads(records: list[dict]) -> dict[str, dict[int, float]]:
    """encoding -> {1: ..., 16: ...}: from the CPU bench records timed on one thread (one sequence
    a batch), the median over the records of its seconds per evaluated token less NoPE's, over the
    bench shape's layers x heads, in microseconds; for the encodings measured at both scales."""
    found: dict[str, dict[int, list[float]]] = {}
    for record in records:
        cfg = record["config"]
        if cfg["device"] != "cpu" or cfg["threads"] != 1:
            continue
        heads = cfg["shape"]["n_layers"] * cfg["shape"]["n_heads"]
        rates = {(row["encoding"], m["scale"]): m["value"] for row in record["rows"] for m in row["metrics"]
                 if m["metric"] == "eval_tokens_per_s" and m["scale"] in (1, 16) and m.get("value")}
        for (encoding, scale), rate in rates.items():
            if encoding != "nope" and ("nope", scale) in rates:
                added = (1 / rate - 1 / rates[("nope", scale)]) / heads * 1e6
                found.setdefault(encoding, {}).setdefault(scale, []).append(added)
    return {enc: {scale: round(statistics.median(v), 3) for scale, v in sorted(by.items())}
            for enc, by in sorted(found.items()) if set(by) == {1, 16}}


def eval_overheads(pieces, bench: list[dict]) -> dict[str, dict[int, float]]:
    """The table plan reads: each encoding's work from the ladder's records where they hold it,
    else from the bench (one sequence a batch, at tiny: its figures at 1x over-state a batched
    evaluation's, whose per-call costs are shared by 32 windows)."""
    return bench_overheads(bench) | record_overheads(pieces)


def write_eval_overheads(table: dict, grids: list[Path], sizes: tuple[str, ...], path: Path = EVAL_OVERHEADS) -> None:
    names = " ".join(g.name for g in grids)
    head = ("# Written by benchmarks/calibrate_plan.py --eval-costs --write, never by hand: each encoding's\n"
            "# evaluation work over NoPE's, microseconds per token per layer and head, at each scale measured.\n"
            f"# From the published records of {names} at {', '.join(sizes)}\n"
            "# (their CPU time), and for an encoding the ladder does not train, from the published CPU bench\n"
            "# records at 1x and 16x. suite.plan.estimate.eval_seconds reads it.\n")
    path.write_text(head + yaml.safe_dump({"overheads": table}, sort_keys=True))


def eval_costs(grids: list[Path], sizes: tuple[str, ...], snapshot: Path, root: Path | None, write: bool) -> None:
    pieces = evaluation_pieces(grids, *(results_records(root) if root else snapshot_records(snapshot)), sizes)
    points = eval_points(pieces)
    scale, exponent, rate = fit_eval_law(points)
    print(f"NoPE's evaluation, a token: {scale:.4g} x matmul FLOPs ** {exponent:.4f} + attention FLOPs / "
          f"{rate / 1e9:.3g} GFLOP/s, over {len(points)} points (plan: {CPU.eval_scale:.4g}, {CPU.eval_exponent:.4f}, "
          f"{CPU.eval_attention_rate / 1e9:.3g})")
    for p in points:
        fitted = scale * p.matmul_flops**exponent + p.attention_flops / rate
        print(f"  {p.shape:<10} {p.matmul_flops:.3g} + {p.attention_flops:.3g} FLOPs {p.seconds * 1e6:.2f} us "
              f"({p.records} piece(s)): fitted / measured {fitted / p.seconds:.3f}")
    if write:
        table = eval_overheads(pieces, read_bench(snapshot, read_info(snapshot)["bench"]))
        write_eval_overheads(table, grids, sizes)
        print(f"{len(table)} encodings' evaluation work written to {EVAL_OVERHEADS.relative_to(ROOT)}")


def throughput(pieces, kind: str) -> tuple[float, float]:
    """(FLOP/s, seconds) over the pieces of one kind."""
    flops = sum(p[2] for p in pieces if p[1] == kind)
    seconds = sum(p[3] for p in pieces if p[1] == kind)
    return flops / seconds, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshot", type=Path, default=ROOT / "leaderboard")
    parser.add_argument("--rungs", type=Path, nargs="+", metavar="GRID", help="per size of these grids: records against plan")
    parser.add_argument("--root", type=Path, help="--rungs: read this project's results/ (default: the snapshot)")
    parser.add_argument("--eval-costs", type=Path, nargs="+", metavar="GRID",
                        help="fit NoPE's evaluation law and each encoding's evaluation work to these grids' records")
    parser.add_argument("--sizes", nargs="+", default=list(EVAL_SIZES), help="--eval-costs: at these sizes")
    parser.add_argument("--write", action="store_true", help="--eval-costs: rewrite suite/plan/eval_overheads.yaml")
    args = parser.parse_args()
    if args.eval_costs:
        return eval_costs(args.eval_costs, tuple(args.sizes), args.snapshot, args.root, args.write)
    if args.rungs:
        return print_rungs(args.rungs, *(results_records(args.root) if args.root else snapshot_records(args.snapshot)))
    points = step_points(fit_records())
    scale, exponent = fit(points)
    print(f"one core's training step: {scale:.4g} x FLOPs ** {exponent:.4f} s "
          f"(plan: {CPU.step_scale:.4g} x FLOPs ** {CPU.step_exponent:.4f})")
    for p in points:
        fitted = scale * p.flops**exponent
        print(f"  {p.shape:<18} {p.flops:.3g} FLOPs {p.seconds:.4f} s ({p.records} record(s), "
              f"{p.flops / p.seconds / 1e9:.1f} GFLOP/s): fitted / measured {fitted / p.seconds:.3f}")
    per_grid = measured(args.snapshot)
    every = list({p[0]: p for pieces in per_grid.values() for p in pieces}.values())
    (train, train_s), (evaluation, eval_s) = throughput(every, "train"), throughput(every, "eval")
    print(f"training: {train / 1e9:.1f} GFLOP/s over {train_s / 3600:.1f} h of {sum(p[1] == 'train' for p in every)} runs")
    print(f"evaluation: {evaluation / 1e9:.1f} GFLOP/s over {eval_s / 3600:.2f} h of {sum(p[1] == 'eval' for p in every)} "
          "evaluations with a FLOP count")
    print(f"shared pace: the records' seconds over plan's one-core seconds, {shared_pace(every):.2f} "
          f"(plan: {CPU.shared_pace:.1f})")
    print(f"{'grid':<22} {'pieces':>7} {'h by records':>13} {'own cores':>10} {'shared':>8} {'one rate':>9}")
    for name, pieces in per_grid.items():
        hours = sum(p[3] for p in pieces) / 3600
        if not hours:
            continue
        own = sum(p[4] for p in pieces) / 3600
        one_rate = sum(p[2] / (train if p[1] == "train" else evaluation) for p in pieces) / 3600
        print(f"{name:<22} {len(pieces):>7} {hours:>13.2f} {own / hours:>9.2f}x {own * CPU.shared_pace / hours:>7.2f}x "
              f"{one_rate / hours:>8.2f}x")


def shared_pace(pieces) -> float:
    """The records' seconds over plan's one-core seconds, summed over the pieces."""
    return sum(p[3] for p in pieces) / sum(p[4] for p in pieces)


if __name__ == "__main__":
    main()
