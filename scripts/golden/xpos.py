"""Golden values for xPos (Sun et al. 2022), straight from the paper's formula.

Independent of ``suite`` (pure Python, float64). Regenerate with

    .venv/bin/python scripts/golden/xpos.py

which writes tests/encodings/golden/xpos.json: zeta, and the logits q_n . k_m of
two fixed vectors under xPos, computed pair by pair as complex numbers:
sum_f zeta_f^((n - m)/scale_base) Re[(q_f e^{i n theta_f}) conj(k_f e^{i m theta_f})].
"""

import cmath
import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "tests" / "encodings" / "golden"


def main() -> None:
    d, gamma, scale_base, base = 16, 0.4, 512.0, 10000.0
    half = d // 2
    zeta = [(2 * i + gamma * d) / ((1 + gamma) * d) for i in range(half)]  # torchscale's form of (i/(d/2)+g)/(1+g)
    theta = [base ** (-2 * i / d) for i in range(half)]
    q = [0.3 + 0.1 * i for i in range(d)]
    k = [1.0 - 0.07 * i for i in range(d)]
    qc = [complex(q[f], q[f + half]) for f in range(half)]  # half-split pairs
    kc = [complex(k[f], k[f + half]) for f in range(half)]
    pairs = [(0, 0), (5, 0), (5, 3), (100, 40), (700, 0), (1500, 1400)]
    logits = []
    for n, m in pairs:  # query at n, key at m
        total = 0.0
        for f in range(half):
            rotated = qc[f] * cmath.exp(1j * n * theta[f]) * (kc[f] * cmath.exp(1j * m * theta[f])).conjugate()
            total += zeta[f] ** ((n - m) / scale_base) * rotated.real
        logits.append(total)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "xpos.json").write_text(json.dumps({
        "head_dim": d, "gamma": gamma, "scale_base": scale_base, "base": base, "zeta": zeta,
        "q": q, "k": k, "pairs": pairs, "logits": logits}, indent=1) + "\n")


if __name__ == "__main__":
    main()
