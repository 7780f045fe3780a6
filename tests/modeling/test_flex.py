"""The GPU paths, tested for equality on the CPU where they can run there: relative-bias
encodings through FlexAttention's score_mod (FlexAttention's own unfused reference on a
CPU: the same score_mod and block mask the compiled GPU kernel runs), and torch.compile
(dynamo's graph with the aot_eager backend here; inductor on a GPU)."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F

from suite.modeling.kv_cache import KVCache
from suite.modeling.model import FLEX_MIN_HEAD_DIM, AttentionPath, ModelConfig

from tests.encodings.helpers import CFG, SPECS, build_model, spec

pytestmark = pytest.mark.integration  # trains or evaluates real models: not in make test-fast

# the fused GPU kernel's smallest head dimension (FLEX_MIN_HEAD_DIM), as the tiny sizes have it
FLEX_CFG = ModelConfig(**{**CFG.__dict__, "d_model": 4 * FLEX_MIN_HEAD_DIM})
RELATIVE = [p.stem for p in SPECS if spec(p.stem).implementation().relative_bias is not None]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*flex_attention called without torch.compile.*")
        yield


def test_the_relative_bias_encodings():
    assert {"alibi", "t5", "kerple-log", "kerple-power", "sandwich"} <= set(RELATIVE)
    assert not {"fire", "rope", "cope", "fox"} & set(RELATIVE)  # FIRE's bias depends on i, not i - j alone


def pair(name: str):
    """The same weights twice: on the float-mask path and through FlexAttention."""
    plain, flex = build_model(name, seed=1, cfg=FLEX_CFG), build_model(name, seed=1, cfg=FLEX_CFG)
    with torch.no_grad():  # nonzero learned biases (T5 starts at zero)
        for p in plain.parameters():
            p.add_(0.1 * torch.randn_like(p))
    flex.load_state_dict(plain.state_dict())
    flex.use_flex_attention()
    assert set(flex.paths) == {AttentionPath.FLEX} and set(plain.paths) == {AttentionPath.FLOAT_MASK}
    return plain, flex


@pytest.mark.parametrize("name", RELATIVE)
def test_flex_gives_the_float_mask_paths_logits(name):
    """Forward only: FlexAttention has no backward on a CPU (its gradients are the GPU's
    to check; the score_mod is the same function either way)."""
    plain, flex = pair(name)
    idx = torch.randint(0, 256, (2, FLEX_CFG.train_len))
    with torch.no_grad():
        torch.testing.assert_close(flex.train()(idx), plain.train()(idx), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["alibi", "t5"])
def test_flex_evaluates_beyond_l_and_decodes_with_the_cache(name):
    plain, flex = (m.eval() for m in pair(name))
    idx = torch.randint(0, 256, (1, 4 * FLEX_CFG.train_len))
    for m in (plain, flex):
        m.set_scale(4)
    with torch.no_grad():
        expected = plain(idx)
        torch.testing.assert_close(flex(idx), expected, rtol=1e-5, atol=1e-5)
        cache = KVCache()
        stepped = torch.cat([flex.extend(idx[:, :20], cache)] + [flex.extend(idx[:, t : t + 1], cache)
                                                                  for t in range(20, idx.shape[1])], dim=1)
    torch.testing.assert_close(stepped, expected, rtol=1e-5, atol=1e-5)
    assert flex.paths == [AttentionPath.FLEX] * FLEX_CFG.n_layers  # set_scale keeps the choice


def test_a_head_dimension_below_the_fused_kernels_keeps_the_float_mask_path():
    model = build_model("alibi")  # CFG: 4 heads of 8 dimensions
    assert model.cfg.d_model // model.cfg.n_heads < FLEX_MIN_HEAD_DIM
    model.use_flex_attention()
    assert set(model.paths) == {AttentionPath.FLOAT_MASK}


def test_dropout_keeps_the_float_mask_path():
    model = build_model("alibi")
    model.cfg = type(model.cfg)(**{**model.cfg.__dict__, "dropout": 0.1})
    model.use_flex_attention()
    assert set(model.paths) == {AttentionPath.FLOAT_MASK}


@pytest.mark.parametrize("name", ["rope", "alibi", "rnope-swa", "fox"])
def test_a_compiled_model_gives_the_eager_numbers(name):
    """torch.compile traces every attention path (fused, float mask, windows, decay) into
    one graph and gives the eager logits and gradients."""
    torch._dynamo.reset()
    eager, compiled = build_model(name, seed=2), build_model(name, seed=2)
    compiled.compile(backend="aot_eager", fullgraph=False)
    idx = torch.randint(0, 256, (2, CFG.train_len + 1))
    losses = [F.cross_entropy(m.train()(idx[:, :-1]).transpose(1, 2), idx[:, 1:]) for m in (eager, compiled)]
    torch.testing.assert_close(losses[1], losses[0], rtol=1e-5, atol=1e-6)
    for loss in losses:
        loss.backward()
    for (n, p), (_, q) in zip(eager.named_parameters(), compiled.named_parameters()):
        torch.testing.assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-6, msg=n)


def test_compile_is_how_not_what(tiny_grid, project_root):
    """compile: true in a recipe changes how the steps run, not the run id (nor any evaluation's)."""
    from suite.plan.grid import expand
    from suite.specs import Project, load_grid

    recipes = [{"steps": 20, "batch_size": 4, "seq_len": 32, "warmup_steps": 2, "compile": flag} for flag in (False, True)]
    plans = [expand(load_grid(tiny_grid(name=f"c{i}", train=recipe), Project(project_root))) for i, recipe in enumerate(recipes)]
    assert [r.run_id for r in plans[0].runs] == [r.run_id for r in plans[1].runs]
    assert [e.eval_id for e in plans[0].evaluations] == [e.eval_id for e in plans[1].evaluations]
    assert all(r.train.compile for r in plans[1].runs)
