"""Gated attention against its authors' layer (golden values from scripts/golden/gated_attention.py,
which runs qiuzh20/gated_attention's Qwen3Attention), and what the gate must keep: the
attention path, the key/value cache, the wrapped encoding's behaviour."""

from __future__ import annotations

import pytest
import torch

from suite.encodings import ENCODINGS, ModelDims
from suite.modeling.kv_cache import KVCache
from suite.modeling.model import Attention, ModelConfig, Transformer, path_of
from tests.encodings.helpers import CFG, build_model, golden

Gated = ENCODINGS.get("gated")


def authors_layer(case: dict, g: dict):
    """This project's attention layer and the gated encoding holding the authors' weights."""
    H, Dh = g["heads"], g["head_dim"]
    D = H * Dh
    cfg = ModelConfig(d_model=D, n_layers=1, n_heads=H, d_ff=4 * D, train_len=g["length"])
    inner = ("rotary", {"base": g["rope_base"]}) if case["rope"] else ("none", {})
    enc = Gated(Gated.Params(inner=inner[0], inner_params=inner[1], kind=case["kind"]),
                ModelDims(D, H, Dh, 1, g["length"], layer=0)).double()
    attn = Attention(cfg).double()
    # the authors' q_proj holds, per head, its query rows and then its gate rows (Dh, or 1 headwise)
    q_proj = torch.tensor(case["q_proj"], dtype=torch.float64).view(H, Dh + (Dh if case["kind"] == "elementwise" else 1), D)
    with torch.no_grad():
        attn.qkv.weight.copy_(torch.cat((q_proj[:, :Dh].reshape(D, D), torch.tensor(case["k_proj"], dtype=torch.float64),
                                         torch.tensor(case["v_proj"], dtype=torch.float64))))
        attn.out.weight.copy_(torch.tensor(case["o_proj"], dtype=torch.float64))
        enc.gate_proj.weight.copy_(q_proj[:, Dh:].reshape(-1, D))
    return attn, enc


@pytest.mark.parametrize("index", range(4))
def test_matches_the_authors_layer(index):
    g = golden("gated-attention")
    case = g["cases"][index]
    attn, enc = authors_layer(case, g)
    x = torch.tensor(case["x"], dtype=torch.float64)
    pos = torch.arange(g["length"])
    with torch.no_grad():
        out = attn(x, enc, pos, path_of(enc))
    torch.testing.assert_close(out, torch.tensor(case["out"], dtype=torch.float64), rtol=0, atol=1e-6)


def test_the_gate_changes_the_output_not_the_path():
    g = golden("gated-attention")
    case = g["cases"][0]
    attn, enc = authors_layer(case, g)
    x = torch.tensor(case["x"], dtype=torch.float64)
    pos = torch.arange(g["length"])
    with torch.no_grad():
        gated = attn(x, enc, pos, path_of(enc))
        plain = attn(x, enc.inner, pos, path_of(enc.inner))
    assert path_of(enc) == path_of(enc.inner)
    assert not torch.allclose(gated, plain)


@pytest.mark.parametrize("name", ["gated-rope", "gated-nope"])
def test_cache_is_exact(name):
    model = build_model(name).eval()
    assert model.cacheable and all(type(e).per_layer for e in model.encodings) and len(model.encodings) == CFG.n_layers
    idx = torch.randint(0, 256, (2, 24), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        full = model(idx)
        cache = KVCache()
        steps = [model.extend(idx[:, :8], cache)] + [model.extend(idx[:, t : t + 1], cache) for t in range(8, 24)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=0, atol=1e-5)


def test_the_gate_starts_near_one_half():
    """N(0, 0.02) weights on a normalised input: every gate starts at sigmoid(~0), about 1/2,
    as the authors' initialisation (no bias)."""
    model = build_model("gated-rope")
    enc = model.encodings[0]
    x = torch.nn.functional.layer_norm(torch.randn(2, 16, CFG.d_model), (CFG.d_model,))
    y = torch.ones(2, CFG.n_heads, 16, CFG.d_model // CFG.n_heads)
    gate = enc.gate(y, x)
    assert gate.shape == y.shape and (gate - 0.5).abs().max() < 0.1


def test_wrapped_in_a_schedule_and_a_temperature_the_gate_stays():
    """The hooks a schedule or a temperature delegates include the gate."""
    gated = {"impl": "gated", "params": {"inner": "rotary", "inner_params": {"base": 10000}}}
    schedule = ENCODINGS.get("schedule")
    params = schedule.Params(layers=({**gated, "window": 4}, {"impl": "none"}))
    model = Transformer(CFG, lambda d: schedule(params, d))
    assert "gate" in model.encodings[0].active_hooks() and "gate" not in model.encodings[1].active_hooks()
    temperature = ENCODINGS.get("temperature")
    enc = temperature(temperature.Params(inner="gated", inner_params=gated["params"], kind="ssmax"),
                      ModelDims(32, 4, 8, 2, 16, layer=0))
    assert "gate" in type(enc).hooks() and "gate" in enc.active_hooks()


def test_an_encoding_with_a_gate_of_its_own_is_refused():
    """Stick-breaking as its authors train it acts at the gate (its bias and norm): the gate
    would replace that, not follow it, so it is refused; the harness's variant has no gate."""
    gated = ENCODINGS.get("gated")
    with pytest.raises(ValueError, match="inner: 'stick_breaking'.*gate hook itself"):
        gated(gated.Params(inner="stick_breaking", inner_params={"remainder": "learned_bias"}), CFG.dims)
    harness = gated(gated.Params(inner="stick_breaking", inner_params={"remainder": "query_value", "group_norm": False}),
                    CFG.dims)
    assert harness.active_hooks() == {"normalize", "gate"}
