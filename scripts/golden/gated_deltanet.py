"""Golden values for Gated DeltaNet, Qwen3-Next's linear-attention layer, computed by Hugging Face
transformers' ``Qwen3NextGatedDeltaNet``.

Reference: transformers==5.23.0, ``models/qwen3_next/modeling_qwen3_next.py``:
``Qwen3NextGatedDeltaNet.forward`` without a cache, through its pure-PyTorch fallbacks
``causal_conv1d_fn`` and ``torch_chunk_gated_delta_rule`` (chunk size 64, q and k
L2-normalised in the kernel) and ``Qwen3NextRMSNormGated``. flash-linear-attention and
causal-conv1d are not installed, so the fallbacks are what runs (the script checks it). Nothing
of them is copied into this project.

The shape is small: width 32, 2 key heads and 4 value heads of width 8 (Qwen3-Next's ratio of
value to key heads, 32 over 16), convolution width 4, 150 tokens (three chunks of 64, the last
one partial). Every weight is drawn here (the linear ones and the convolution N(0, 0.1^2), so
the layer is far from the identity; A_log and dt_bias as Qwen3-Next initialises them, then
perturbed; the norm's gain perturbed) and stored by its transformers name, which is also the
name in suite.encodings.gated_deltanet.GatedDeltaNet, with the input and the layer's output.

Regenerate with (transformers goes to a scratch folder; importing the modeling module also
imports the tokenizer classes, hence tokenizers and sentencepiece):

    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0 \
        tokenizers==0.23.3 sentencepiece==0.2.3
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/gated_deltanet.py

which writes tests/golden/gated-deltanet.json.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import torch
import transformers
from transformers import Qwen3NextConfig
from transformers.models.qwen3_next import modeling_qwen3_next as reference

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "gated-deltanet.json"
WIDTH, KEY_HEADS, VALUE_HEADS, HEAD_DIM, CONV, TOKENS = 32, 2, 4, 8, 4, 150


def main() -> None:
    assert transformers.__version__ == "5.23.0", transformers.__version__
    config = Qwen3NextConfig(hidden_size=WIDTH, num_hidden_layers=4, linear_num_key_heads=KEY_HEADS,
                             linear_num_value_heads=VALUE_HEADS, linear_key_head_dim=HEAD_DIM,
                             linear_value_head_dim=HEAD_DIM, linear_conv_kernel_dim=CONV, rms_norm_eps=1e-6)
    assert config.layer_types[0] == "linear_attention"
    torch.manual_seed(0)
    layer = reference.Qwen3NextGatedDeltaNet(config, layer_idx=0).eval()
    # the pure-PyTorch paths run: no kernel package (fla, causal-conv1d, the kernels hub) can replace them
    missing = [name for name in ("fla", "causal_conv1d", "kernels") if importlib.util.find_spec(name) is None]
    assert missing == ["fla", "causal_conv1d", "kernels"], f"installed: {set(['fla', 'causal_conv1d', 'kernels']) - set(missing)}"
    with torch.no_grad():
        for name in ("in_proj_qkvz", "in_proj_ba", "conv1d", "out_proj"):
            getattr(layer, name).weight.normal_(0.0, 0.1)
        layer.dt_bias.copy_(1.0 + 0.5 * torch.randn(VALUE_HEADS))
        layer.A_log.copy_(torch.empty(VALUE_HEADS).uniform_(0.01, 16).log() + 0.1 * torch.randn(VALUE_HEADS))
        layer.norm.weight.copy_(1.0 + 0.2 * torch.randn(HEAD_DIM))
        x = torch.randn(1, TOKENS, WIDTH)
        y = layer(x)
    weights = {name: p.tolist() for name, p in layer.state_dict().items()}
    OUT.write_text(json.dumps({"reference": "transformers==5.23.0 Qwen3NextGatedDeltaNet (torch_chunk_gated_delta_rule, "
                                            "causal_conv1d_fn, Qwen3NextRMSNormGated), no cache",
                               "width": WIDTH, "key_heads": KEY_HEADS, "value_heads": VALUE_HEADS, "head_dim": HEAD_DIM,
                               "conv_kernel": CONV, "layer_types": list(config.layer_types),
                               "weights": weights, "x": x[0].tolist(), "y": y[0].tolist()}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
