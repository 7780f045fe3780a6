"""Golden attention windows, computed by Hugging Face transformers' mask functions.

Reference: transformers==5.23.0, ``masking_utils.sliding_window_causal_mask_function``
(Mistral, Gemma, ... sliding windows) and ``masking_utils.chunked_causal_mask_function``
(Llama 4's chunked attention), each evaluated at every (query, key) index pair; nothing
of them is copied into this project. The test compares where our model's attention
mask (``suite.modeling.model.attention_mask`` with an ``AttentionWindow``) is finite.

Regenerate with (transformers goes to a scratch folder):

    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/windows.py

which writes tests/golden/windows.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import transformers
from transformers import masking_utils

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "windows.json"
T = 40


def grid(mask_function) -> list[list[bool]]:
    """mask_function(batch, head, q, kv) at every q, kv in [0, T)."""
    b, h = torch.tensor(0), torch.tensor(0)
    return [[bool(mask_function(b, h, torch.tensor(q), torch.tensor(kv))) for kv in range(T)] for q in range(T)]


def main() -> None:
    assert transformers.__version__ == "5.23.0", transformers.__version__
    cases = []
    for size in (1, 5, 16):
        cases.append({"kind": "sliding", "size": size, "length": T,
                      "visible": grid(masking_utils.sliding_window_causal_mask_function(size))})
        cases.append({"kind": "chunked", "size": size, "length": T,
                      "visible": grid(masking_utils.chunked_causal_mask_function(size, torch.zeros(1, dtype=torch.long)))})
    OUT.write_text(json.dumps({"reference": "transformers==5.23.0 masking_utils", "cases": cases}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
