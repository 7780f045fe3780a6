"""Training-time position-id transforms: PoSE's and randomized ids against the authors'
code (golden values from scripts/golden/pose.py, which runs dwzhu-pku/PoSE's
preprocessing functions), CAPE's against Meta's (scripts/golden/cape.py runs
demucs==4.0.1's create_sin_embedding_cape), their properties, the model reading them only
in training, their place in the spec and the run id, and a real fit."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from suite.cli.main import main
from suite.plan.grid import expand
from suite.modeling.model import ModelConfig, Transformer
from suite.encodings.position_transforms import (Cape, CapeParams, Pose, PoseParams, RandomizedIds, RandomizedIdsParams, TorchRng,
                                      build_transform)
from suite.specs import Project, load_encoding, load_grid
from suite.modeling.build import build_model, model_config
from suite.core.yamldoc import SpecErrors

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "position_transforms.json").read_text())
CAPE_GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "cape.json").read_text())
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: f"{c['transform']}-{c['seed']}-{c['train_len']}")
def test_a_seeded_draw_is_the_authors(case):
    """With the authors' generator (Python's random, same seed) our draw is theirs, id for id."""
    transform = build_transform(case["transform"], {"target_length" if case["transform"] == "pose" else "max_position":
                                                    case["target"]})
    assert transform.draw(case["train_len"], random.Random(case["seed"])) == case["position_ids"]


@pytest.mark.parametrize("case", CAPE_GOLDEN["cases"], ids=lambda c: f"cape-{c['seed']}-{c['length']}")
def test_a_seeded_cape_draw_is_metas(case):
    """With numpy's generator seeded as the reference was, our ids are demucs's (read back
    from its embedding to float32's precision)."""
    transform = build_transform("cape", {k: case[k] for k in ("max_global_shift", "max_local_shift", "max_global_scaling")})
    ids = transform.draw(case["length"], np.random.RandomState(case["seed"]))
    np.testing.assert_allclose(ids, case["position_ids"], rtol=0, atol=1e-5)


def test_cape_ids_stay_within_their_shifts_and_scaling():
    """Global shift and scaling alone: the ids are lambda (t + delta), evenly spaced by
    lambda in [1/1.2, 1.2] with |delta| <= 5, both signs and both sides of 1 drawn. Local
    shift alone: each id within 0.5 of its own t, independently."""
    torch.manual_seed(0)
    t = torch.arange(32, dtype=torch.float64)
    global_only = Cape(CapeParams(max_global_shift=5.0, max_global_scaling=1.2))
    lambdas, deltas = [], []
    for _ in range(200):
        ids = global_only(32, "cpu")
        assert ids.dtype == torch.float64 and ids.shape == (32,)
        spacing = ids[1:] - ids[:-1]
        torch.testing.assert_close(spacing, spacing[:1].expand(31))
        lam, delta = float(spacing[0]), float(ids[0] / spacing[0])
        assert 1 / 1.2 - 1e-9 <= lam <= 1.2 + 1e-9 and abs(delta) <= 5 + 1e-9
        lambdas.append(lam)
        deltas.append(delta)
    assert min(lambdas) < 0.95 and max(lambdas) > 1.05 and min(deltas) < -2 and max(deltas) > 2
    local_only = Cape(CapeParams(max_local_shift=0.5))
    jitter = torch.stack([local_only(32, "cpu") - t for _ in range(50)])
    assert jitter.abs().max() <= 0.5 and jitter.min() < -0.45 and jitter.max() > 0.45
    assert jitter.std(dim=1).min() > 0.1  # per token, not one shift per sequence


def test_torch_rng_uniform_covers_its_interval():
    torch.manual_seed(3)
    draws = TorchRng.uniform(-2.0, 3.0, 2000)
    assert len(draws) == 2000 and -2.0 <= min(draws) < -1.9 and 2.9 < max(draws) < 3.0
    assert TorchRng.uniform(0.0, 0.0, 3) == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("params, message", [
    ({"max_global_shift": -1}, "CAPE's shifts must be >= 0"),
    ({"max_global_scaling": 0.5}, "max_global_scaling must be >= 1"),
])
def test_bad_cape_params_are_refused(params, message):
    with pytest.raises(ValueError, match=message):
        build_transform("cape", params)


@pytest.mark.parametrize("transform", [Pose(PoseParams(256)), RandomizedIds(RandomizedIdsParams(256))])
def test_ids_are_increasing_bounded_and_exact_in_number(transform):
    torch.manual_seed(0)
    seen_far = False
    for length in (1, 2, 17, 64, 256):
        for _ in range(20):
            ids = transform(length, "cpu")
            assert ids.shape == (length,) and ids.dtype == torch.long
            assert bool((ids[1:] > ids[:-1]).all()) and 0 <= int(ids[0]) and int(ids[-1]) < 256
            seen_far |= int(ids[-1]) >= 2 * length
    assert seen_far  # the point of both: ids beyond the window's own length


def test_pose_keeps_two_contiguous_chunks():
    torch.manual_seed(1)
    for _ in range(50):
        ids = Pose(PoseParams(1024))(64, "cpu")
        steps = (ids[1:] - ids[:-1]).tolist()
        assert ids[0] == 0 and sum(s != 1 for s in steps) <= 1  # one skip at most


def test_torch_rng_respects_pythons_bounds():
    torch.manual_seed(2)
    draws = {TorchRng.randint(3, 5) for _ in range(200)}
    assert draws == {3, 4, 5}
    sample = TorchRng.sample(range(10, 20), 10)
    assert sorted(sample) == list(range(10, 20))


@pytest.mark.parametrize("plain_name, transformed_name", [("rope", "rope-pose"), ("sinusoidal", "sinusoidal-cape")])
def test_the_model_reads_transformed_ids_only_in_training(plain_name, transformed_name):
    """A model with transformed ids (PoSE's integers on RoPE, CAPE's reals on the
    sinusoidal table) gives other logits than the plain encoding in training (the same
    weights) and the same in evaluation."""
    cfg = ModelConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, train_len=32)
    plain_spec, transformed_spec = (load_encoding(REPO / "encodings" / f"{n}.yaml") for n in (plain_name, transformed_name))
    torch.manual_seed(0)
    plain = build_model(plain_spec, model_config(_size(cfg), cfg.train_len))
    transformed = build_model(transformed_spec, model_config(_size(cfg), cfg.train_len))
    transformed.load_state_dict(plain.state_dict())
    idx = torch.randint(0, 256, (2, 32))
    torch.manual_seed(5)  # for PoSE, a draw that skips (rt > 0)
    assert not torch.allclose(transformed.train()(idx), plain.train()(idx))
    torch.testing.assert_close(transformed.eval()(idx), plain.eval()(idx))


