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
    .venv/bin/python benchmarks/calibrate_plan.py --write-eval-speeds     # suite/plan/eval_speeds.yaml
    .venv/bin/python benchmarks/calibrate_plan.py --efficiency grids/ladder-lm.yaml ...

``--write-eval-speeds`` rewrites each encoding's evaluation speed against NoPE's at 1x and 16x
from the snapshot's CPU bench records; ``--efficiency`` prints what NoPE's evaluation pieces of
the grids named sustain against the training law's rate (suite.plan.estimate.CpuClass.eval_efficiency).

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
import statistics
from pathlib import Path

import yaml

from suite.plan.estimate import CPU, EVAL_SPEEDS, eval_flops, eval_seconds, train_flops, train_seconds
from suite.plan.grid import expand
from suite.plan.rate import fit, step_points
from suite.results.bench_records import bench_records
from suite.results.snapshot_files import EVALS, RUNS, read_bench, read_info, read_records
from suite.specs import Project, load_grid

ROOT = Path(__file__).resolve().parent.parent
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
                pieces.append((run.run_id, "train", train_flops(run), record.provenance.wall_s, train_seconds(run)))
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
                *[("train", runs.get(r.run_id), train_seconds(r)) for r in rung.runs],
                *[("eval", evals.get(e.eval_id), eval_seconds(e)) for e in rung.evaluations]):
            if record is None or record.status != "done" or getattr(record.provenance, "device", None) == "cuda":
                continue
            with_cpu += record.provenance.cpu_s is not None
            pieces.append((kind, record.provenance.cpu_s or record.provenance.wall_s, plan_s))
        out[size.name] = (len(rung.runs) + len(rung.evaluations), pieces, with_cpu)
    return out


def print_rungs(grids: list[Path], runs: dict, evals: dict) -> None:
    print(f"{'grid':<26} {'size':<8} {'done':>10} {'h by records':>13} {'plan (own cores)':>17} {'plan / records':>15}")
    for grid_file in grids:
        for size, (planned, pieces, with_cpu) in rung_pieces(grid_file, runs, evals).items():
            if not pieces:
                print(f"{grid_file.stem:<26} {size:<8} {0:>4} of {planned:<4} (no records)")
                continue
            hours, plan_h = sum(p[1] for p in pieces) / 3600, sum(p[2] for p in pieces) / 3600
            clock = "" if with_cpu == len(pieces) else f" ({len(pieces) - with_cpu} by wall time)"
            print(f"{grid_file.stem:<26} {size:<8} {len(pieces):>4} of {planned:<4} {hours:>13.3f} {plan_h:>17.3f} "
                  f"{plan_h / hours:>14.2f}x{clock}")


def eval_speeds(records: list[dict]) -> dict[str, dict[int, float]]:
    """encoding -> {scale: the median over the CPU bench records timed on one thread of its
    evaluation tokens/s over NoPE's} at 1x and 16x, for the encodings measured at both."""
    found: dict[str, dict[int, list[float]]] = {}
    for record in records:
        cfg = record["config"]
        if cfg["device"] != "cpu" or cfg["threads"] != 1:
            continue
        for row in record["rows"]:
            for m in row["metrics"]:
                if m["metric"] == "eval_tokens_per_s" and m["scale"] in (1, 16) and m.get("vs_nope"):
                    found.setdefault(row["encoding"], {}).setdefault(m["scale"], []).append(m["vs_nope"])
    return {enc: {scale: round(statistics.median(v), 3) for scale, v in sorted(by.items())}
            for enc, by in sorted(found.items()) if set(by) == {1, 16}}


def eval_efficiency(grids: list[Path], runs: dict, evals: dict, sizes: tuple[str, ...] = ("tiny",)) -> tuple[float, int]:
    """The median over NoPE's done evaluation pieces (with their cpu_s) of the grids' planned
    evaluations at ``sizes`` (plan's constant: tiny's) of: their FLOP rate over the training
    law's rate at their batch's FLOPs, at CPU's current efficiency divided out. Returns
    (efficiency, pieces)."""
    from suite.plan.grid import load_plan
    from suite.plan.tuning import chooser

    ratios = []
    for grid_file in grids:
        _, plan = load_plan(grid_file, Project(ROOT), tuned=chooser(runs.get))
        for e in plan.of_sizes(list(sizes)).evaluations:
            record = evals.get(e.eval_id)
            if (e.encoding.name == "nope" and record and record.status == "done" and record.provenance.cpu_s
                    and eval_flops(e)):
                ratios.append(eval_seconds(e) / record.provenance.cpu_s * CPU.eval_efficiency)
    return statistics.median(ratios), len(ratios)


def write_eval_speeds(speeds: dict, path: Path = EVAL_SPEEDS) -> None:
    head = ("# Written by benchmarks/calibrate_plan.py --write-eval-speeds from the CPU bench records of the\n"
            "# published snapshot (one thread): each encoding's evaluation tokens/s over NoPE's at 1x and 16x,\n"
            "# the median over the records. suite.plan.estimate.eval_seconds reads it; not edited by hand.\n")
    path.write_text(head + yaml.safe_dump({"speeds": speeds}, sort_keys=True))


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
    parser.add_argument("--write-eval-speeds", action="store_true",
                        help="rewrite suite/plan/eval_speeds.yaml from the snapshot's CPU bench records")
    parser.add_argument("--efficiency", type=Path, nargs="+", metavar="GRID",
                        help="fit the evaluation efficiency to NoPE's evaluation pieces of these grids")
    parser.add_argument("--sizes", nargs="+", default=["tiny"], help="--efficiency: at these sizes (default tiny)")
    args = parser.parse_args()
    if args.write_eval_speeds:
        speeds = eval_speeds(read_bench(args.snapshot, read_info(args.snapshot)["bench"]))
        write_eval_speeds(speeds)
        return print(f"{len(speeds)} encodings' evaluation speeds written to {EVAL_SPEEDS.relative_to(ROOT)}")
    if args.efficiency:
        efficiency, n = eval_efficiency(args.efficiency, *(results_records(args.root) if args.root
                                                             else snapshot_records(args.snapshot)), tuple(args.sizes))
        return print(f"evaluation efficiency {efficiency:.3f} over {n} NoPE evaluation pieces (plan: {CPU.eval_efficiency})")
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
