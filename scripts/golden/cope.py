"""Golden values for CoPE (Golovneva et al. 2024) on a small hand example.

Independent of ``suite`` (pure Python, loops over i, j, t as the paper writes them).
Regenerate with

    .venv/bin/python scripts/golden/cope.py

which writes tests/encodings/golden/cope.json. One head, four tokens, Dh = 2,
npos_max = 3 (so positions are clamped at 2):

    z_ij = q_i . k_j / sqrt(Dh)              (the logits, j <= i)
    g_ij = sigmoid(z_ij),  p_ij = min(sum_{t=j}^{i} g_it, npos_max - 1)
    e(p) = (p - floor p) e[ceil p] + (1 - p + floor p) e[floor p]
    out_ij = z_ij + q_i . e(p_ij)
"""

import json
import math
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "tests" / "encodings" / "golden"

Q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, -1.0]]
K = [[1.0, 0.5], [2.0, 0.0], [-1.0, 1.0], [0.0, 0.5]]
E = [[0.1, -0.2, 0.3], [0.5, 0.0, -0.4]]  # [Dh, npos_max]: column p is e[p]
NPOS = 3


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def main() -> None:
    T, dh = len(Q), len(Q[0])
    logits = [[dot(Q[i], K[j]) / math.sqrt(dh) for j in range(T)] for i in range(T)]
    gates = [[1 / (1 + math.exp(-logits[i][j])) if j <= i else 0.0 for j in range(T)] for i in range(T)]
    positions = [[min(sum(gates[i][t] for t in range(j, i + 1)), NPOS - 1) if j <= i else None for j in range(T)]
                 for i in range(T)]
    out = [[None] * T for _ in range(T)]
    for i in range(T):
        for j in range(i + 1):
            p = positions[i][j]
            lo, hi = math.floor(p), math.ceil(p)
            e = [(p - lo) * E[d][hi] + (1 - p + lo) * E[d][lo] for d in range(dh)]
            out[i][j] = logits[i][j] + dot(Q[i], e)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "cope.json").write_text(json.dumps({"q": Q, "k": K, "pos_emb": E, "npos_max": NPOS, "gates": gates,
                                               "positions": positions, "scores": out}, indent=1) + "\n")


if __name__ == "__main__":
    main()
