"""Golden values for the additive-bias family, straight from each paper's formula.

Independent of ``suite`` (pure Python, float64). Regenerate with

    .venv/bin/python scripts/golden/bias.py

which writes tests/encodings/golden/{alibi,t5,kerple,fire,sandwich}.json.
"""

import json
import math
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "tests" / "encodings" / "golden"


def write(name: str, data: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")


def alibi_slopes(n: int) -> list[float]:
    """Press et al. 2022, Sec. 3: for 8 heads 1/2^1 .. 1/2^8; in general the geometric
    sequence starting at 2^(-8/n) with that ratio. For n not a power of two: the
    slopes of the closest power of two below, then every other slope of twice it."""
    def geometric(k):
        return [2 ** (-8 * (i + 1) / k) for i in range(k)]

    if math.log2(n).is_integer():
        return geometric(n)
    below = 2 ** math.floor(math.log2(n))
    return geometric(below) + geometric(2 * below)[0::2][: n - below]


def t5_bucket(relative_position: int, num_buckets: int, max_distance: int) -> int:
    """Mesh TensorFlow's _relative_position_bucket(bidirectional=False), one scalar at a
    time; relative_position = memory (key) position - query position."""
    n = max(-relative_position, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return n
    val = max_exact + int(math.log(n / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact))
    return min(val, num_buckets - 1)


def kerple() -> dict:
    """KERPLE: log -r1 log(1 + r2 |m - n|); power -r1 |m - n|^r2."""
    distances = [0, 1, 2, 3, 5, 8, 13, 100, 1000]
    r1, r2_log, r2_pow = [0.5, 1.7], [0.3, 0.05], [0.6, 1.9]
    return {"distances": distances, "r1": r1, "r2_log": r2_log, "r2_power": r2_pow,
            "log": [[-a * math.log(1 + b * d) for d in distances] for a, b in zip(r1, r2_log)],
            "power": [[-a * d ** b for d in distances] for a, b in zip(r1, r2_pow)]}


def fire() -> dict:
    """FIRE: psi(x) = log(c x + 1); normalized distance psi(i - j) / psi(max(L, i))
    (the paper's code adds eps = 1e-6 to the denominator, kept here)."""
    c, L, eps = 0.1, 4.0, 1e-6
    positions = list(range(12))

    def psi(x):
        return math.log(abs(c * x) + 1)

    u = [[psi(i - j) / (psi(max(L, i)) + eps) if j <= i else None for j in positions] for i in positions]
    return {"c": c, "threshold": L, "positions": positions, "psi": [psi(x) for x in positions], "normalized": u}


def sandwich() -> dict:
    """Sandwich: (sum_{i < d'/2} cos((m - n) / base^(2i/d')) - d'/2) / (8h/H), h = 1 .. H."""
    dim, base, H = 16, 10000.0, 4
    distances = [0, 1, 2, 3, 7, 20, 100]
    kernel = [sum(math.cos(d / base ** (2 * i / dim)) for i in range(dim // 2)) - dim / 2 for d in distances]
    return {"dim": dim, "base": base, "n_heads": H, "distances": distances,
            "bias": [[k / (8 * h / H) for k in kernel] for h in range(1, H + 1)]}


if __name__ == "__main__":
    write("alibi", {str(n): alibi_slopes(n) for n in (8, 6, 12)})
    write("t5", {"relative_positions": list(range(0, -301, -1)),
                 "cases": [{"num_buckets": nb, "max_distance": md,
                            "buckets": [t5_bucket(r, nb, md) for r in range(0, -301, -1)]}
                           for nb, md in ((32, 128), (16, 64), (8, 20))]})
    write("kerple", kerple())
    write("fire", fire())
    write("sandwich", sandwich())
