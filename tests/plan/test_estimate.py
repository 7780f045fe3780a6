"""The cost posbench plan prints: its parameter count is the model's own, its FLOPs follow the
stated formula, a CPU grid states CPU-hours (and no GPU-hours), a grid that names a GPU
states GPU-hours (and no CPU-hours), each labelled as an estimate. No wall-clock assertion:
the arithmetic is checked against examples worked by hand."""

from __future__ import annotations

import pytest
import torch

from suite.cli.main import main
from suite.plan.estimate import (ASSUMED_MFU, CPU, DEVICES, Estimate, estimate, eval_flops, eval_seconds, matmul_params,
                                 eval_speeds, relative_eval_speed, step_flops,
                                 train_flops, train_seconds)
from suite.plan.grid import expand
from suite.modeling.model import ModelConfig, Transformer
from suite.encodings import ENCODINGS
from suite.specs import Project, SizeSpec, load_grid
from tests.conftest import REPO


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
    A step of 16 x 64 tokens at 6 N + 12 L T d = 688,128 + 98,304 = 786,432 FLOPs a token is
    805,306,368 FLOPs; one core takes 2.752e-10 x 805,306,368 ** 0.8793 = 0.018649 s for it, so
    600 steps take 11.1895 s. One evaluation of 16,384 tokens at 16 x 64 = 1,024 evaluates at
    2 N + 4 L T d = 229,376 + 524,288 = 753,664 FLOPs a token: 1.2348e10 FLOPs. Its batches of 32
    windows of 1,024 tokens are 2.4696e10 FLOPs each, which one core's training law runs at
    2.4696e10 / (2.752e-10 x 2.4696e10 ** 0.8793) FLOP/s, at 0.69 of that for an evaluation: 45.04
    GFLOP/s, so NoPE takes 0.27416 s and ALiBi (0.36x NoPE's speed at 16x, eval_speeds.yaml)
    0.76156 s. With NoPE's: 11.4637 s, 0.0031844 CPU-hours; at the shared pace of 2.1, 0.0066871."""
    size = SizeSpec(name="tiny", d_model=64, n_layers=2, n_heads=4, d_ff=256)
    assert matmul_params(size) == 114_688
    assert step_flops(size, 16, 64) == 805_306_368
    assert (CPU.step_scale, CPU.step_exponent, CPU.eval_efficiency, CPU.shared_pace) == (2.752e-10, 0.8793, 0.69, 2.1)
    assert CPU.step_seconds(805_306_368) == pytest.approx(0.018649, rel=1e-4)
    assert CPU.eval_rate(32 * 1024 * 753_664) == pytest.approx(45.039e9, rel=1e-4)
    assert relative_eval_speed("alibi", 16) == 0.36 and relative_eval_speed("nope", 16) == 1.0
    train_s = 600 * CPU.step_seconds(805_306_368)
    evaluation = 16_384 * 753_664
    eval_s = evaluation / CPU.eval_rate(32 * 1024 * 753_664)
    assert eval_s == pytest.approx(0.27416, rel=1e-4) and eval_s / 0.36 == pytest.approx(0.76156, rel=1e-4)
    est = Estimate(600 * 805_306_368, evaluation, train_s=train_s, eval_s=eval_s)
    assert train_s == pytest.approx(11.1895, rel=1e-4) and evaluation == pytest.approx(1.2348e10, rel=1e-4)
    assert est.cpu_hours() == pytest.approx(0.0031844, rel=1e-4)
    assert est.shared_hours() == pytest.approx(0.0066871, rel=1e-4)
    assert est.flops == 600 * 805_306_368 + evaluation
    lines = est.lines()
    assert len(lines) == 1 and lines[0].startswith("0.00 CPU-hours on ") and "; 0.01 at the pace of" in lines[0]
    assert "GPU" not in lines[0]
    assert Estimate(0, train_s=3600 * 12.5).lines()[0].startswith("12.5 CPU-hours")


def test_a_run_costs_its_steps_at_one_cores_step_time(tiny_grid, project_root):
    run = expand(load_grid(tiny_grid(name="steps"), Project(project_root))).runs[0]
    step = step_flops(run.size, run.train.batch_size, run.train.seq_len)
    assert train_flops(run) == run.train.steps * step
    assert train_seconds(run) == pytest.approx(run.train.steps * CPU.step_scale * step**CPU.step_exponent)


def test_plan_of_a_cpu_grid_states_cpu_hours_and_no_gpu_hours(tiny_grid, project_root, capsys):
    grid = tiny_grid(name="cost")
    plan = expand(load_grid(grid, Project(project_root)))
    run = plan.runs[0]
    per_token = 6 * matmul_params(run.size) + 12 * run.size.n_layers * run.train.seq_len * run.size.d_model
    assert train_flops(run) == run.train.steps * run.train.batch_size * run.train.seq_len * per_token
    est = estimate(plan.runs, plan.evaluations)
    assert est.flops > sum(train_flops(r) for r in plan.runs)  # evaluations count
    assert est.evaluation == sum(eval_flops(e) for e in plan.evaluations) > 0
    assert est.eval_s > 0 and est.eval_s == pytest.approx(sum(eval_seconds(e) for e in plan.evaluations))
    assert est.train_s == pytest.approx(sum(train_seconds(r) for r in plan.runs))
    assert main(["--root", str(project_root), "plan", str(grid)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "estimated CPU cost" in out and "an estimate, not a timing" in out
    assert f"{est.cpu_hours():.2f} CPU-hours on " in out and f"; {est.shared_hours():.2f} at the pace of" in out
    assert "GPU-hours" not in out and "GPU cost" not in out


def test_plan_of_a_grid_that_names_a_gpu_states_gpu_hours(tiny_grid, project_root, capsys):
    grid = tiny_grid(name="cost-gpu", device="cuda")
    assert main(["--root", str(project_root), "plan", str(grid)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "estimated GPU cost" in out and "GPU-hours on H100 SXM" in out and "CPU-hours" not in out


def test_an_encodings_evaluation_speed_is_geometric_in_the_scale_between_its_measured_ends():
    """eval_speeds.yaml holds each encoding's speed against NoPE's at 1x and 16x; 4x is the
    geometric mean of the two (halfway in log2 of the scale), and beyond the ends it holds."""
    fire = eval_speeds()["fire"]
    assert relative_eval_speed("fire", 1) == fire[1] and relative_eval_speed("fire", 16) == fire[16]
    assert relative_eval_speed("fire", 4) == pytest.approx((fire[1] * fire[16]) ** 0.5)
    assert relative_eval_speed("fire", 32) == pytest.approx(fire[16])
    assert relative_eval_speed("an-encoding-the-bench-never-ran", 8) == 1.0


def test_the_evaluation_speeds_are_the_published_bench_records_own():
    """The table plan reads is what benchmarks/calibrate_plan.py computes from the published CPU
    bench records now (it is rewritten, never edited, when they change)."""
    from suite.results.snapshot_files import read_bench, read_info
    from tests.plan.test_calibrate_plan import load_calibration

    snapshot = REPO / "leaderboard"
    assert load_calibration().eval_speeds(read_bench(snapshot, read_info(snapshot)["bench"])) == eval_speeds()
