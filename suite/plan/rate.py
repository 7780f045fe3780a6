"""How long one core takes for a training step of a given size: the power law ``posbench plan``
uses (suite.plan.estimate.CPU), fitted to ``posbench bench`` records.

One FLOP rate for every model (the snapshot's 19.8 GFLOP/s) was the wall-clock pace of tiny
pieces, two at a time on a shared machine; one core's rate grows with the model, because a
small step spends more of its time outside the matmuls (Python, the optimizer, small kernels).
NoPE's training step on one thread (the bench's Lightning figure: CPU time of the process, the
median of its timed steps, so other processes on the cores do not enter it) measured 0.0188 s
at tiny (0.11M matmul weights, 43 GFLOP/s; the median of six records), 0.102 s at small (0.82M,
53), 0.304 s at medium (3.2M, 68) and 1.56 s at base (19M, 77), at 16 x 64 tokens
(benchmarks/plan-rate-2026-11-27/ and the published bench records). So:

    seconds of one training step = scale x (FLOPs of the step) ** exponent

fitted by least squares on the logarithms, one point per shape and recipe (the median over its
records): the records of the folder above and the published snapshot's CPU bench records (NoPE
at tiny, five of them), read by benchmarks/calibrate_plan.py (a plan reads no records); it lands within 6% of each point (2.752e-10 x FLOPs ** 0.8793). In
FLOPs of the step rather than in weights so that a recipe of other lengths and batches (the
tasks' 32 x 16 tokens) is costed by the same law, an extrapolation: only 16 x 64 was measured.
Every encoding is costed as NoPE: on the published bench board the ladder's encodings train at
0.96-1.3x NoPE's step time at tiny (CoPE and stick-breaking 1.8x, PaTH 2.9x), and at 3.2M
weights the ten core encodings at 0.87-1.02x (issue 57). A whole ``posbench run`` piece matches
the bench's step time within 2%, and its evaluation adds 2-6% (issue 57).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

CPU_CLOCK = "CPU time of the process"  # how the bench's CPU clock is named (suite.bench.probes.CLOCKS)


@dataclass(frozen=True)
class Point:
    """NoPE's median training step of one shape and recipe over the records that measured it."""

    shape: str
    flops: float  # FLOPs of one training step (suite.plan.estimate.step_flops)
    seconds: float  # CPU seconds of one step on one thread
    records: int


def step_points(records: list[dict]) -> list[Point]:
    """One point per (shape, length, batch) of the CPU records timed on one thread by the CPU clock."""
    from suite.plan.estimate import step_flops
    from suite.specs import SizeSpec

    found: dict[tuple, list[float]] = {}
    for record in records:
        cfg = record["config"]
        if cfg["device"] != "cpu" or cfg["threads"] != 1 or not (record.get("clock") or "").startswith(CPU_CLOCK):
            continue
        nope = next((r for r in record["rows"] if r["encoding"] == "nope"), None)
        tokens_per_s = nope and next((m["value"] for m in nope["metrics"]
                                      if m["metric"] == "train_tokens_per_s" and m["scale"] is None), None)
        if tokens_per_s:
            shape = cfg["shape"]
            key = (shape["name"], shape["d_model"], shape["n_layers"], shape["n_heads"], shape["d_ff"],
                   cfg["seq_len"], cfg["batch"])
            found.setdefault(key, []).append(cfg["batch"] * cfg["seq_len"] / tokens_per_s)
    points = []
    for (name, d, layers, heads, d_ff, seq_len, batch), seconds in found.items():
        size = SizeSpec(name=name, d_model=d, n_layers=layers, n_heads=heads, d_ff=d_ff)
        points.append(Point(f"{name} {batch}x{seq_len}", step_flops(size, batch, seq_len), statistics.median(seconds),
                            len(seconds)))
    return sorted(points, key=lambda p: p.flops)


def fit(points: list[Point]) -> tuple[float, float]:
    """(scale, exponent) of seconds = scale x flops ** exponent: least squares on the logarithms."""
    xs, ys = [math.log(p.flops) for p in points], [math.log(p.seconds) for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    exponent = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return math.exp(my - exponent * mx), exponent
