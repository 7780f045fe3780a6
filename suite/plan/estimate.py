"""What a plan would cost: CPU-hours on this project's CPU machine class, or GPU-hours where
the grid names a GPU (``device: cuda``). Both are estimates from FLOPs, never timed here:

    FLOPs of a training run   = steps x batch x L x (6 N + 12 n_layers L d)
    FLOPs of an evaluation    = tokens x (2 N + 4 n_layers T d)   at each eval length T = s L

with N the weights of every matmul (4 d^2 + 2 d d_ff per layer, the tied byte head
256 d once), the accounting ``posbench bench`` uses for model FLOP utilization (PaLM,
Chowdhery et al. 2022, App. B).

**CPU-hours** (a grid with ``device: cpu``, the default) are hours of one piece on one core
(every piece runs one thread, suite.core.numerics), on :data:`CPU`, so two workers on two
otherwise idle cores take about half of them in wall-clock time:

* training: each run's steps x the seconds one core takes for a step of its FLOPs, a power law
  fitted to NoPE's step time measured by ``posbench bench`` at 0.11M-19M matmul weights
  (suite.plan.rate: 43 GFLOP/s at tiny, 77 at base; a single FLOP rate over-stated a medium
  model's hours 3.2x);
* evaluation: its tokens at NoPE's seconds a token, ``eval_scale x (2 N) ** eval_exponent`` for
  the matmuls (a rate that grows with the model, as training's) plus ``4 n_layers T d /
  eval_attention_rate`` for attention, fitted to NoPE's evaluation pieces of the ladder's tiny
  and small rungs (their ``cpu_s``: a piece also reads, scores and writes), plus the evaluated
  encoding's own work over NoPE's: microseconds per token per layer and head at each scale
  (``eval_overheads.yaml``, linear in log2 of the scale between the scales measured). Both
  fitted by benchmarks/calibrate_plan.py. The work an encoding adds is per attention head (a
  bias, a rotation, a gate), not per weight, so it is an amount added, not a speed: the same
  per layer and head at tiny and small (ALiBi's at 16x 3.6 and 3.3 microseconds, FIRE's 24.2
  and 24.1), while NoPE's own seconds a token grow 3.2x-3.7x; a speed measured at tiny (the
  bench's, before) made small's evaluations 2.2x too dear. Evaluations through lm-eval (the synthetic tasks) and
  GLUE-style fine-tuning have no FLOP count and are not counted.

The published snapshot (``leaderboard/`` as published 2026-11-27 08:30 UTC: fifteen grids, 1,704
runs, 35 CPU-hours by their records; benchmarks/calibrate_plan.py) took 2.1x those hours: its
pieces shared a 2-core machine with other work, and whole grids ran at 0.25x-0.85x one core's
rate (the default job's NoPE runs at 12-25 thousand tokens/s, the language-modelling board's
mostly at 50-54, on the same machine class). So plan states both: the hours of dedicated cores,
and at :attr:`CpuClass.shared_pace` the hours the snapshot's pace implies on the shared machine;
the second lands within 0.53x-1.78x of each published grid's records (within 0.7x-1.4x for ten
of the fifteen: per grid, docs/benchmarks.md).

**GPU-hours** (``device: cuda``) = FLOPs / (peak x MFU) / 3600, with the vendors' dense bf16
tensor-core peaks and an assumed MFU (the 40% issue 11 sets as the GPU target): no GPU was
available to measure tokens per second at the paper sizes. A CPU grid states no GPU-hours,
a GPU grid no CPU-hours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

VOCAB = 256  # bytes
EVAL_OVERHEADS = Path(__file__).with_name("eval_overheads.yaml")


@dataclass(frozen=True)
class Device:
    name: str
    peak_flops: float  # dense bf16, FLOP/s
    source: str


DEVICES = (
    Device("A100 80GB", 312e12, "NVIDIA A100 datasheet: 312 TFLOP/s dense BF16 tensor core"),
    Device("H100 SXM", 989e12, "NVIDIA H100 datasheet: 989 TFLOP/s dense BF16 tensor core (SXM5)"),
)
ASSUMED_MFU = 0.40


@dataclass(frozen=True)
class CpuClass:
    name: str
    step_scale: float  # seconds of a training step = step_scale x (its FLOPs) ** step_exponent, one core
    step_exponent: float
    eval_scale: float  # seconds of NoPE evaluating a token = eval_scale x (its matmul FLOPs) ** eval_exponent
    eval_exponent: float  # ... + its attention FLOPs / eval_attention_rate, one core
    eval_attention_rate: float
    shared_pace: float  # the published snapshot's records' seconds over these estimates of its pieces
    source: str

    def step_seconds(self, flops: float) -> float:
        return self.step_scale * flops**self.step_exponent

    def eval_token_seconds(self, matmul_flops: float, attention_flops: float) -> float:
        """Seconds of one core evaluating a token of NoPE's of these FLOPs in the matmuls and in attention."""
        return self.eval_scale * matmul_flops**self.eval_exponent + attention_flops / self.eval_attention_rate


