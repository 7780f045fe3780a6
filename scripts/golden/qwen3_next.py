"""Golden values for Qwen3-Next's full-attention rotary, computed by Hugging Face transformers.

Reference: transformers==5.23.0, ``Qwen3NextConfig`` (its defaults: ``partial_rotary_factor``
0.25, ``rope_theta`` 10^4, ``layer_types`` with a ``full_attention`` layer where (i + 1) is a
multiple of ``full_attention_interval`` = 4 and ``linear_attention`` (Gated DeltaNet)
elsewhere), ``Qwen3NextRotaryEmbedding`` and ``apply_rotary_pos_emb`` (the first
0.25 x head_dim dimensions rotate, half-split, theta_i = base^(-2i/r); the rest pass). Nothing
of them is copied into this project.

Qwen3-Next's positional question is its full-attention layers' partial rotary; its other
layers are Gated DeltaNet linear attention (scripts/golden/gated_deltanet.py), which read no
position. The file shows that encodings/rope-partial.yaml, the rotary inside
encodings/qwen3-next.yaml's attention layers, is exactly the rotary of Qwen3-Next's full-attention layers (transformers' defaults; at head dimension
64 here, 256 there: the factor, the exponent and the pairing are the same).

Regenerate with (transformers goes to a scratch folder; importing the modeling module also
imports the tokenizer classes, hence tokenizers and sentencepiece):

    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0 \
        tokenizers==0.23.3 sentencepiece==0.2.3
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/qwen3_next.py

which writes tests/golden/qwen3-next.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import transformers
from transformers import Qwen3NextConfig
from transformers.models.qwen3_next.modeling_qwen3_next import Qwen3NextRotaryEmbedding, apply_rotary_pos_emb

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "qwen3-next.json"
LAYERS, HEAD_DIM = 12, 64
POSITIONS = [0, 1, 5, 15, 16, 37, 63, 64, 100, 127, 200, 255]


def main() -> None:
    assert transformers.__version__ == "5.23.0", transformers.__version__
    config = Qwen3NextConfig(num_hidden_layers=LAYERS, hidden_size=HEAD_DIM, head_dim=HEAD_DIM, num_attention_heads=1,
                             num_key_value_heads=1)
    rotary = Qwen3NextRotaryEmbedding(config)
    torch.manual_seed(0)
    q, k = torch.randn(1, 1, len(POSITIONS), HEAD_DIM), torch.randn(1, 1, len(POSITIONS), HEAD_DIM)
    cos, sin = rotary(q, torch.tensor([POSITIONS]))
    q_rot, k_rot = apply_rotary_pos_emb(q, k, cos, sin)
    OUT.write_text(json.dumps({"reference": "transformers==5.23.0 Qwen3NextConfig, Qwen3NextRotaryEmbedding, "
                                            "apply_rotary_pos_emb",
                               "head_dim": HEAD_DIM, "layer_types": list(config.layer_types),
                               "rope_parameters": dict(config.rope_parameters), "rotary_dim": cos.shape[-1],
                               "positions": POSITIONS, "q": q[0, 0].tolist(), "k": k[0, 0].tolist(),
                               "q_rotated": q_rot[0, 0].tolist(), "k_rotated": k_rot[0, 0].tolist(),
                               "logits": (q_rot @ k_rot.transpose(-2, -1))[0, 0].tolist()}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
