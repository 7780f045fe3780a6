"""Golden values for ReRoPE and leaky ReRoPE (Su 2023): exact logits.

Independent of ``suite`` (pure Python, float64, one query-key pair at a time).
Regenerate with

    .venv/bin/python scripts/golden/rerope.py

which writes tests/encodings/golden/rerope.json. For a query at i and a key at
j <= i with distance n = i - j the logit is RoPE's at relative position

    rel(n) = n                      if n < w
             w                      otherwise (ReRoPE)
             w + (n - w) / k        otherwise (leaky ReRoPE)

i.e. Re[sum_f q_f conj(k_f) e^{i rel theta_f}] / sqrt(Dh), pairs half-split
(f, f + Dh/2) and theta_f = base^(-2f/Dh).
"""

import cmath
import json
import math
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "tests" / "encodings" / "golden"


def vectors(T, d, a, b):
    return [[math.sin(a * t + b * f) + 0.1 * f for f in range(d)] for t in range(T)]


def logit(q, k, rel, base):
    half = len(q) // 2
    total = 0.0
    for f in range(half):
        theta = base ** (-2 * f / len(q))
        total += (complex(q[f], q[f + half]) * complex(k[f], k[f + half]).conjugate() * cmath.exp(1j * rel * theta)).real
    return total / math.sqrt(len(q))


def main() -> None:
    T, d, base, window = 12, 8, 10000.0, 4
    Q, K = vectors(T, d, 0.9, 0.4), vectors(T, d, -0.5, 1.3)
    cases = []
    for leaky_k in (None, 2.0):
        def rel(n):
            if n < window:
                return n
            return window if leaky_k is None else window + (n - window) / leaky_k

        cases.append({"leaky_k": leaky_k,
                      "logits": [[logit(Q[i], K[j], rel(i - j), base) if j <= i else None for j in range(T)]
                                 for i in range(T)]})
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "rerope.json").write_text(json.dumps({"base": base, "window": window, "q": Q, "k": K, "cases": cases},
                                                indent=1) + "\n")


if __name__ == "__main__":
    main()