CPU = CpuClass("the 2-core AMD EPYC (AVX2) that computed leaderboard/, one thread a piece", 2.752e-10, 0.8793,
               4.175e-9, 0.6172, 60.1e9, 2.1,
               "training: suite.plan.rate.fit of NoPE's bench step times (benchmarks/plan-rate-2026-11-27/ and "
               "the published bench records); evaluation: NoPE's evaluation pieces of the ladder's tiny and small "
               "rungs (their cpu_s) and each encoding's work over NoPE's (eval_overheads.yaml); shared pace: "
               "leaderboard/ as published 2026-11-27 08:30 UTC (benchmarks/calibrate_plan.py)")


@cache
def eval_overheads() -> dict[str, dict[int, float]]:
    """encoding -> {scale: microseconds per token per layer and head over NoPE's} (eval_overheads.yaml)."""
    table = yaml.safe_load(EVAL_OVERHEADS.read_text())
    return {name: {int(k): float(v) for k, v in by_scale.items()} for name, by_scale in (table["overheads"] or {}).items()}


def eval_overhead(encoding: str, scale: float) -> float:
    """Microseconds per token per layer and head an encoding adds to NoPE's evaluation at ``scale``:
    linear in log2 of the scale between the scales measured, the ends beyond; 0 for an encoding
    never measured."""
    by_scale = eval_overheads().get(encoding)
    if not by_scale:
        return 0.0
    points = sorted((math.log2(k), v) for k, v in by_scale.items())
    x = math.log2(scale)
    if x <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return points[-1][1]


def matmul_params(size) -> int:
    """N: the weights every token multiplies (attention and MLP of every layer, the head)."""
    d, d_ff = size.d_model, size.d_ff
    return size.n_layers * (4 * d * d + 2 * d * d_ff) + VOCAB * d


def step_flops(size, batch: int, seq_len: int) -> float:
    """FLOPs of one training step of ``batch`` sequences of ``seq_len`` tokens."""
    return batch * seq_len * (6 * matmul_params(size) + 12 * size.n_layers * seq_len * size.d_model)


def train_flops(run) -> float:
    return run.train.steps * step_flops(run.size, run.train.batch_size, run.train.seq_len)


def train_seconds(run, cpu: CpuClass = CPU) -> float:
    """Seconds of one core for the run's steps (suite.plan.rate)."""
    return run.train.steps * cpu.step_seconds(step_flops(run.size, run.train.batch_size, run.train.seq_len))


def eval_token_flops(evaluation) -> tuple[float, float]:
    """A token's FLOPs at the evaluation's length T, in the matmuls (2 N) and in attention (4 n_layers T d)."""
    size = evaluation.run.size
    T = evaluation.scale * evaluation.run.base_len
    return 2 * matmul_params(size), 4 * size.n_layers * T * size.d_model


