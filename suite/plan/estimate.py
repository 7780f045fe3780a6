"""What a plan would cost: CPU-hours on this project's CPU machine class, or GPU-hours where
the grid names a GPU (``device: cuda``). Both are estimates from FLOPs, never timed here:

    FLOPs of a training run   = steps x batch x L x (6 N + 12 n_layers L d)
    FLOPs of an evaluation    = tokens x (2 N + 4 n_layers T d)   at each eval length T = s L

with N the weights of every matmul (4 d^2 + 2 d d_ff per layer, the tied byte head
256 d once), the accounting ``posbench bench`` uses for model FLOP utilization (PaLM,
Chowdhery et al. 2022, App. B).

**CPU-hours** (a grid with ``device: cpu``, the default) = training FLOPs / the training
throughput + evaluation FLOPs / the evaluation throughput, over 3,600, on :data:`CPU`: hours
of one piece on one core (every piece runs one thread, suite.core.numerics), so two workers
on two cores take about half of it in wall-clock time. The throughputs are *measured*, not
assumed, by ``benchmarks/calibrate_plan.py``: the FLOPs of every training run (and every
evaluation with a FLOP count) of the published snapshot (``leaderboard/`` as published
2026-11-26 17:21 UTC: its fifteen grids, 1,066 runs and 6,585 such evaluations, 21 CPU-hours)
over the wall-clock seconds their records state, on the machine that computed it (2-core AMD
EPYC, AVX2, mostly two pieces at once). That is the machine class and the whole piece (batches,
validation, checkpoint, Lightning), at the shapes grids actually use; the bench's tokens/s times
the model alone and exists for one shape only, so it gives each encoding's *relative* cost (the
cost board), not a grid's hours. The one figure averages over encodings and shapes, so a grid's
estimate is within about 0.5x-1.8x of its records' CPU time (modern 0.54x, extension 0.68x,
quick 0.71x, tasks 0.72x, diagnostics 0.80x, flip-flop 0.99x, power-lm-tiny-4l 1.35x,
power-lm-tiny and zoo 1.60x, glue-probe 1.83x): encodings on an explicit attention path cost up
to 2-3x a fused one (the bench board), and evaluations through lm-eval (the synthetic tasks) and
GLUE-style fine-tuning have no FLOP count and are not counted. The constants of 2026-11-25 (10.2
and 6.6 GFLOP/s, from seven grids) over-estimated every grid of the larger snapshot, by
1.07x-3.57x.

**GPU-hours** (``device: cuda``) = FLOPs / (peak x MFU) / 3600, with the vendors' dense bf16
tensor-core peaks and an assumed MFU (the 40% issue 11 sets as the GPU target): no GPU was
available to measure tokens per second at the paper sizes. A CPU grid states no GPU-hours,
a GPU grid no CPU-hours.
"""

from __future__ import annotations

from dataclasses import dataclass

VOCAB = 256  # bytes


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
    train_flops: float  # FLOP/s a training piece sustains (one thread), over its whole wall-clock time
    eval_flops: float  # FLOP/s an evaluation piece sustains
    source: str


CPU = CpuClass("the 2-core AMD EPYC (AVX2) that computed leaderboard/, one thread a piece", 19.8e9, 15.6e9,
               "leaderboard/ as published 2026-11-26 17:21 UTC (benchmarks/calibrate_plan.py): 20.1 CPU-hours "
               "of training runs sustained 19.8 GFLOP/s, 1.15 of evaluations with a FLOP count 15.6 GFLOP/s "
               "(sum of FLOPs over sum of the records' wall_s)")


def matmul_params(size) -> int:
    """N: the weights every token multiplies (attention and MLP of every layer, the head)."""
    d, d_ff = size.d_model, size.d_ff
    return size.n_layers * (4 * d * d + 2 * d * d_ff) + VOCAB * d


def train_flops(run) -> float:
    recipe, size = run.train, run.size
    per_token = 6 * matmul_params(size) + 12 * size.n_layers * recipe.seq_len * size.d_model
    return recipe.steps * recipe.batch_size * recipe.seq_len * per_token


def eval_flops(evaluation) -> float:
    """Extrapolation and rolling evaluations: their tokens at their length; others: 0."""
    tokens = evaluation.settings.get("tokens") if isinstance(evaluation.settings, dict) else None
    if tokens is None or evaluation.scale is None:
        return 0.0
    run = evaluation.run
    T = evaluation.scale * run.base_len
    return tokens * (2 * matmul_params(run.size) + 4 * run.size.n_layers * T * run.size.d_model)


@dataclass(frozen=True)
class Estimate:
    train: float  # FLOPs of the training runs
    evaluation: float = 0.0  # FLOPs of the evaluations that have a count
    device: str = "cpu"  # the grid's: "cpu" states CPU-hours, "cuda" GPU-hours

    @property
    def flops(self) -> float:
        return self.train + self.evaluation

    def gpu_hours(self, device: Device, mfu: float = ASSUMED_MFU) -> float:
        return self.flops / (device.peak_flops * mfu) / 3600

    def cpu_hours(self, cpu: CpuClass = CPU) -> float:
        return (self.train / cpu.train_flops + self.evaluation / cpu.eval_flops) / 3600

    def lines(self) -> list[str]:
        if self.device == "cuda":
            return [f"{_hours(self.gpu_hours(d))} GPU-hours on {d.name} ({d.peak_flops / 1e12:.0f} TFLOP/s bf16 dense "
                    f"x assumed {ASSUMED_MFU:.0%} MFU)" for d in DEVICES]
        return [f"{_hours(self.cpu_hours())} CPU-hours on {CPU.name} (training at {CPU.train_flops / 1e9:.1f}, "
                f"evaluation at {CPU.eval_flops / 1e9:.1f} GFLOP/s, what the published snapshot's pieces sustained)"]

    def headline(self) -> str:
        kind = "GPU" if self.device == "cuda" else "CPU"
        how = ("from FLOPs and a vendor peak at an assumed MFU" if self.device == "cuda" else
               "from FLOPs at the throughput the published snapshot's pieces sustained on this machine class; "
               "lm-eval task evaluations and GLUE-style fine-tuning not counted")
        return f"estimated {kind} cost of the whole grid ({how}; an estimate, not a timing of this grid: " \
               "suite/plan/estimate.py): " + \
            "; ".join(self.lines())


def _hours(hours: float) -> str:
    return f"{hours:,.1f}" if hours >= 10 else f"{hours:.2f}"


def estimate(runs, evaluations, device: str = "cpu") -> Estimate:
    return Estimate(sum(train_flops(r) for r in runs), sum(eval_flops(e) for e in evaluations), device)
