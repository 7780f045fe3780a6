"""Golden values for MLA's decoupled RoPE, computed by Hugging Face transformers' DeepSeek-V3 attention.

Reference: transformers==5.23.0, ``models/deepseek_v3/modeling_deepseek_v3.py``:
``DeepseekV3Attention`` (Multi-head Latent Attention, DeepSeek-AI 2024, arXiv 2405.04434,
Eqs. 9-19) built from a small ``DeepseekV3Config`` and run forward with eager attention
(``eager_attention_forward``), its cos/sin from ``DeepseekV3RotaryEmbedding``; with
``rope_interleave`` True (DeepSeek-V3's default: ``apply_rotary_pos_emb_interleave``) and False
(``apply_rotary_pos_emb``, half-split). Nothing of them is copied into this project.

The layer: 3 heads, ``qk_nope_head_dim`` 8 (the model's head dim, so hidden size 24),
``qk_rope_head_dim`` 4 (the spec's rope_ratio 0.5 of it, DeepSeek-V3's 64 beside 128),
``v_head_dim`` 8, ``kv_lora_rank`` 6, no query latent (``q_lora_rank`` None, as DeepSeek-V2-Lite),
no bias, rope_theta 10,000; every weight N(0, 0.3^2) and the latent's RMSNorm weight 1 + N(0, 0.3^2)
(larger than DeepSeek's 0.02, so that positions and content both move the weights), input
N(0, 1), float64 (the layer's RMSNorm and softmax run in float32, as written), positions 0 .. T-1,
a causal mask. cos/sin are the rotary module's, built in float64 (``float64_torch`` of
scripts/golden/rotary.py around it: it hard-codes float32) and checked against its float32
output.

PosBench reproduces Eqs. 14-18, not the key/value latent (suite/encodings/mla.py), so the golden
holds what the test feeds our attention: the input, ``q_proj`` (per head its nope rows, the
model's queries, then its rope rows, W^QR), the rope rows of ``kv_a_proj_with_mqa`` (W^KR, shared
by the heads), ``o_proj``, and the layer's own nope keys and values, read from ``kv_b_proj``'s
output during the forward (what the latent and its RMSNorm produced); and what it must give: the
attention weights the eager forward returns and the layer's output.

Regenerate with (transformers goes to a scratch folder; importing the modeling module also
imports the tokenizer classes, hence tokenizers and sentencepiece):

    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0 \\
        tokenizers==0.23.3 sentencepiece==0.2.3
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/mla.py

which writes tests/golden/mla.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import transformers
from rotary import float64_torch
from transformers import DeepseekV3Config
from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention, DeepseekV3RotaryEmbedding

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "mla.json"
B, T, HEADS, NOPE, ROPE, V, RANK, BASE, STD = 2, 12, 3, 8, 4, 8, 6, 10000.0, 0.3


def config(interleave: bool) -> DeepseekV3Config:
    cfg = DeepseekV3Config(hidden_size=HEADS * NOPE, num_attention_heads=HEADS, num_key_value_heads=HEADS,
                           num_hidden_layers=1, q_lora_rank=None, kv_lora_rank=RANK, qk_nope_head_dim=NOPE,
                           qk_rope_head_dim=ROPE, v_head_dim=V, attention_bias=False, rope_interleave=interleave,
                           rope_parameters={"rope_type": "default", "rope_theta": BASE})
    cfg._attn_implementation = "eager"
    return cfg


def cos_sin(cfg: DeepseekV3Config, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The rotary module's cos, sin [1, T, d^R] at positions 0 .. T-1, in float64 (checked
    against the module as shipped, in float32)."""
    position_ids = torch.arange(T)[None]
    shipped = DeepseekV3RotaryEmbedding(cfg)(x.float(), position_ids)
    with float64_torch():
        ours = DeepseekV3RotaryEmbedding(cfg)(x, position_ids)
    assert all(t.dtype == torch.float64 for t in ours)
    for a, b in zip(ours, shipped):
        torch.testing.assert_close(a.float(), b, rtol=0, atol=1e-6)
    return ours


def case(interleave: bool, seed: int) -> dict:
    cfg = config(interleave)
    torch.manual_seed(seed)
    layer = DeepseekV3Attention(cfg, layer_idx=0).double().eval()
    with torch.no_grad():
        for p in layer.parameters():
            p.normal_(0.0, STD)
        layer.kv_a_layernorm.weight.add_(1.0)
    x = torch.randn(B, T, HEADS * NOPE, dtype=torch.float64)
    mask = torch.full((T, T), float("-inf"), dtype=torch.float64).triu(1)[None, None]
    latent_out = {}
    handle = layer.kv_b_proj.register_forward_hook(lambda module, args, out: latent_out.__setitem__("kv", out))
    with torch.no_grad():
        out, weights = layer(x, position_embeddings=cos_sin(cfg, x), attention_mask=mask)
    handle.remove()
    kv = latent_out["kv"].view(B, T, HEADS, NOPE + V).transpose(1, 2)  # [B, H, T, nope + v]: as expand_kv splits it
    return {"interleave": interleave, "x": x.tolist(), "q_proj": layer.q_proj.weight.tolist(),
            "k_rope_proj": layer.kv_a_proj_with_mqa.weight[RANK:].tolist(), "o_proj": layer.o_proj.weight.tolist(),
            "k_nope": kv[..., :NOPE].tolist(), "v": kv[..., NOPE:].tolist(), "scaling": layer.scaling,
            "weights": weights.tolist(), "out": out.tolist()}


def main() -> None:
    assert transformers.__version__ == "5.23.0", transformers.__version__
    cases = [case(interleave, seed) for seed, interleave in enumerate((True, False))]
    OUT.write_text(json.dumps({
        "reference": "transformers==5.23.0 DeepseekV3Attention (eager), DeepseekV3RotaryEmbedding; q_lora_rank None",
        "batch": B, "length": T, "heads": HEADS, "qk_nope_head_dim": NOPE, "qk_rope_head_dim": ROPE,
        "v_head_dim": V, "kv_lora_rank": RANK, "rope_theta": BASE, "cases": cases}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
