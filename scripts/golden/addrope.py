"""Golden values for AddRoPE (Chang 2024), straight from the post's formula.

Independent of ``suite`` (pure Python complex arithmetic). Regenerate with

    .venv/bin/python scripts/golden/addrope.py

which writes tests/encodings/golden/addrope.json: for one head, q_i + w * polar(1,
theta_f * i + phi_f) with each pair f viewed as the complex number q[f] + i q[f + Dh/2]
(half-split), theta_f = base^(-2f/Dh).
"""

import cmath
import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "tests" / "encodings" / "golden"


def main() -> None:
    d, base = 8, 10000.0
    half = d // 2
    weight = [0.5, -1.0, 2.0, 0.25]
    phase = [0.0, 0.3, -1.2, 3.0]
    q = [0.1 * f - 0.2 for f in range(d)]
    positions = [0, 1, 6, 250]
    out = []
    for i in positions:
        row = [0.0] * d
        for f in range(half):
            z = complex(q[f], q[f + half]) + weight[f] * cmath.exp(1j * (base ** (-2 * f / d) * i + phase[f]))
            row[f], row[f + half] = z.real, z.imag
        out.append(row)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "addrope.json").write_text(json.dumps({"head_dim": d, "base": base, "weight": weight, "phase": phase,
                                                  "q": q, "positions": positions, "added": out}, indent=1) + "\n")


if __name__ == "__main__":
    main()
