"""Golden layout of SWAN-GPT, transcribed from the paper: no public code exists.

Reference: Puvvada et al. 2025, "SWAN-GPT: An Efficient and Scalable Approach for
Long-Context Language Modeling" (arXiv 2504.08719; EMNLP 2025): the SWAN block is one
global-attention layer without positional encoding (NoPE) followed by three sliding-window
attention layers with RoPE (SWA-RoPE), repeated, the stack starting with the global layer;
the window is 512 tokens at a training length of 8,192 (its 1B model). Nothing here runs
the authors' code, since none is published; the file is the paper's rule evaluated for 12
layers, so a change to encodings/swan-gpt.yaml that breaks the rule fails the test.

The paper's inference-time scaling of the NoPE layers' logits (a logarithmic function of
the position fitted to per-window optimal scales, Sec. on dynamic attention scaling) is not
transcribed: its fitted constants could not be read from the paper on this machine, so it
is no part of the spec.

Regenerate with (no dependencies):

    .venv/bin/python scripts/golden/swan_gpt.py

which writes tests/golden/swan-gpt.json.
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "swan-gpt.json"
LAYERS = 12
PAPER_WINDOW, PAPER_TRAIN_LEN = 512, 8192


def main() -> None:
    # the paper's block: global NoPE first, then three SWA-RoPE layers
    layers = [{"encoding": "nope", "window": None} if i % 4 == 0 else {"encoding": "rope", "window": "sliding"}
              for i in range(LAYERS)]
    OUT.write_text(json.dumps({"reference": "Puvvada et al. 2025, SWAN-GPT (arXiv 2504.08719): the paper's layout, "
                                            "no public code",
                               "layers": layers, "paper_window": PAPER_WINDOW,
                               "paper_train_len": PAPER_TRAIN_LEN}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
