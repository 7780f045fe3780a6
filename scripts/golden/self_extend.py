"""Golden values for Self-Extend, computed by its authors' attention forward.

Reference: datamllab/LongLM at commit cdbbb06 (the stored snapshot's HEAD),
``self_extend_patch/Llama.py``, function ``self_extend_forward`` (Jin et al. 2024, "LLM Maybe
LongLM: Self-Extend LLM Context Window Without Tuning"): neighbour attention with
the ordinary positions for keys closer than ``group_size_2`` (W), grouped attention beyond it
with query positions ``i // G + W - W / G`` and key positions ``j // G`` (``group_size_1``, G),
merged by the neighbour mask. The file is executed as written, with two changes that do not
touch the computation: its ``flash_attn`` imports (the CUDA kernels of its other forward) are
dropped, and the ``self`` it patches is a stand-in Llama attention layer with one head whose
``rotary_emb`` is transformers 5.23.0's ``LlamaRotaryEmbedding`` (the 4.38-4.40 call
``rotary_emb(x, position_ids, seq_len=None)`` it was written for, same tables). q_proj is
the identity and k_proj, v_proj, o_proj random, so q and k differ; the attention weights are
the golden values.

Regenerate with (the reference file fetched at that commit into a folder, transformers in a
scratch folder):

    git clone https://github.com/datamllab/LongLM /tmp/LongLM && git -C /tmp/LongLM checkout cdbbb06
    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0 \
        tokenizers==0.23.3 sentencepiece==0.2.3
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/self_extend.py /tmp/LongLM/self_extend_patch/Llama.py

which writes tests/golden/self-extend.json.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import torch
import transformers
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "self-extend.json"
HEAD_DIM, T, BASE = 16, 96, 10000.0
# (group_size_1 G, group_size_2 W); W / G not whole in the last four; the last two are the spec's
# defaults at L = 64 and L = 16 (G = 22, W = L / 4)
SETTINGS = [(4, 16), (8, 24), (3, 10), (22, 16), (22, 4)]


def reference_forward(path: Path):
    source = "\n".join(line for line in path.read_text().splitlines()
                       if not line.startswith(("from flash_attn", "from .selfextend_flash_attn")))
    module = types.ModuleType("longlm_llama")
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module.self_extend_forward


def stand_in_attention(rotary: LlamaRotaryEmbedding) -> types.SimpleNamespace:
    torch.manual_seed(0)
    layer = types.SimpleNamespace(config=types.SimpleNamespace(pretraining_tp=1), num_heads=1, num_key_value_heads=1,
                                  num_key_value_groups=1, head_dim=HEAD_DIM, hidden_size=HEAD_DIM, attention_dropout=0.0,
                                  training=False, layer_idx=0,
                                  rotary_emb=lambda x, position_ids, seq_len=None: rotary(x, position_ids))
    for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
        setattr(layer, name, torch.nn.Linear(HEAD_DIM, HEAD_DIM, bias=False))
    with torch.no_grad():
        layer.q_proj.weight.copy_(torch.eye(HEAD_DIM))
    return layer


def main(reference: Path) -> None:
    assert transformers.__version__ == "5.23.0", transformers.__version__
    forward = reference_forward(reference)
    rotary = LlamaRotaryEmbedding(LlamaConfig(hidden_size=HEAD_DIM, num_attention_heads=1, head_dim=HEAD_DIM,
                                              rope_theta=BASE))
    layer = stand_in_attention(rotary)
    hidden = torch.randn(1, T, HEAD_DIM) * 2  # peaked enough that the weights depend on the positions
    position_ids = torch.arange(T)[None]
    causal = torch.full((T, T), torch.finfo(torch.float32).min).triu(1)[None, None]
    cases = []
    with torch.no_grad():
        for group, window in SETTINGS:
            _, weights, _ = forward(layer, hidden, attention_mask=causal, position_ids=position_ids,
                                    output_attentions=True, group_size_1=group, group_size_2=window)
            cases.append({"group_size": group, "window": window, "attention_weights": weights[0, 0].tolist()})
        q, k = layer.q_proj(hidden)[0], layer.k_proj(hidden)[0]
    OUT.write_text(json.dumps({"reference": "datamllab/LongLM@cdbbb06 self_extend_patch/Llama.py self_extend_forward, "
                                            "transformers==5.23.0 LlamaRotaryEmbedding",
                               "head_dim": HEAD_DIM, "length": T, "base": BASE, "q": q.tolist(), "k": k.tolist(),
                               "cases": cases}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
