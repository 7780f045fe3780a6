"""Golden values for StreamingLLM, computed by its authors' cache and attention forward.

Reference: mit-han-lab/streaming-llm at commit 2e50426 (the stored snapshot's HEAD; Xiao et
al. 2024, "Efficient Streaming Language Models with Attention Sinks"):
``streaming_llm/kv_cache.py`` (``StartRecentKVCache``: keep the first ``start_size`` and the
last ``recent_size`` entries) and ``streaming_llm/pos_shift/modify_llama.py``
(``llama_pos_shift_attention_forward``: the query rotated to its position id, every cached
key to its index in the cache). Both files are executed as written. They are driven as
``examples/eval_long_ppl.py`` drives them: one token per step, the cache trimmed after each,
the position id of the new token being the cache's length (what transformers' LlamaModel of
that time passes, ``arange(past_length, past_length + 1)``). The ``self`` the forward patches
is a stand-in Llama attention layer with one head whose ``rotary_emb`` gives transformers
5.23.0's ``LlamaRotaryEmbedding`` tables in the ``rotary_emb(x, seq_len=...)`` call of
transformers 4.33 that the file was written for (same tables, shape [1, 1, T, Dh]). q_proj is
the identity and k_proj, v_proj, o_proj random. The same cache object trims a tensor of token
indices beside the keys, so each step's attention weights (over the cache) are scattered back
to the text's key indices: row t of the golden [T, T] matrix, zero on evicted keys.

Regenerate with (the reference fetched at that commit, transformers in a scratch folder):

    git clone https://github.com/mit-han-lab/streaming-llm /tmp/streaming-llm
    git -C /tmp/streaming-llm checkout 2e50426
    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0 \
        tokenizers==0.23.3 sentencepiece==0.2.3
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/streaming_llm.py /tmp/streaming-llm

which writes tests/golden/streaming-llm.json.
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

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "streaming-llm.json"
HEAD_DIM, T, BASE = 16, 48, 10000.0
SETTINGS = [(4, 11), (1, 20), (2, 5)]  # (start_size S, recent_size R): the paper's 4 sinks, the script's default 1


def load(path: Path, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    return module


def stand_in_attention(rotary: LlamaRotaryEmbedding) -> types.SimpleNamespace:
    torch.manual_seed(0)

    def rotary_emb(x, seq_len):  # transformers 4.33's call: the tables of positions 0 .. seq_len - 1
        cos, sin = rotary(x, torch.arange(seq_len)[None])
        return cos[:, None], sin[:, None]

    layer = types.SimpleNamespace(config=types.SimpleNamespace(pretraining_tp=1), num_heads=1, num_key_value_heads=1,
                                  num_key_value_groups=1, head_dim=HEAD_DIM, hidden_size=HEAD_DIM,
                                  rotary_emb=rotary_emb)
    for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
        setattr(layer, name, torch.nn.Linear(HEAD_DIM, HEAD_DIM, bias=False))
    with torch.no_grad():
        layer.q_proj.weight.copy_(torch.eye(HEAD_DIM))
    return layer


def streamed_weights(forward, cache, layer, hidden: torch.Tensor) -> torch.Tensor:
    """[T, T] attention weights of eval_long_ppl.py's token-by-token loop, by text index."""
    weights = torch.zeros(T, T)
    past, held = None, None  # the cache, and the token indices it holds (trimmed by the same cache)
    for t in range(T):
        past_length = 0 if past is None else past[0].shape[-2]
        position_ids = torch.arange(past_length, past_length + 1)[None]
        _, w, past = forward(layer, hidden[:, t : t + 1], attention_mask=None, position_ids=position_ids,
                             past_key_value=past, output_attentions=True, use_cache=True)
        index = torch.tensor([[[[float(t)]]]])
        held = index if held is None else torch.cat([held, index], dim=2)
        weights[t, held[0, 0, :, 0].long()] = w[0, 0, 0]
        (past,), ((held, _),) = cache([past]), cache([(held, held)])
    return weights


def main(repo: Path) -> None:
    assert transformers.__version__ == "5.23.0", transformers.__version__
    forward = load(repo / "streaming_llm/pos_shift/modify_llama.py", "modify_llama").llama_pos_shift_attention_forward
    kv_cache = load(repo / "streaming_llm/kv_cache.py", "kv_cache")
    rotary = LlamaRotaryEmbedding(LlamaConfig(hidden_size=HEAD_DIM, num_attention_heads=1, head_dim=HEAD_DIM,
                                              rope_theta=BASE))
    layer = stand_in_attention(rotary)
    hidden = torch.randn(1, T, HEAD_DIM) * 2  # peaked enough that the weights depend on the positions
    cases = []
    with torch.no_grad():
        for start, recent in SETTINGS:
            cache = kv_cache.StartRecentKVCache(start_size=start, recent_size=recent)
            cases.append({"sinks": start, "recent": recent,
                          "attention_weights": streamed_weights(forward, cache, layer, hidden).tolist()})
        q, k = layer.q_proj(hidden)[0], layer.k_proj(hidden)[0]
    OUT.write_text(json.dumps({"reference": "mit-han-lab/streaming-llm@2e50426 streaming_llm/kv_cache.py "
                                            "StartRecentKVCache, streaming_llm/pos_shift/modify_llama.py "
                                            "llama_pos_shift_attention_forward, transformers==5.23.0 "
                                            "LlamaRotaryEmbedding",
                               "head_dim": HEAD_DIM, "length": T, "base": BASE, "q": q.tolist(), "k": k.tolist(),
                               "cases": cases}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
