"""The attention-sink diagnostic (suite.evaluation.evaluators.attention_sinks): its metric against the
authors' ``compute_attention_sink`` (golden), the recorded weights are the ones the model uses,
and a real grid run records it at every scale."""

from __future__ import annotations

import importlib.util
import json

import duckdb
import pytest
import torch

from suite.cli.main import main
from suite.evaluation.evaluators.attention_sinks import first_token_scores, key_scores
from suite.modeling.build import build_model, model_config
from suite.modeling.model import AttentionPath, recorded_attention
from suite.specs import load_encoding, load_size

from tests.conftest import REPO, write_yaml

GOLDEN = json.loads((REPO / "tests" / "golden" / "attention-sinks.json").read_text())


def golden_script():
    spec = importlib.util.spec_from_file_location("attention_sinks_golden", REPO / "scripts" / "golden" / "attention_sinks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sink_rate_equals_the_authors_compute_attention_sink():
    maps = golden_script().maps()  # [S, L, H, T, T], the maps the reference was run on
    a0 = key_scores(maps)[..., 0]  # [S, L, H]
    for eps, percent in GOLDEN["sink_rate_percent_at_key0"].items():
        assert (a0 > float(eps)).double().mean().item() * 100 == pytest.approx(percent, rel=1e-6), eps
    assert len(set(GOLDEN["sink_rate_percent_at_key0"].values())) == 4  # the thresholds tell the heads apart


@pytest.mark.parametrize("name", ["nope", "alibi", "gpt-oss", "stick-breaking", "qwen3-next"])
def test_the_explicit_path_is_the_models_own_attention(name):
    """Forcing the explicit path changes no logit, so the weights it records are the model's;
    a layer without attention (Qwen3-Next's Gated DeltaNet) keeps its mixer and records none."""
    torch.manual_seed(0)
    size = load_size(REPO / "sizes" / ("tiny-4l.yaml" if name in ("gpt-oss", "qwen3-next") else "tiny.yaml"))
    model = build_model(load_encoding(REPO / "encodings" / f"{name}.yaml"), model_config(size, 32))
    model.eval()
    x = torch.randint(0, 256, (2, 32))
    with torch.no_grad():
        native = model(x)
        paths = list(model.paths)
        model.path = AttentionPath.EXPLICIT
        with recorded_attention() as weights:
            explicit = model(x)
        model.paths = paths
    torch.testing.assert_close(explicit, native, rtol=1e-5, atol=1e-5)
    attending = sum(block.attn is not None for block in model.blocks)  # qwen3-next: 1 of 4
    assert len(weights) == attending and weights[0].shape == (2, model.cfg.n_heads, 32, 32)
    assert all(bool((w.triu(1) == 0).all()) for w in weights)  # causal: no weight on a future key
    a0 = first_token_scores(model, x, batch_size=1)
    assert a0.shape == (2, attending, model.cfg.n_heads) and model.paths == paths  # the paths restored
    assert bool(((a0 >= 0) & (a0 <= 1)).all())


def test_a_compiled_model_records_its_weights_eagerly():
    """A compiled model (a recipe's compile: true) gives the eager model's first-token scores
    and compiles no frame for them: dynamo guards on the recorded list, so compiled recording
    forwards recompiled batch after batch until dynamo's limit."""
    from torch._dynamo.testing import CompileCounter

    torch.manual_seed(0)
    size = load_size(REPO / "sizes" / "tiny.yaml")
    eager = build_model(load_encoding(REPO / "encodings" / "rope.yaml"), model_config(size, 32)).eval()
    compiled = build_model(load_encoding(REPO / "encodings" / "rope.yaml"), model_config(size, 32)).eval()
    compiled.load_state_dict(eager.state_dict())
    counter = CompileCounter()
    compiled.compile(backend=counter)
    x = torch.randint(0, 256, (4, 32))
    with torch.no_grad():
        compiled(x)  # the compiled forward is in use: one frame or more
    used = counter.frame_count
    assert used > 0
    torch.testing.assert_close(first_token_scores(compiled, x, batch_size=1), first_token_scores(eager, x, batch_size=1))
    assert counter.frame_count == used


def test_a_grid_records_sink_rate_and_strength_at_every_scale(project_root, text_folder):
    write_yaml(project_root / "tasks" / "local.yaml",
               {"name": "local", "kind": "lm", "corpus": {"kind": "folder", "path": str(text_folder), "glob": "*.py"}})
    grid = write_yaml(project_root / "grids" / "sinks.yaml", {
        "name": "sinks", "encodings": ["nope", "alibi"], "sizes": ["tiny"], "tasks": ["local"], "seeds": [0],
        "scales": [1, 2], "train": {"steps": 10, "batch_size": 4, "seq_len": 32, "warmup_steps": 2},
        "eval": {"tokens": 2048, "batch_size": 4, "curve_buckets": 4, "lmeval_rolling": False},
        "evaluations": [{"evaluator": "attention_sinks", "settings": {"windows": 3}}]})
    assert main(["--root", str(project_root), "run", str(grid), "--quiet", "--no-site"]) == 0
    with duckdb.connect(str(project_root / "results" / "posbench.duckdb"), read_only=True) as con:
        rows = con.execute("""SELECT encoding, metric, metrics.scale, value, n FROM metrics JOIN evaluations USING (eval_id)
                              WHERE metric IN ('sink_rate', 'sink_attention') ORDER BY ALL""").fetchall()
    assert {(r[0], r[1], r[2]) for r in rows} == {(e, m, s) for e in ("alibi", "nope")
                                                  for m in ("sink_attention", "sink_rate") for s in (1, 2)}
    assert all(0 <= r[3] <= 1 and r[4] == 3 for r in rows)
