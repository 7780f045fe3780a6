"""Golden values for Gemma 3's layer schedule, computed by Hugging Face transformers' Gemma 3.

Reference: transformers==5.23.0, ``Gemma3TextConfig`` (its default ``layer_types``: five
``sliding_attention`` layers, then one ``full_attention`` layer, repeated; its default
``rope_parameters``: RoPE base 10^4 on sliding layers, 10^6 on full ones),
``Gemma3RotaryEmbedding`` (the cos/sin tables of each layer type) with
``apply_rotary_pos_emb``, and the sliding layers' mask (``masking_utils.sliding_window_overlay``
and causality, as ``Gemma3TextModel`` builds it). Nothing of them is copied into this
project. The config is Gemma 3's defaults at a small shape (12 layers, head dimension 16,
a sliding window of 16 tokens): the pattern and the bases are the model's own. Gemma 3's
window is 1,024 tokens (Gemma 3 Technical Report, Sec. 2.2; ``sliding_window: 1024`` in the
released checkpoints' configs), as encodings/gemma3.yaml says; ``Gemma3TextConfig``'s own
default of 4,096 is Gemma 2's window and is overridden here like every size.

Regenerate with (transformers goes to a scratch folder; importing Gemma 3's modeling module
also imports the tokenizer classes, hence tokenizers and sentencepiece):

    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0 \
        tokenizers==0.23.3 sentencepiece==0.2.3
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/gemma3.py

which writes tests/golden/gemma3.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import transformers
from transformers import Gemma3TextConfig, masking_utils
from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding, apply_rotary_pos_emb

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "gemma3.json"
LAYERS, HEAD_DIM, WINDOW, T = 12, 16, 16, 40
POSITIONS = [0, 1, 5, 15, 16, 37, 63, 64, 100, 255]


def main() -> None:
    assert transformers.__version__ == "5.23.0", transformers.__version__
    config = Gemma3TextConfig(num_hidden_layers=LAYERS, hidden_size=64, head_dim=HEAD_DIM, num_attention_heads=4,
                              num_key_value_heads=4, sliding_window=WINDOW)
    rotary = Gemma3RotaryEmbedding(config)
    torch.manual_seed(0)
    q, k = torch.randn(1, 1, len(POSITIONS), HEAD_DIM), torch.randn(1, 1, len(POSITIONS), HEAD_DIM)
    position_ids = torch.tensor([POSITIONS])
    types = {}
    for layer_type in sorted(set(config.layer_types)):
        cos, sin = rotary(q, position_ids, layer_type)
        q_rot, k_rot = apply_rotary_pos_emb(q, k, cos, sin)
        window = config.sliding_window if layer_type == "sliding_attention" else None
        visible = None
        if window is not None:
            mask = masking_utils.and_masks(masking_utils.sliding_window_overlay(window), masking_utils.causal_mask_function)
            b, h = torch.tensor(0), torch.tensor(0)
            visible = [[bool(mask(b, h, torch.tensor(i), torch.tensor(j))) for j in range(T)] for i in range(T)]
        types[layer_type] = {"rope_theta": config.rope_parameters[layer_type]["rope_theta"], "window": window,
                             "q_rotated": q_rot[0, 0].tolist(), "k_rotated": k_rot[0, 0].tolist(),
                             "logits": (q_rot @ k_rot.transpose(-2, -1))[0, 0].tolist(), "visible": visible}
    OUT.write_text(json.dumps({"reference": "transformers==5.23.0 Gemma3TextConfig, Gemma3RotaryEmbedding, "
                                            "apply_rotary_pos_emb, masking_utils",
                               "layers": LAYERS, "head_dim": HEAD_DIM, "window": WINDOW, "length": T,
                               "positions": POSITIONS, "layer_types": list(config.layer_types),
                               "q": q[0, 0].tolist(), "k": k[0, 0].tolist(), "types": types}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
