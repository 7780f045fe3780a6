"""What a plan would cost on GPUs: an estimate, from FLOPs and a stated device peak.

No GPU was available to measure tokens per second at the paper sizes, so ``posbench plan``
prints GPU-hours derived, not measured:

    FLOPs of a training run   = steps x batch x L x (6 N + 12 n_layers L d)
    FLOPs of an evaluation    = tokens x (2 N + 4 n_layers T d)   at each eval length T = s L
    GPU-hours                 = FLOPs / (peak x MFU) / 3600

with N the weights of every matmul (4 d^2 + 2 d d_ff per layer, the tied byte head
256 d once), the formula ``posbench bench`` uses for model FLOP utilization (PaLM,
Chowdhery et al. 2022, App. B). The peaks are the vendors' dense bf16 tensor-core
figures; the MFU is an assumption (the 40% issue 11 sets as the GPU target), not a
measurement. Synthetic-task evaluations through lm-eval and GLUE-style fine-tuning are
not counted (small beside training at these sizes).
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
    flops: float

    def gpu_hours(self, device: Device, mfu: float = ASSUMED_MFU) -> float:
        return self.flops / (device.peak_flops * mfu) / 3600

    def lines(self) -> list[str]:
        return [f"{self.gpu_hours(d):,.1f} GPU-hours on {d.name} ({d.peak_flops / 1e12:.0f} TFLOP/s bf16 dense "
                f"x assumed {ASSUMED_MFU:.0%} MFU)" for d in DEVICES]


def estimate(runs, evaluations) -> Estimate:
    return Estimate(sum(train_flops(r) for r in runs) + sum(eval_flops(e) for e in evaluations))
