"""Golden values for the attention-sink metric, computed by its authors' code.

Reference: sail-sg/Attention-Sink at commit af49727230ee57b6ecadcc74547653fc776833fc,
``eval_sink_open_source.py``, function ``compute_attention_sink(score_path, epsilon)`` (Gu et
al. 2025, "When Attention Sink Emerges in Language Models: An Empirical View", ICLR 2025,
Sec. 3.1): it loads attention maps (samples, layers, heads, T, T) from a ``.npy`` file and
returns, per key position, the percentage of (sample, layer, head) whose mean attention over
the queries that see the key exceeds epsilon. Only that function is executed (its file also
imports transformers, which it does not use), with numpy and torch, as written.

The maps are causal softmaxes of seeded random logits whose scale differs per head (so some
heads put most of their weight on the first key and some spread it), built here and by the
test alike (``tests/evaluation/test_attention_sinks.py``: :func:`maps`); the golden file holds
the reference's percentages at key 0 for several thresholds.

Regenerate with (the reference file at that commit in a folder):

    git --git-dir <Attention-Sink snapshot> show af49727:eval_sink_open_source.py > /tmp/ref/eval_sink_open_source.py
    .venv/bin/python scripts/golden/attention_sinks.py /tmp/ref/eval_sink_open_source.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import run_definitions  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "attention-sinks.json"
SHAPE = (3, 2, 4, 24)  # samples, layers, heads, T
EPSILONS = (0.2, 0.3, 0.4, 0.5)


def maps(seed: int = 0) -> torch.Tensor:
    """Causal attention maps [S, L, H, T, T] in float64: softmax of N(0, 1) logits times a
    per-(layer, head) temperature, plus a per-head boost of the first key."""
    S, L, H, T = SHAPE
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(S, L, H, T, T, generator=g, dtype=torch.float64)
    temperature = torch.linspace(0.2, 3.0, L * H, dtype=torch.float64).view(1, L, H, 1, 1)
    boost = torch.linspace(0.0, 4.0, L * H, dtype=torch.float64).view(1, L, H, 1)
    logits = logits * temperature
    logits[..., 0] += boost
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return logits.masked_fill(future, float("-inf")).softmax(dim=-1)


def main(path: Path) -> None:
    namespace = run_definitions(path.read_text(), ("compute_attention_sink",), {"np": np, "torch": torch},
                                str(path))
    with tempfile.TemporaryDirectory() as tmp:
        score_path = Path(tmp) / "scores.npy"
        np.save(score_path, maps().numpy())
        rates = {str(eps): float(namespace["compute_attention_sink"](str(score_path), eps)[0]) for eps in EPSILONS}
    OUT.write_text(json.dumps({
        "reference": {"repo": "sail-sg/Attention-Sink", "commit": "af49727230ee57b6ecadcc74547653fc776833fc",
                      "file": "eval_sink_open_source.py", "function": "compute_attention_sink",
                      "command": "scripts/golden/attention_sinks.py"},
        "shape": list(SHAPE), "seed": 0,
        "sink_rate_percent_at_key0": rates,
    }, indent=1) + "\n")
    print(OUT, rates)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
