"""Golden values for gated attention, computed by its authors' attention layer.

Reference: qiuzh20/gated_attention at commit 49645df63aafe9e680bc44a9c0ca280d4aefa8e9 (Qiu et
al. 2025, "Gated Attention for Large Language Models", arXiv 2505.06708), ``modeling_qwen3.py``:
``Qwen3Attention`` (the eager layer; the SDPA and flash-attention layers gate the same way),
with ``rotate_half``, ``apply_rotary_pos_emb`` and ``repeat_kv``, run as written through
``reference.run_definitions``; nothing of them is copied into this project. The file imports
transformers as a whole, so its module is not imported; the namespace gives what the four
definitions read: torch, nn, math, typing's Optional and Tuple, and stand-ins that the
forward pass never calls: ``Cache`` (an annotation), ``Qwen3RotaryEmbedding`` (built in
``__init__``, unused: the layer takes ``position_embeddings``) and ``logger``.

The layer as configured: ``elementwise_attn_output_gate`` (the authors' best: a gate per head
and channel) or ``headwise_attn_output_gate`` (a scalar per head), as many key/value heads as
heads (this project has no grouped queries), ``qkv_bias`` False (Qwen3's attention has no
bias), and ``use_qk_norm`` False, since this project's attention has no QK-norm (the gate
scores are split off ``q_proj``'s output before that norm, so it never touches the gate).
``position_embeddings``: RoPE's cos and sin, base 10,000, as transformers' default rope
initialisation gives them (``inv_freq = 1 / base ** (arange(0, Dh, 2) / Dh)``, the angles
concatenated with themselves: the half-split convention of ``rotate_half``), or cos 1 and sin
0 (NoPE). The mask: 0 on and below the diagonal, -inf above. Weights N(0, 0.1) (larger than the
authors' 0.02 initialisation, so that the gates stray from 1/2 and the test sees them), inputs
N(0, 1), float64 (the layer's softmax runs in float32, as written).

Regenerate (fetch github:qiuzh20/gated_attention first):

    .venv/bin/python scripts/golden/gated_attention.py \\
        --reference-repo /work/.mirror/qiuzh20+gated_attention/repo

which writes tests/golden/gated-attention.json.
"""

from __future__ import annotations

import argparse
import json
import math
import types
from pathlib import Path
from typing import Optional, Tuple

import torch
from reference import run_definitions, show
from torch import nn

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "gated-attention.json"
REPO = "qiuzh20/gated_attention"
COMMIT = "49645df63aafe9e680bc44a9c0ca280d4aefa8e9"
FILE = "modeling_qwen3.py"
B, T, H, DH, BASE = 2, 10, 3, 4, 10000.0


def config(kind: str) -> types.SimpleNamespace:
    return types.SimpleNamespace(
        hidden_size=H * DH, num_attention_heads=H, head_dim=DH, num_key_value_heads=H, max_position_embeddings=4096,
        rope_theta=BASE, attention_dropout=0.0, use_qk_norm=False, rms_norm_eps=1e-6, qkv_bias=False,
        elementwise_attn_output_gate=kind == "elementwise", headwise_attn_output_gate=kind == "headwise")


def cos_sin(rope: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """[1, T, Dh] each: transformers' default RoPE (half-split), or the identity (NoPE)."""
    if not rope:
        return torch.ones(1, T, DH, dtype=torch.float64), torch.zeros(1, T, DH, dtype=torch.float64)
    inv_freq = 1.0 / BASE ** (torch.arange(0, DH, 2, dtype=torch.float64) / DH)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((angles, angles), dim=-1)[None]
    return emb.cos(), emb.sin()


def case(attention_cls, kind: str, rope: bool, seed: int) -> dict:
    torch.manual_seed(seed)
    layer = attention_cls(config(kind), layer_idx=0).double().eval()
    with torch.no_grad():
        for p in layer.parameters():
            p.normal_(0.0, 0.1)
    x = torch.randn(B, T, H * DH, dtype=torch.float64)
    mask = torch.full((T, T), float("-inf"), dtype=torch.float64).triu(1)[None, None]
    with torch.no_grad():
        out, _, _ = layer(x, attention_mask=mask, position_embeddings=cos_sin(rope))
    return {"kind": kind, "rope": rope, "x": x.tolist(), "q_proj": layer.q_proj.weight.tolist(),
            "k_proj": layer.k_proj.weight.tolist(), "v_proj": layer.v_proj.weight.tolist(),
            "o_proj": layer.o_proj.weight.tolist(), "out": out.tolist()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference-repo", required=True, help="git dir of qiuzh20/gated_attention")
    args = parser.parse_args()
    namespace = {"torch": torch, "nn": nn, "math": math, "Optional": Optional, "Tuple": Tuple,
                 "Cache": object, "Qwen3RotaryEmbedding": lambda config: None,
                 "logger": types.SimpleNamespace(warning_once=lambda *a, **k: None)}
    names = ("rotate_half", "apply_rotary_pos_emb", "repeat_kv", "Qwen3Attention")
    attention_cls = run_definitions(show(args.reference_repo, COMMIT, FILE), names, namespace,
                                    f"{FILE}@{COMMIT}")["Qwen3Attention"]
    cases = [case(attention_cls, kind, rope, seed)
             for seed, (kind, rope) in enumerate([("elementwise", True), ("elementwise", False),
                                                  ("headwise", True), ("headwise", False)])]
    OUT.write_text(json.dumps({
        "reference": f"{REPO}@{COMMIT}:{FILE} Qwen3Attention (eager), use_qk_norm=False, kv heads = heads",
        "batch": B, "length": T, "heads": H, "head_dim": DH, "rope_base": BASE, "cases": cases}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
