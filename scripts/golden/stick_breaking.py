"""Golden values for stick-breaking attention as the kernel's test harness computes it (the spec
stick-breaking-harness; the layer the authors train is scripts/golden/stick_breaking_dolomite.py).

Reference: shawntan/stickbreaking-attention at commit 3147a38 (the stored snapshot's HEAD),
``stickbreaking_attention/sb_ref.py``, function ``stickbreaking(q, k, v, mask, cum_weight)``
(Tan et al. 2025, "Scaling Stick-Breaking Attention", Eq. 2), called as the repository's
``tests/test_attn.py`` calls it in ``ref_fwd``: ``cum_weight`` the strictly lower triangle of
ones, ``mask`` the upper triangle with the diagonal (``attend_current=False``), and the output
``o + rem[..., None] * v`` (what is left of the stick goes to the query's own value). The
file is executed as written (it imports only torch and math); ``ref_fwd`` itself is not
called because it builds its mask with ``.cuda()``, so the two lines that build the masks
are repeated here on the CPU. It runs in float64.

Regenerate with (the reference file fetched at that commit into a folder):

    git clone https://github.com/shawntan/stickbreaking-attention /tmp/sb && git -C /tmp/sb checkout 3147a38
    .venv/bin/python scripts/golden/stick_breaking.py /tmp/sb/stickbreaking_attention/sb_ref.py

which writes tests/golden/stick-breaking-harness.json.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "stick-breaking-harness.json"
HEADS, HEAD_DIM, T = 3, 8, 20


def reference(path: Path):
    module = types.ModuleType("sb_ref")
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    return module.stickbreaking


def main(path: Path) -> None:
    stickbreaking = reference(path)
    torch.manual_seed(0)
    # shifted as tests/test_attn.py shifts them, by a different amount per head, so the mean
    # logit is about -2.8, -0.8 and +1.4: heads that reach far back, and heads that keep near
    v = torch.randn(1, HEADS, T, HEAD_DIM, dtype=torch.float64)
    q = torch.randn(1, HEADS, T, HEAD_DIM, dtype=torch.float64) + 1
    k = torch.randn(1, HEADS, T, HEAD_DIM, dtype=torch.float64) + torch.tensor([-1.0, -0.3, 0.5], dtype=torch.float64).view(1, HEADS, 1, 1)
    cm = torch.ones(T, T, dtype=torch.float64).tril(-1)  # ref_fwd's cum_weight
    mask = torch.ones(T, T).triu(0).bool()  # ref_fwd's mask, attend_current=False
    out, rem = stickbreaking(q, k, v, mask, cm)
    out = out + rem[..., None] * v  # ref_fwd
    OUT.write_text(json.dumps({
        "reference": "shawntan/stickbreaking-attention@3147a3841b025a31d271fc8f873120ff6fa0461b "
                     "stickbreaking_attention/sb_ref.py stickbreaking(), as tests/test_attn.py ref_fwd (attend_current=False)",
        "heads": HEADS, "head_dim": HEAD_DIM, "length": T,
        "q": q[0].tolist(), "k": k[0].tolist(), "v": v[0].tolist(),
        "output": out[0].tolist(), "remainder": rem[0].tolist()}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