def test_an_encoding_that_cannot_read_the_ids_is_refused():
    cfg = ModelConfig(d_model=32, n_layers=2, n_heads=4, d_ff=64, train_len=32)
    learned = load_encoding(REPO / "encodings" / "learned.yaml")
    impl, params = learned.implementation(), learned.resolved_params()
    with pytest.raises(ValueError, match="represents 32 positions; the training transform draws ids up to 1024"):
        Transformer(cfg, lambda dims: impl(params, dims), position_transform=Pose(PoseParams(1024)))
    randomized = load_encoding(REPO / "encodings" / "randomized.yaml")
    impl, params = randomized.implementation(), randomized.resolved_params()
    with pytest.raises(ValueError, match="draws its own position ids"):
        Transformer(cfg, lambda dims: impl(params, dims), position_transform=Pose(PoseParams(1024)))
    rope = load_encoding(REPO / "encodings" / "rope.yaml")  # its tables are indexed by integer id
    impl, params = rope.implementation(), rope.resolved_params()
    with pytest.raises(ValueError, match="Rotary reads integer position ids; the Cape transform draws real-valued ones"):
        Transformer(cfg, lambda dims: impl(params, dims), position_transform=Cape(CapeParams(max_global_shift=4.0)))


@pytest.mark.parametrize("field, message", [
    ({"impl": "pos"}, "unknown position transform 'pos' (did you mean 'pose'?)"),
    ({"impl": "pose", "params": {"target": 10}}, "pose: unknown parameter 'target'"),
    ({"impl": "pose", "params": {"target_length": 1}}, "target_length must be >= 2"),
])
def test_bad_train_positions_name_file_line_and_field(tmp_path, field, message):
    path = tmp_path / "encodings" / "bad.yaml"
    path.parent.mkdir()
    text = (REPO / "encodings" / "rope-pose.yaml").read_text().replace("name: rope-pose", "name: bad")
    text = text.replace("train_positions: {impl: pose, params: {target_length: 1024}}", f"train_positions: {json.dumps(field)}")
    path.write_text(text)
    with pytest.raises(SpecErrors) as caught:
        load_encoding(path)
    (error,) = caught.value.errors
    assert (error.line, error.field) == (7, "train_positions") and message in error.message, error


def test_a_variant_cannot_both_train_as_another_and_transform_its_ids(tmp_path):
    path = tmp_path / "encodings" / "both.yaml"
    path.parent.mkdir()
    text = (REPO / "encodings" / "rope-pose.yaml").read_text().replace("name: rope-pose", "name: both")
    path.write_text(text.replace("impl: rotary\n", "impl: rotary\ntrains_as: rope\n"))
    with pytest.raises(SpecErrors, match="its training positions are that encoding's"):
        load_encoding(path)


@pytest.mark.parametrize("plain, transformed", [("rope", "rope-pose"), ("sinusoidal", "sinusoidal-cape")])
def test_a_transform_trains_its_own_run_and_evaluates_at_every_scale(tiny_grid, project_root, plain, transformed):
    """A real Lightning fit with transformed ids (PoSE's integers, CAPE's reals): a run of
    its own (not the plain encoding's), evaluated at 1x..4x."""
    grid = tiny_grid(name="transform", encodings=[plain, transformed], scales=[1, 4],
                     eval={"tokens": 2048, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False})
    plan = expand(load_grid(grid, Project(project_root)))
    assert len({r.run_id for r in plan.runs}) == 2
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    records = [json.loads(p.read_text()) for p in (project_root / "results" / "evals").glob("*.json")]
    bpb = [m for r in records if r["encoding"] == transformed for m in r["metrics"] if m["metric"] == "bpb"]
    assert sorted(m["scale"] for m in bpb) == [1, 4] and all(0 < m["value"] < 8 for m in bpb)


def _size(cfg: ModelConfig):
    from suite.specs import SizeSpec

    return SizeSpec(name="t", d_model=cfg.d_model, n_layers=cfg.n_layers, n_heads=cfg.n_heads, d_ff=cfg.d_ff)
