"""Golden values for gpt-oss's attention sinks, computed by Hugging Face transformers' gpt-oss.

Reference: transformers==5.23.0, ``models/gpt_oss/modeling_gpt_oss.py``:
``eager_attention_forward`` (the logits of a query over its keys and the head's sink logit in
one softmax, the sink's column dropped), called as ``GptOssAttention`` calls it with a layer
holding ``sinks`` [H] (drawn as ``GptOssPreTrainedModel._init_weights`` draws them, normal
with std ``initializer_range``, here larger so that the sinks matter), and
``GptOssConfig``'s default ``layer_types`` (sliding and full attention alternating, the
sliding window's mask from ``masking_utils.sliding_window_overlay`` with causality, as in
scripts/golden/gemma3.py). Nothing of them is copied into this project.

Regenerate with:

    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0 \
        tokenizers==0.23.3 sentencepiece==0.2.3
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/gpt_oss_sinks.py

which writes tests/golden/gpt-oss-sinks.json.
"""

from __future__ import annotations

import json
import types
from pathlib import Path

import torch
import transformers
from transformers import GptOssConfig, masking_utils
from transformers.models.gpt_oss.modeling_gpt_oss import eager_attention_forward

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "gpt-oss-sinks.json"
HEADS, HEAD_DIM, T, WINDOW = 4, 8, 24, 6


def main() -> None:
    assert transformers.__version__ == "5.23.0", transformers.__version__
    config = GptOssConfig(num_hidden_layers=2, hidden_size=HEADS * HEAD_DIM, num_attention_heads=HEADS,
                          num_key_value_heads=HEADS, head_dim=HEAD_DIM, sliding_window=WINDOW)
    torch.manual_seed(0)
    layer = types.SimpleNamespace(num_key_value_groups=1, training=False,
                                  sinks=torch.nn.Parameter(torch.randn(HEADS) * 2.0))
    q, k, v = (torch.randn(1, HEADS, T, HEAD_DIM) * 1.5 for _ in range(3))
    cases = {}
    b, h = torch.tensor(0), torch.tensor(0)
    for layer_type in config.layer_types:
        window = config.sliding_window if layer_type == "sliding_attention" else None
        mask = masking_utils.causal_mask_function if window is None else \
            masking_utils.and_masks(masking_utils.sliding_window_overlay(window), masking_utils.causal_mask_function)
        visible = torch.tensor([[bool(mask(b, h, torch.tensor(i), torch.tensor(j))) for j in range(T)] for i in range(T)])
        additive = torch.zeros(T, T).masked_fill(~visible, torch.finfo(torch.float32).min)[None, None]
        with torch.no_grad():
            out, weights = eager_attention_forward(layer, q, k, v, additive, scaling=HEAD_DIM ** -0.5)
        cases[layer_type] = {"window": window, "output": out[0].transpose(0, 1).tolist(), "weights": weights[0].tolist()}
    OUT.write_text(json.dumps({"reference": "transformers==5.23.0 gpt_oss eager_attention_forward, GptOssConfig layer_types, "
                                            "masking_utils", "heads": HEADS, "head_dim": HEAD_DIM, "length": T,
                               "layer_types": list(config.layer_types), "sinks": layer.sinks.tolist(),
                               "q": q[0].tolist(), "k": k[0].tolist(), "v": v[0].tolist(), "cases": cases}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
