"""Per-layer schedules and attention windows: the windows against transformers' mask
functions (golden values from scripts/golden/windows.py), each layer on its own attention
path, exact fast paths (query chunks, key/value cache), and a hybrid RNoPE-SWA model
trained by Lightning and evaluated at 1x..16x through the real pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from suite.cli.main import main
from suite.encodings import AttentionWindow
from suite.encodings.schedule import LayerEncoding, Schedule, ScheduleParams
from suite.modeling.kv_cache import KVCache
from suite.modeling.model import AttentionPath, ModelConfig, Transformer, attention_mask

from tests.encodings.helpers import build_model, golden

CFG4 = ModelConfig(d_model=32, n_layers=4, n_heads=4, d_ff=64, train_len=16)


def one_layer(window: int, kind: str) -> Schedule:
    params = ScheduleParams(layers=(LayerEncoding("none", {}, window, kind),))
    return Schedule(params, ModelConfig(d_model=8, n_heads=2, n_layers=1).dims.__class__(8, 2, 4, 1, 16, layer=0))


@pytest.mark.parametrize("case", range(6))
def test_windows_are_transformers_masks(case):
    """Our mask is finite exactly where transformers' sliding-window / chunked causal mask
    functions allow attention, for the whole square and for a block of queries over the
    keys its window starts at (the query-chunked path)."""
    c = golden("windows")["cases"][case]
    expected = torch.tensor(c["visible"])
    enc = one_layer(c["size"], c["kind"])
    pos = torch.arange(c["length"])
    assert torch.equal(torch.isfinite(attention_mask(enc, pos, pos)[0, 0]), expected)
    q0 = 23
    k0 = enc.attention_window.first_key(q0)
    block = attention_mask(enc, pos[q0:], pos[k0:], q0=q0, k0=k0)[0, 0]
    assert torch.equal(torch.isfinite(block), expected[q0:, k0:])
    assert not expected[q0:, :k0].any()  # nothing the block leaves out was visible


def test_bad_windows_are_refused():
    with pytest.raises(ValueError, match="at least one token"):
        AttentionWindow(0)
    with pytest.raises(ValueError, match="sliding' or 'chunked"):
        AttentionWindow(4, "dilated")
    with pytest.raises(ValueError, match="absolute encoding"):
        LayerEncoding("sinusoidal")
    with pytest.raises(ValueError, match="unknown parameter 'bse'"):
        LayerEncoding("rotary", {"bse": 10})


def test_each_layer_takes_its_own_path():
    """RNoPE-SWA at four layers: three windowed RoPE layers on the float-mask path, the
    fourth NoPE layer with global attention on the fused kernel; every scale alike."""
    model = build_model("rnope-swa", cfg=CFG4)
    expected = [AttentionPath.FLOAT_MASK] * 3 + [AttentionPath.FUSED]
    assert model.paths == expected and model.path_name == "fused+float_mask"
    assert [type(e.inner).__name__ for e in model.encodings] == ["Rotary", "Rotary", "Rotary", "NoPE"]
    model.set_scale(16)
    assert model.paths == expected
    with pytest.raises(ValueError, match="different attention paths"):
        model.path


@pytest.mark.parametrize("name", ["rnope-swa", "irope"])
def test_query_chunks_and_the_cache_give_the_same_numbers(name):
    """Evaluation in query chunks (each over the keys its window starts at) and decoding
    with a key/value cache give the logits of one plain forward."""
    model = build_model(name, cfg=CFG4).eval()
    idx = torch.randint(0, 256, (2, 100))
    with torch.no_grad():
        model.query_chunk = 10_000
        whole = model(idx)
        model.query_chunk = 24
        chunked = model(idx)
        cache = KVCache()
        stepped = torch.cat([model.extend(idx[:, :37], cache)] + [model.extend(idx[:, t : t + 1], cache) for t in range(37, 100)], dim=1)
    torch.testing.assert_close(chunked, whole, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(stepped, whole, rtol=1e-5, atol=1e-5)


def test_a_windowed_layer_ignores_keys_outside_its_window():
    """In a one-layer windowed-RoPE model the logits at t do not change when a token
    further back than the window changes, and do when one inside it does."""
    cfg = ModelConfig(d_model=32, n_layers=1, n_heads=4, d_ff=64, train_len=16)
    params = ScheduleParams(layers=(LayerEncoding("rotary", {}, 8),))
    model = Transformer(cfg, lambda dims: Schedule(params, dims)).eval()
    idx = torch.randint(0, 256, (1, 30))
    out = model(idx)
    far, near = idx.clone(), idx.clone()
    far[0, 29 - 8] = (idx[0, 29 - 8] + 1) % 256  # 9 tokens back: outside a window of 8
    near[0, 29 - 7] = (idx[0, 29 - 7] + 1) % 256  # 8 tokens back: the window's first key
    assert torch.equal(model(far)[0, 29], out[0, 29])
    assert not torch.equal(model(near)[0, 29], out[0, 29])


def test_a_hybrid_schedule_trains_and_evaluates_at_1x_to_16x(tiny_grid, project_root: Path):
    """RNoPE-SWA at four layers: a real Lightning fit and extrapolation evaluations at every
    scale, each a finite bits-per-byte figure; the run record names both attention paths."""
    grid = tiny_grid(name="hybrid", encodings=["rnope-swa"], sizes=["tiny-4l"], scales=[1, 2, 4, 8, 16],
                     eval={"tokens": 2048, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False})
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    (run,) = [json.loads(p.read_text()) for p in (project_root / "results" / "runs").glob("*.json")]
    assert run["status"] == "done" and run["provenance"]["attention_path"] == "fused+float_mask"
    bpb = {}
    for path in (project_root / "results" / "evals").glob("*.json"):
        record = json.loads(path.read_text())
        assert record["status"] == "done"
        bpb.update({m["scale"]: m["value"] for m in record["metrics"] if m["metric"] == "bpb"})
    assert sorted(bpb) == [1, 2, 4, 8, 16]
    assert all(0 < v < 8 for v in bpb.values()), bpb  # finite, and better than 8 bits per byte


def test_gemma3_schedule_is_transformers_gemma3_layer_by_layer():
    """encodings/gemma3.yaml against transformers' Gemma 3 (scripts/golden/gemma3.py): each of 12
    layers has the reference's layer type (five sliding, one full), its RoPE base, its window
    (the mask of the sliding layers exactly), and rotates q and k as Gemma3RotaryEmbedding's
    cos/sin through apply_rotary_pos_emb do."""
    from suite.encodings import ModelDims
    from tests.encodings.helpers import spec

    g = golden("gemma3")
    s = spec("gemma3")
    impl, params = s.implementation(), s.resolved_params()
    q, k = (torch.tensor(g[n])[None, None] for n in ("q", "k"))
    pos = torch.tensor(g["positions"])
    for layer, layer_type in enumerate(g["layer_types"]):
        ref = g["types"][layer_type]
        enc = impl(params, ModelDims(g["head_dim"], 1, g["head_dim"], g["layers"], 64, layer=layer))
        assert enc.inner.params.base == ref["rope_theta"], (layer, layer_type)
        if ref["window"] is None:
            assert enc.attention_window is None, layer
        else:
            assert (enc.attention_window.size, enc.attention_window.kind) == (ref["window"], "sliding")
            square = torch.arange(g["length"])
            visible = torch.isfinite(attention_mask(enc, square, square)[0, 0])
            assert torch.equal(visible, torch.tensor(ref["visible"])), layer
        q_rot, k_rot = enc.rotate(q.clone(), k.clone(), pos, pos)
        for got, name in ((q_rot, "q_rotated"), (k_rot, "k_rotated"), (q_rot @ k_rot.transpose(-2, -1), "logits")):
            torch.testing.assert_close(got[0, 0], torch.tensor(ref[name]), atol=1e-5, rtol=1e-5, msg=f"{layer} {name}")
