"""The cost posbench plan prints: its parameter count is the model's own, its FLOPs follow the
stated formula, a CPU grid states CPU-hours (and no GPU-hours), a grid that names a GPU
states GPU-hours (and no CPU-hours), each labelled as an estimate. No wall-clock assertion:
the arithmetic is checked against examples worked by hand."""

from __future__ import annotations

import pytest
import torch

from suite.cli.main import main
from suite.plan.estimate import ASSUMED_MFU, CPU, DEVICES, Estimate, estimate, eval_flops, matmul_params, train_flops
from suite.plan.grid import expand
from suite.modeling.model import ModelConfig, Transformer
from suite.encodings import ENCODINGS
from suite.specs import Project, SizeSpec, load_grid


@pytest.mark.parametrize("d, layers, heads, d_ff", [(64, 2, 4, 256), (768, 12, 12, 3072)])
def test_matmul_params_are_the_models_matmul_weights(d, layers, heads, d_ff):
    size = SizeSpec(name="s", d_model=d, n_layers=layers, n_heads=heads, d_ff=d_ff)
    cls = ENCODINGS.get("none")
    with torch.device("meta"):
        model = Transformer(ModelConfig(d_model=d, n_layers=layers, n_heads=heads, d_ff=d_ff),
                            lambda dims: cls(cls.Params(), dims))
    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))  # the tied head once
    assert matmul_params(size) == linear


def test_gpu_hours_follow_from_flops_peak_and_mfu():
    est = Estimate(3600 * DEVICES[0].peak_flops * ASSUMED_MFU * 2, device="cuda")
    assert est.gpu_hours(DEVICES[0]) == pytest.approx(2.0)
    assert est.gpu_hours(DEVICES[1]) == pytest.approx(2.0 * DEVICES[0].peak_flops / DEVICES[1].peak_flops)
    assert all("assumed 40% MFU" in line for line in est.lines())
    assert not any("CPU-hours" in line for line in est.lines())


def test_cpu_hours_of_a_hand_worked_example():
    """tiny (d 64, 2 layers, d_ff 256): N = 2 (4 64^2 + 2 64 256) + 256 64 = 114,688 matmul weights.
    One run of 600 steps x batch 16 x L 64 trains 614,400 tokens at 6 N + 12 L T d = 688,128 +
    98,304 = 786,432 FLOPs a token: 4.832e11 FLOPs. One evaluation of 16,384 tokens at 16 x 64 =
    1,024 evaluates at 2 N + 4 L T d = 229,376 + 524,288 = 753,664 FLOPs a token: 1.2348e10.
    At 19.8 and 15.6 GFLOP/s: 24.403 s + 0.7915 s = 25.195 s, 0.0069985 CPU-hours."""
    size = SizeSpec(name="tiny", d_model=64, n_layers=2, n_heads=4, d_ff=256)
    assert matmul_params(size) == 114_688
    train = 600 * 16 * 64 * 786_432
    evaluation = 16_384 * 753_664
    assert (CPU.train_flops, CPU.eval_flops) == (19.8e9, 15.6e9)  # the stated throughputs this example uses
    est = Estimate(train, evaluation)
    assert train == pytest.approx(4.832e11, rel=1e-4) and evaluation == pytest.approx(1.2348e10, rel=1e-4)
    assert est.cpu_hours() == pytest.approx(0.0069985, rel=1e-4)
    assert est.flops == train + evaluation
    lines = est.lines()
    assert len(lines) == 1 and lines[0].startswith("0.01 CPU-hours on ") and "GPU" not in lines[0]
    assert Estimate(3600 * 19.8e9 * 12.5).lines()[0].startswith("12.5 CPU-hours")


def test_plan_of_a_cpu_grid_states_cpu_hours_and_no_gpu_hours(tiny_grid, project_root, capsys):
    grid = tiny_grid(name="cost")
    plan = expand(load_grid(grid, Project(project_root)))
    run = plan.runs[0]
    per_token = 6 * matmul_params(run.size) + 12 * run.size.n_layers * run.train.seq_len * run.size.d_model
    assert train_flops(run) == run.train.steps * run.train.batch_size * run.train.seq_len * per_token
    est = estimate(plan.runs, plan.evaluations)
    assert est.flops > sum(train_flops(r) for r in plan.runs)  # evaluations count
    assert est.evaluation == sum(eval_flops(e) for e in plan.evaluations) > 0
    assert main(["--root", str(project_root), "plan", str(grid)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "estimated CPU cost" in out and "an estimate, not a timing" in out
    assert f"{est.cpu_hours():.2f} CPU-hours on " in out
    assert "GPU-hours" not in out and "GPU cost" not in out


def test_plan_of_a_grid_that_names_a_gpu_states_gpu_hours(tiny_grid, project_root, capsys):
    grid = tiny_grid(name="cost-gpu", device="cuda")
    assert main(["--root", str(project_root), "plan", str(grid)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "estimated GPU cost" in out and "GPU-hours on H100 SXM" in out and "CPU-hours" not in out
