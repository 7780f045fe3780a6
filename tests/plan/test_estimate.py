"""The GPU-hour estimate posbench plan prints: its parameter count is the model's own, its
FLOPs follow the stated formula, and plan prints it labelled as an estimate."""

from __future__ import annotations

import pytest
import torch

from suite.cli.main import main
from suite.plan.estimate import ASSUMED_MFU, DEVICES, Estimate, estimate, matmul_params, train_flops
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
    est = Estimate(flops=3600 * DEVICES[0].peak_flops * ASSUMED_MFU * 2)
    assert est.gpu_hours(DEVICES[0]) == pytest.approx(2.0)
    assert est.gpu_hours(DEVICES[1]) == pytest.approx(2.0 * DEVICES[0].peak_flops / DEVICES[1].peak_flops)
    assert all("assumed 40% MFU" in line for line in est.lines())


def test_plan_prints_the_estimate(tiny_grid, project_root, capsys):
    grid = tiny_grid(name="cost")
    plan = expand(load_grid(grid, Project(project_root)))
    run = plan.runs[0]
    per_token = 6 * matmul_params(run.size) + 12 * run.size.n_layers * run.train.seq_len * run.size.d_model
    assert train_flops(run) == run.train.steps * run.train.batch_size * run.train.seq_len * per_token
    assert estimate(plan.runs, plan.evaluations).flops > sum(train_flops(r) for r in plan.runs)  # evaluations count
    assert main(["--root", str(project_root), "plan", str(grid)]) == 0
    out = capsys.readouterr().out
    assert "estimated GPU cost" in out and "not measured" in out and "GPU-hours on H100 SXM" in out
