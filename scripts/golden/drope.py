"""Golden values for DroPE's QK-norm variant (encodings/nope-qk-norm.yaml), computed by the
authors' attention forward.

Reference: SakanaAI/DroPE@260a8bb9f4fda0673266ddfee7668915aade8b33 (Gelberg et al. 2025,
"Extending the Context of Pretrained LLMs by Dropping Their Positional Embeddings", arXiv
2512.12167). Its run configs ``cfgs/run_cfg/*_drope_qk_norm.yaml`` (one per model: SmolLM
360M and 1.7B, SmolLM2 1.7B, Llama-2 7B) set ``attention_type: qk_norm_nope``, which
``custom_models/drope.py`` maps to ``QKNormNoPELlamaAttention``: the ``qk_norm`` class of
``custom_models/attention.py`` (``nn.RMSNorm`` of width heads x head_dim on q and on k, eps
the model's ``rms_norm_eps``) with ``llama_qk_norm_nope_attn_forward`` as its forward. The
script reads both files with ``git show``, checks that the configs say so, and executes
``llama_qk_norm_nope_attn_forward`` as written (:mod:`reference`) on a stand-in Llama
attention layer: two heads of 8, random projections, the norms' gains random (as after
training; they start at ones), eps 1e-5, transformers 5.23.0's Llama
``eager_attention_forward`` and ``apply_rotary_pos_emb`` (what the file imports), a causal
mask. Golden: q and k before the norms, the gains, and the attention weights the forward
returns; what the forward does with the values is not the encoding's.

Regenerate with (fetch github:SakanaAI/DroPE first; transformers goes to a scratch folder):

    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/drope.py \\
        --reference-repo /work/.mirror/SakanaAI+DroPE/repo

which writes tests/golden/drope-qk-norm.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, Callable, Optional

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import run_definitions, show  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "drope-qk-norm.json"
COMMIT = "260a8bb9f4fda0673266ddfee7668915aade8b33"
HEADS, HEAD_DIM, T, EPS = 2, 8, 24, 1e-5


def check_configs(repo: str) -> list[str]:
    """Every run config of the QK-norm variant asks for qk_norm_nope; their names."""
    listing = subprocess.run(["git", f"--git-dir={repo}", "ls-tree", "--name-only", f"{COMMIT}:cfgs/run_cfg"],
                             check=True, capture_output=True, text=True).stdout.split()
    configs = sorted(name for name in listing if name.endswith("_drope_qk_norm.yaml"))
    assert configs, "no *_drope_qk_norm.yaml run config"
    for name in configs:
        assert "attention_type: qk_norm_nope" in show(repo, COMMIT, f"cfgs/run_cfg/{name}"), name
    drope = show(repo, COMMIT, "custom_models/drope.py")
    assert '"qk_norm_nope": QKNormNoPELlamaAttention' in drope
    attention = show(repo, COMMIT, "custom_models/attention.py")
    assert "QKNormNoPELlamaAttention = qk_norm(LlamaAttention, llama_qk_norm_nope_attn_forward)" in attention
    assert "nn.RMSNorm(\n                config.num_attention_heads * config.head_dim, config.rms_norm_eps" in attention
    return configs


def stand_in_layer() -> types.SimpleNamespace:
    """A Llama attention layer as the authors' forward reads it, with its qk_norm norms."""
    torch.manual_seed(0)
    width = HEADS * HEAD_DIM
    layer = types.SimpleNamespace(head_dim=HEAD_DIM, num_key_value_groups=1, scaling=HEAD_DIM ** -0.5,
                                  attention_dropout=0.0, training=False, layer_idx=0,
                                  config=types.SimpleNamespace(_attn_implementation="eager"))
    for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
        setattr(layer, name, nn.Linear(width, width, bias=False))
    layer.q_norm, layer.k_norm = nn.RMSNorm(width, EPS), nn.RMSNorm(width, EPS)
    with torch.no_grad():
        for norm in (layer.q_norm, layer.k_norm):
            norm.weight.copy_(torch.rand(width) * 1.5 + 0.25)
    return layer


def main() -> None:
    import transformers
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb, eager_attention_forward

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-repo", required=True, help="SakanaAI/DroPE's git directory")
    args = parser.parse_args()
    configs = check_configs(args.reference_repo)
    namespace = {"torch": torch, "Callable": Callable, "Optional": Optional, "Any": Any,
                 "llama_eager_attention_forward": eager_attention_forward,
                 "llama_apply_rotary_pos_emb": apply_rotary_pos_emb, "ALL_ATTENTION_FUNCTIONS": {}}
    forward = run_definitions(show(args.reference_repo, COMMIT, "custom_models/attention.py"),
                              ("llama_qk_norm_nope_attn_forward",), namespace,
                              "custom_models/attention.py")["llama_qk_norm_nope_attn_forward"]
    layer = stand_in_layer()
    hidden = torch.randn(1, T, HEADS * HEAD_DIM) * 2
    ones, zeros = torch.ones(1, T, HEAD_DIM), torch.zeros(1, T, HEAD_DIM)  # RoPE's tables, which it nulls
    causal = torch.full((T, T), torch.finfo(torch.float32).min).triu(1)[None, None]
    with torch.no_grad():
        _, weights = forward(layer, hidden, (ones, zeros), causal)
        q, k = layer.q_proj(hidden)[0], layer.k_proj(hidden)[0]  # [T, H x Dh], before the norms
    OUT.write_text(json.dumps({
        "reference": f"SakanaAI/DroPE@{COMMIT}: custom_models/attention.py llama_qk_norm_nope_attn_forward "
                     f"(QKNormNoPELlamaAttention, attention_type qk_norm_nope of {', '.join(configs)}); "
                     f"transformers=={transformers.__version__} eager_attention_forward, apply_rotary_pos_emb",
        "heads": HEADS, "head_dim": HEAD_DIM, "length": T, "eps": EPS,
        "q": q.tolist(), "k": k.tolist(), "q_norm_weight": layer.q_norm.weight.tolist(),
        "k_norm_weight": layer.k_norm.weight.tolist(), "attention_weights": weights[0].tolist()}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
