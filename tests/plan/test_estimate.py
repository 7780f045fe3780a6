"""The cost posbench plan prints: its parameter count is the model's own, its FLOPs follow the
stated formula, a CPU grid states CPU-hours (and no GPU-hours), a grid that names a GPU
states GPU-hours (and no CPU-hours), each labelled as an estimate. No wall-clock assertion:
the arithmetic is checked against examples worked by hand."""

from __future__ import annotations

import pytest
import torch

from suite.cli.main import main
from suite.plan.estimate import (ASSUMED_MFU, CPU, DEVICES, Estimate, estimate, eval_flops, eval_seconds, matmul_params,
                                 eval_overhead, eval_overheads, step_flops,
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
    """tiny (d 64, 2 layers, 4 heads, d_ff 256): N = 2 (4 64^2 + 2 64 256) + 256 64 = 114,688
    matmul weights. A step of 16 x 64 tokens at 6 N + 12 L T d = 688,128 + 98,304 = 786,432 FLOPs
    a token is 805,306,368 FLOPs; one core takes 2.752e-10 x 805,306,368 ** 0.8793 = 0.018649 s
    for it, so 600 steps take 11.1895 s. One evaluation of 16,384 tokens at 16 x 64 = 1,024: a
    token's matmuls are 2 N = 229,376 FLOPs, its attention 4 L T d = 524,288; NoPE takes
    4.175e-9 x 229,376 ** 0.6172 = 8.4955 microseconds for the first and 524,288 / 60.1e9 = 8.7236
    for the second, 0.28212 s in all, and ALiBi adds 3.408 microseconds a token for each of its
    2 x 4 layers and heads at 16x (eval_overheads.yaml): 0.44669 s more, 0.72881 s. With NoPE's:
    11.4716 s, 0.0031866 CPU-hours; at the shared pace of 2.1, 0.0066918."""
    size = SizeSpec(name="tiny", d_model=64, n_layers=2, n_heads=4, d_ff=256)
    assert matmul_params(size) == 114_688
    assert step_flops(size, 16, 64) == 805_306_368
    assert (CPU.step_scale, CPU.step_exponent, CPU.shared_pace) == (2.752e-10, 0.8793, 2.1)
    assert (CPU.eval_scale, CPU.eval_exponent, CPU.eval_attention_rate) == (4.175e-9, 0.6172, 60.1e9)
    assert CPU.step_seconds(805_306_368) == pytest.approx(0.018649, rel=1e-4)
    assert CPU.eval_token_seconds(229_376, 524_288) == pytest.approx((8.4955 + 8.7236) * 1e-6, rel=1e-4)
    assert eval_overhead("alibi", 16) == 3.408 and eval_overhead("nope", 16) == 0.0
    train_s = 600 * CPU.step_seconds(805_306_368)
    evaluation = 16_384 * (229_376 + 524_288)
    eval_s = 16_384 * CPU.eval_token_seconds(229_376, 524_288)
    assert eval_s == pytest.approx(0.28212, rel=1e-4)
    assert eval_s + 16_384 * 2 * 4 * 3.408e-6 == pytest.approx(0.72881, rel=1e-4)
    est = Estimate(600 * 805_306_368, evaluation, train_s=train_s, eval_s=eval_s)
    assert train_s == pytest.approx(11.1895, rel=1e-4) and evaluation == pytest.approx(1.2348e10, rel=1e-4)
    assert est.cpu_hours() == pytest.approx(0.0031866, rel=1e-4)
    assert est.shared_hours() == pytest.approx(0.0066918, rel=1e-4)
    assert est.flops == 600 * 805_306_368 + evaluation
    lines = est.lines()
    assert len(lines) == 1 and lines[0].startswith("0.00 CPU-hours on ") and "; 0.01 at the pace of" in lines[0]
    assert "GPU" not in lines[0]
    assert Estimate(0, train_s=3600 * 12.5).lines()[0].startswith("12.5 CPU-hours")


def test_an_evaluation_is_costed_as_nopes_plus_its_encodings_work_per_layer_and_head(tiny_grid, project_root):
    """eval_seconds of a planned evaluation: its tokens at NoPE's seconds a token for the model's
    shape and the evaluation length, plus the encoding's work for each token, layer and head."""
    plan = expand(load_grid(tiny_grid(name="eval-cost", encodings=["nope", "alibi"]), Project(project_root)))
    for e in plan.evaluations:
        size, length = e.run.size, e.scale * e.run.base_len
        nope = e.settings["tokens"] * CPU.eval_token_seconds(2 * matmul_params(size), 4 * size.n_layers * length * size.d_model)
        added = e.settings["tokens"] * size.n_layers * size.n_heads * eval_overhead(e.encoding.name, e.scale) * 1e-6
        assert eval_seconds(e) == pytest.approx(nope + added)
    assert {e.encoding.name for e in plan.evaluations} == {"nope", "alibi"}


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


def test_an_encodings_evaluation_work_is_linear_in_log2_of_the_scale_between_the_scales_measured():
    """eval_overheads.yaml holds each encoding's work at the scales measured (1x-16x from the
    ladder's records, 1x and 16x from the bench); 6x is 0.585 of the way from 4x to 8x, and beyond
    the ends the end holds."""
    fire = eval_overheads()["fire"]
    assert set(fire) == {1, 2, 4, 8, 16} and eval_overhead("fire", 4) == fire[4]
    assert eval_overhead("fire", 6) == pytest.approx(fire[4] + (fire[8] - fire[4]) * 0.5849625, rel=1e-6)
    assert eval_overhead("fire", 32) == fire[16] and eval_overhead("fire", 0.5) == fire[1]
    bench_only = eval_overheads()["addrope"]
    assert set(bench_only) == {1, 16}
    assert eval_overhead("addrope", 4) == pytest.approx((bench_only[1] + bench_only[16]) / 2)
    assert eval_overhead("an-encoding-never-measured", 8) == 0.0


def test_the_evaluation_work_table_is_the_published_records_own():
    """The table plan reads is what benchmarks/calibrate_plan.py computes from the published
    records of the ladder's tiny and small rungs and the CPU bench records (rewritten, never
    edited, when they change)."""
    from suite.results.snapshot_files import read_bench, read_info
    from tests.plan.test_calibrate_plan import LAW_GRIDS, load_calibration

    calibration = load_calibration()
    snapshot = REPO / "leaderboard"
    pieces = calibration.evaluation_pieces(LAW_GRIDS, *calibration.snapshot_records(snapshot), calibration.EVAL_SIZES)
    assert calibration.eval_overheads(pieces, read_bench(snapshot, read_info(snapshot)["bench"])) == eval_overheads()
