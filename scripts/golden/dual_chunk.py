"""Golden values for Dual Chunk Attention, computed by its authors' attention forward.

Reference: HKUNLP/ChunkLlama at commit 2add4d7 (the stored snapshot's HEAD; An et al. 2024,
"Training-Free Long-Context Scaling of Large Language Models"), ``chunkllama_attn_replace.py``:
``ChunkLlamaRotaryEmbedding`` (the query tables of intra-chunk and successive/inter-chunk
positions, the key table of positions j mod c, all times ``get_mscale``) and ``forward`` (the
patched Llama attention). The file is executed as written but for its ``flash_attn`` import;
its module globals ``chunk_size`` and ``local_window`` are set as its
``replace_with_chunkllama(pretraining_length=L)`` sets them (3L // 4 and L // 8), without that
function's patching of transformers' classes. The ``self`` it patches is a stand-in Llama
attention layer with one head: q_proj and o_proj the identity, k_proj and v_proj random, its
``rotary_emb`` the file's own ``ChunkLlamaRotaryEmbedding``.

Two ways of driving it, each a set of cases:
- ``decoding``: token by token, as generation runs it. The first token goes through the
  prefill branch (one causal flash call over one token: its output is its own value); every
  later one through the decoding branch, which is plain PyTorch: the inter-chunk,
  successive-chunk and intra-chunk logits concatenated into one softmax. The cache is a
  stand-in with the two methods the forward calls (``update``, ``get_usable_length``: the
  API of transformers' DynamicCache of that time). ``max_position_embeddings`` is the whole
  length, so ``get_mscale`` is 1, as the reference gives within the pre-training length.
- ``prefill``: the whole sequence in one call, past the pre-training length, so the tables
  carry ``get_mscale(T / L)``. This branch calls flash attention per chunk and merges the
  parts by their log-sum-exp, casting the merge weights to bfloat16 (``lse_s.to(torch.bfloat16)``);
  ``flash_attn_func`` is replaced by its definition in PyTorch (softmax(q k^T / sqrt(Dh)) v,
  causal or not, and the log-sum-exp of each row), the CUDA kernel ported. Its outputs
  carry the reference's bfloat16 rounding of the merge, about 0.4% relative.

The golden values are the attention outputs (o_proj the identity: the weights times the
values). Regenerate with (the reference file fetched at that commit, transformers in a
scratch folder):

    git clone https://github.com/HKUNLP/ChunkLlama /tmp/ChunkLlama && git -C /tmp/ChunkLlama checkout 2add4d7
    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0 \
        tokenizers==0.23.3 sentencepiece==0.2.3
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/dual_chunk.py /tmp/ChunkLlama/chunkllama_attn_replace.py

which writes tests/golden/dual-chunk.json.
"""

from __future__ import annotations

import json
import math
import sys
import types
from pathlib import Path

import torch
import transformers

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "dual-chunk.json"
HEAD_DIM, BASE = 16, 10000.0
# (how it is driven, pre-training length L, sequence length T): chunk_len 20 and 15 with
# three to five chunks, so intra-, successive- and inter-chunk logits all occur
CASES = [("decoding", 32, 72), ("decoding", 24, 72), ("prefill", 32, 96)]


def flash_attn_func(q, k, v, causal=False, return_attn_probs=False):
    """flash_attn's ``flash_attn_func`` in PyTorch, for the shapes the reference passes:
    q, k, v [B, T, H, Dh]; returns (output [B, Tq, H, Dh], softmax_lse [B, H, Tq], None)."""
    q, k, v = (x.transpose(1, 2).float() for x in (q, k, v))  # [B, H, T, Dh]
    logits = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:  # equal lengths wherever the reference asks for causal
        logits = logits.masked_fill(torch.ones_like(logits, dtype=torch.bool).triu(1), float("-inf"))
    lse = torch.logsumexp(logits, dim=-1)
    return (logits.softmax(dim=-1) @ v).transpose(1, 2), lse, None


def reference_module(path: Path, pretraining_length: int) -> types.ModuleType:
    source = "\n".join(line for line in path.read_text().splitlines() if not line.startswith("from flash_attn"))
    module = types.ModuleType("chunkllama_attn_replace")
    module.__dict__["flash_attn_func"] = flash_attn_func
    exec(compile(source, str(path), "exec"), module.__dict__)
    module.chunk_size = pretraining_length * 3 // 4  # what replace_with_chunkllama sets
    module.local_window = pretraining_length // 8
    return module


class StandInCache:
    """The two methods of transformers' DynamicCache (4.38-4.40) that the forward calls."""

    def __init__(self):
        self.k = self.v = None

    def get_usable_length(self, new_seq_length, layer_idx=0):
        return 0 if self.k is None else self.k.shape[-2]

    def update(self, k, v, layer_idx, cache_kwargs=None):
        self.k = k if self.k is None else torch.cat([self.k, k], dim=-2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=-2)
        return self.k, self.v


def stand_in_attention(module, max_position_embeddings: int) -> types.SimpleNamespace:
    torch.manual_seed(0)
    layer = types.SimpleNamespace(num_heads=1, num_key_value_heads=1, num_key_value_groups=1, head_dim=HEAD_DIM,
                                  hidden_size=HEAD_DIM, layer_idx=0,
                                  rotary_emb=module.ChunkLlamaRotaryEmbedding(HEAD_DIM, max_position_embeddings, BASE))
    for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
        setattr(layer, name, torch.nn.Linear(HEAD_DIM, HEAD_DIM, bias=False))
    with torch.no_grad():
        layer.q_proj.weight.copy_(torch.eye(HEAD_DIM))
        layer.o_proj.weight.copy_(torch.eye(HEAD_DIM))
    return layer


def main(reference: Path) -> None:
    assert transformers.__version__ == "5.23.0", transformers.__version__
    cases = []
    for mode, L, T in CASES:
        module = reference_module(reference, L)
        layer = stand_in_attention(module, T if mode == "decoding" else L)
        torch.manual_seed(1)
        hidden = torch.randn(1, T, HEAD_DIM) * 2  # peaked enough that the weights depend on the positions
        with torch.no_grad():
            if mode == "decoding":
                cache, rows = StandInCache(), []
                for t in range(T):
                    out, _, _ = module.forward(layer, hidden[:, t : t + 1], position_ids=torch.tensor([[t]]),
                                               past_key_value=cache, use_cache=True)
                    rows.append(out[0, 0])
                output = torch.stack(rows)
            else:
                output = module.forward(layer, hidden, position_ids=torch.arange(T)[None])[0][0]
            q, k, v = (proj(hidden)[0] for proj in (layer.q_proj, layer.k_proj, layer.v_proj))
        cases.append({"mode": mode, "train_len": L, "length": T, "chunk_size": module.chunk_size,
                      "local_window": module.local_window, "q": q.tolist(), "k": k.tolist(), "v": v.tolist(),
                      "output": output.tolist()})
    OUT.write_text(json.dumps({"reference": "HKUNLP/ChunkLlama@2add4d7 chunkllama_attn_replace.py forward and "
                                            "ChunkLlamaRotaryEmbedding (flash_attn_func ported to PyTorch)",
                               "head_dim": HEAD_DIM, "base": BASE, "cases": cases}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