def eval_flops(evaluation) -> float:
    """Extrapolation and rolling evaluations: their tokens at their length; others: 0."""
    tokens = evaluation.settings.get("tokens") if isinstance(evaluation.settings, dict) else None
    if tokens is None or evaluation.scale is None:
        return 0.0
    return tokens * sum(eval_token_flops(evaluation))


def eval_seconds(evaluation, cpu: CpuClass = CPU) -> float:
    """Seconds of one core for an evaluation with a FLOP count (0 for one without): its tokens at
    NoPE's seconds a token for the model's shape at the evaluation length, plus the evaluated
    encoding's work over NoPE's for each token, layer and head (none below 0: an evaluation that
    does not apply, a learned table past its length, costs next to nothing)."""
    flops = eval_flops(evaluation)
    if not flops:
        return 0.0
    tokens, size = evaluation.settings["tokens"], evaluation.run.size
    nope = tokens * cpu.eval_token_seconds(*eval_token_flops(evaluation))
    added = tokens * size.n_layers * size.n_heads * eval_overhead(evaluation.encoding.name, evaluation.scale) * 1e-6
    return max(nope + added, 0.0)


@dataclass(frozen=True)
class Estimate:
    train: float  # FLOPs of the training runs
    evaluation: float = 0.0  # FLOPs of the evaluations that have a count
    device: str = "cpu"  # the grid's: "cpu" states CPU-hours, "cuda" GPU-hours
    train_s: float = 0.0  # seconds of one core for the training runs (train_seconds)
    eval_s: float = 0.0  # seconds of one core for the evaluations with a FLOP count (eval_seconds)

    @property
    def flops(self) -> float:
        return self.train + self.evaluation

    def gpu_hours(self, device: Device, mfu: float = ASSUMED_MFU) -> float:
        return self.flops / (device.peak_flops * mfu) / 3600

    def cpu_hours(self, cpu: CpuClass = CPU) -> float:
        """Hours of one core: nothing else on it."""
        return (self.train_s + self.eval_s) / 3600

    def shared_hours(self, cpu: CpuClass = CPU) -> float:
        """At the pace of the published snapshot's pieces on the shared machine."""
        return self.cpu_hours(cpu) * cpu.shared_pace

    def lines(self) -> list[str]:
        if self.device == "cuda":
            return [f"{_hours(self.gpu_hours(d))} GPU-hours on {d.name} ({d.peak_flops / 1e12:.0f} TFLOP/s bf16 dense "
                    f"x assumed {ASSUMED_MFU:.0%} MFU)" for d in DEVICES]
        return [f"{_hours(self.cpu_hours())} CPU-hours on {CPU.name}, on cores of their own (training at one "
                f"core's step time measured by posbench bench, evaluation at NoPE's measured rate plus each encoding's "
                f"measured work); "
                f"{_hours(self.shared_hours())} at the pace of the published snapshot's pieces on the shared machine "
                f"({CPU.shared_pace:.1f}x)"]

    def headline(self, of: str = "the whole grid") -> str:
        kind = "GPU" if self.device == "cuda" else "CPU"
        how = ("from FLOPs and a vendor peak at an assumed MFU" if self.device == "cuda" else
               "from FLOPs at one core's measured rate for the model's size; "
               "lm-eval task evaluations and GLUE-style fine-tuning not counted")
        return f"estimated {kind} cost of {of} ({how}; an estimate, not a timing of this grid: " \
               "suite/plan/estimate.py): " + \
            "; ".join(self.lines())


def _hours(hours: float) -> str:
    return f"{hours:,.1f}" if hours >= 10 else f"{hours:.2f}"


def estimate(runs, evaluations, device: str = "cpu") -> Estimate:
    evaluations = list(evaluations)
    return Estimate(sum(train_flops(r) for r in runs), sum(eval_flops(e) for e in evaluations), device,
                    sum(train_seconds(r) for r in runs), sum(eval_seconds(e) for e in evaluations) if device == "cpu" else 0.0)
