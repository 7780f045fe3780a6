"""Golden values for PoPE, computed by lucidrains/PoPE-pytorch, the implementation of the paper most people run.

Reference: PoPE-pytorch==0.0.15 from PyPI (identical to git ee11cab0dda8361b02fec56975e84e419ea6a631
of github.com/lucidrains/PoPE-pytorch, MIT): ``PoPE(dim, heads=H, theta=10000)`` gives the
frequencies of the position ids and the clamped key bias, ``apply_pope_to_qk`` the polar
coordinates of q and k (softplus magnitudes), ``compute_attn_similarity`` their logits (its
non-fused path: no GPU here) and ``flash_attn_with_pope(..., causal=True, fused=False)`` the
attention output with softmax scale 1/sqrt(head_dim). Nothing of it is copied into this
project. The key bias is set to values inside and outside [-2 pi, 0] (one above 0, one below
-2 pi) so the clamp is exercised; the position ids are arbitrary increasing ids, and a
decoding step (the last query over every key) is checked too.

Regenerate with (the package and its two dependencies go to a scratch folder; the project's
torch runs it):

    .venv/bin/pip install --no-deps --target /tmp/pope-deps PoPE-pytorch==0.0.15 einops==0.8.2 \
        torch-einops-utils==0.2.0
    PYTHONPATH=/tmp/pope-deps .venv/bin/python scripts/golden/pope.py

which writes tests/golden/pope.json.
"""

from __future__ import annotations

import json
import math
from importlib.metadata import version
from pathlib import Path

import torch
from PoPE_pytorch import PoPE, apply_pope_to_qk, compute_attn_similarity, flash_attn_with_pope

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "pope.json"
HEADS, HEAD_DIM = 2, 32  # compute_attn_similarity takes head dims 32, 48, 64, 128, 256
POSITIONS = [0, 1, 2, 5, 9, 15, 16, 31, 37, 63, 64, 100, 127, 200]


def main() -> None:
    assert version("PoPE-pytorch") == "0.0.15", version("PoPE-pytorch")
    torch.manual_seed(0)
    pope = PoPE(HEAD_DIM, heads=HEADS, theta=10000)
    with torch.no_grad():
        pope.bias.uniform_(-2 * math.pi, 0.0)
        pope.bias[0, 0], pope.bias[1, 1] = 0.5, -7.0  # outside [-2 pi, 0]: clamped
    T = len(POSITIONS)
    q, k, v = (torch.randn(1, HEADS, T, HEAD_DIM) for _ in range(3))
    pos_emb = pope(torch.tensor(POSITIONS, dtype=torch.float))
    with torch.no_grad():
        q2, k2 = apply_pope_to_qk(pos_emb, q, k)
        logits = compute_attn_similarity(q, k, pos_emb)
        out = flash_attn_with_pope(q, k, v, pos_emb=pos_emb, causal=True, fused=False)
        q_last, _ = apply_pope_to_qk(pos_emb, q[..., -1:, :], k)  # a decoding step: the last query only
    OUT.write_text(json.dumps({"reference": "PoPE-pytorch==0.0.15 (lucidrains/PoPE-pytorch@ee11cab): PoPE, "
                                            "apply_pope_to_qk, compute_attn_similarity, flash_attn_with_pope",
                               "heads": HEADS, "head_dim": HEAD_DIM, "theta": 10000, "positions": POSITIONS,
                               "bias": pope.bias.tolist(), "q": q[0].tolist(), "k": k[0].tolist(), "v": v[0].tolist(),
                               "q_polar": q2[0].tolist(), "k_polar": k2[0].tolist(), "q_last_polar": q_last[0].tolist(),
                               "logits": logits[0].tolist(), "out": out[0].tolist()}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
