"""Golden values for SmolLM3's layer schedule, computed by Hugging Face transformers' SmolLM3.

Reference: transformers==5.23.0, ``SmolLM3Config`` (its default ``no_rope_layer_interval`` of
4 builds ``no_rope_layers[i] = int((i + 1) % 4 != 0)``: layer i rotates unless i + 1 is a
multiple of 4, so layers 3, 7, 11, ... are NoPE; every layer has full attention, as
``use_sliding_window`` is False), and each layer's ``SmolLM3Attention`` run forward with eager
attention: its ``use_rope`` flag decides whether ``SmolLM3RotaryEmbedding``'s cos/sin are
applied (``apply_rotary_pos_emb``). Nothing of them is copied into this project.

The RoPE base is SmolLM3's pretraining base, 50,000 (``rope_theta: 50000.0`` beside
``no_rope_layer: 4`` in the SmolLM3 pretraining config ``text/pretraining/smollm3/stage1_8T.yaml``
of huggingface/smollm, read at the fork junzheyi/smollm@28490d016eabc9f81ab8b6f71c240eab1ebcdd27);
transformers' default (2*10^6) and the released checkpoint's (5*10^6) come from the
long-context extension, a later stage. The shape is small (12 layers, one head of dimension
16): the pattern and the rotation are the model's own.

Each layer's attention takes the hidden states x [T, 16] with ``q_proj`` the identity and
``k_proj`` a fixed random matrix, so its queries are x and its keys x M^T; the golden holds
its attention weights under the causal mask at arbitrary position ids, and the cos/sin
rotation of q and k alone.

Regenerate with (transformers goes to a scratch folder; importing the modeling module also
imports the tokenizer classes, hence tokenizers and sentencepiece):

    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0 \
        tokenizers==0.23.3 sentencepiece==0.2.3
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/smollm3.py

which writes tests/golden/smollm3.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import transformers
from transformers import SmolLM3Config
from transformers.models.smollm3.modeling_smollm3 import SmolLM3Attention, SmolLM3RotaryEmbedding, apply_rotary_pos_emb

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "smollm3.json"
LAYERS, HEAD_DIM, BASE = 12, 16, 50000.0
# up to 255, as the Gemma 3 golden: at ids in the thousands the float32 angle id * inv_freq that
# transformers computes is itself rounded by more than the tolerance (1e-4 at id 4095)
POSITIONS = [0, 1, 5, 15, 16, 37, 63, 64, 100, 127, 200, 255]


def main() -> None:
    assert transformers.__version__ == "5.23.0", transformers.__version__
    config = SmolLM3Config(num_hidden_layers=LAYERS, hidden_size=HEAD_DIM, num_attention_heads=1, num_key_value_heads=1,
                           rope_parameters={"rope_type": "default", "rope_theta": BASE})
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    T = len(POSITIONS)
    x = torch.randn(1, T, HEAD_DIM)
    m = torch.randn(HEAD_DIM, HEAD_DIM) / HEAD_DIM**0.5
    position_ids = torch.tensor([POSITIONS])
    rotary = SmolLM3RotaryEmbedding(config)
    cos, sin = rotary(x, position_ids)
    q, k = x[:, None], (x @ m.T)[:, None]  # [1, 1, T, Dh]
    q_rot, k_rot = apply_rotary_pos_emb(q, k, cos, sin)
    causal = torch.full((T, T), torch.finfo(torch.float32).min).triu(1)[None, None]
    layers = []
    for layer in range(LAYERS):
        attn = SmolLM3Attention(config, layer).eval()
        with torch.no_grad():
            attn.q_proj.weight.copy_(torch.eye(HEAD_DIM))
            attn.k_proj.weight.copy_(m)
            attn.v_proj.weight.copy_(torch.eye(HEAD_DIM))
            _, weights = attn(x, (cos, sin), causal)
        layers.append({"use_rope": int(attn.use_rope), "layer_type": config.layer_types[layer],
                       "sliding_window": attn.sliding_window, "weights": weights[0, 0].tolist()})
    OUT.write_text(json.dumps({"reference": "transformers==5.23.0 SmolLM3Config, SmolLM3Attention (eager), "
                                            "SmolLM3RotaryEmbedding, apply_rotary_pos_emb",
                               "layers": LAYERS, "head_dim": HEAD_DIM, "rope_theta": BASE,
                               "no_rope_layers": list(config.no_rope_layers), "positions": POSITIONS,
                               "q": q[0, 0].tolist(), "k": k[0, 0].tolist(),
                               "q_rotated": q_rot[0, 0].tolist(), "k_rotated": k_rot[0, 0].tolist(),
                               "per_layer": layers}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
