"""Golden values for the rotary family, straight from each paper's formula.

Independent of ``suite`` (pure Python and numpy, float64). Regenerate with

    .venv/bin/python scripts/golden/rotary.py

which writes tests/encodings/golden/{rope,rope-partial,rope-pi,rope-ntk,
rope-dynamic-ntk,yarn,rope-llama3}.json.

Convention shared with the implementation (and stated in its docstring): rotary
pairs are half-split, dimension f paired with f + r/2.
"""

import json
import math
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[2] / "tests" / "encodings" / "golden"


def write(name: str, data: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")


def roformer_theta(r: int, base: float, exponent_dim: int | None = None) -> list[float]:
    """RoFormer Sec. 3.2.2: theta_f = base^(-2(f-1)/d), f = 1 .. d/2 (here 0-based)."""
    d = exponent_dim or r
    return [base ** (-2 * f / d) for f in range(r // 2)]


def rotate(x: np.ndarray, position: float, theta: list[float]) -> np.ndarray:
    """Multiply pair f, viewed as x[f] + i x[f + r/2], by exp(i * position * theta_f)."""
    half = len(theta)
    out = x.copy()
    for f, t in enumerate(theta):
        a = position * t
        re, im = x[f], x[f + half]
        out[f] = re * math.cos(a) - im * math.sin(a)
        out[f + half] = re * math.sin(a) + im * math.cos(a)
    return out


def sample_vector(d: int) -> np.ndarray:
    return np.array([math.sin(0.7 * i + 0.3) + 0.05 * i for i in range(d)])


def rope() -> None:
    d, base, positions = 16, 10000.0, [0, 1, 5, 37, 1000]
    theta = roformer_theta(d, base)
    x = sample_vector(d)
    write("rope", {"head_dim": d, "base": base, "inv_freq": theta, "positions": positions, "x": x.tolist(),
                   "angles": [[p * t for t in theta] for p in positions],
                   "rotated": [rotate(x, p, theta).tolist() for p in positions]})


def rope_partial() -> None:
    d, fraction, base = 16, 0.25, 10000.0
    r = int(d * fraction)  # GPT-NeoX: rotary_ndims = int(head_size * rotary_pct)
    x = sample_vector(d)
    data = {"head_dim": d, "fraction": fraction, "base": base, "rotary_dim": r, "x": x.tolist(), "position": 7,
            "exponents": {}}
    # the two partial-rotary exponents: base^(-2i/r) (GPT-NeoX) and base^(-2i/Dh)
    for name, exponent_dim in (("rotary_dim", r), ("head_dim", d)):
        theta = roformer_theta(r, base, exponent_dim)
        rotated = np.concatenate([rotate(x[:r], 7, theta), x[r:]])  # the other dims pass through
        data["exponents"][name] = {"inv_freq": theta, "rotated": rotated.tolist()}
    write("rope-partial", data)


def rope_pi() -> None:
    """Chen et al. 2023 Eq. (3): f'(x, m) = f(x, m L / L'), i.e. position m at factor s acts as m / s."""
    d, base, s = 16, 10000.0, 4.0
    theta = roformer_theta(d, base)
    x = sample_vector(d)
    write("rope-pi", {"head_dim": d, "base": base, "factor": s, "inv_freq": [t / s for t in theta],
                      "x": x.tolist(), "position": 13, "rotated": rotate(x, 13 / s, theta).tolist()})


def rope_ntk() -> None:
    """bloc97 / YaRN Eq. (16): b' = b * s^(|D| / (|D| - 2))."""
    cases = []
    for d, base, s in ((16, 10000.0, 4.0), (64, 10000.0, 8.0)):
        new_base = base * s ** (d / (d - 2))
        cases.append({"head_dim": d, "base": base, "factor": s, "new_base": new_base,
                      "inv_freq": roformer_theta(d, new_base)})
    write("rope-ntk", {"cases": cases})


def rope_dynamic_ntk() -> None:
    """emozilla's dynamic NTK as in Hugging Face's port, with scaling factor a = 1:
    b' = b * ((a * l / L) - (a - 1))^(d / (d - 2)) for l > L, b otherwise."""
    d, base, L, a = 16, 10000.0, 64, 1.0
    cases = []
    for seq_len in (10, 64, 100, 256):
        b = base * ((a * seq_len / L) - (a - 1)) ** (d / (d - 2)) if seq_len > L else base
        cases.append({"seq_len": seq_len, "inv_freq": roformer_theta(d, b)})
    write("rope-dynamic-ntk", {"head_dim": d, "base": base, "train_len": L, "cases": cases})


def yarn_case(d: int, base: float, L: int, s: float, alpha: float, beta: float) -> dict:
    """YaRN Eqs. (17)-(19): lambda_d = 2 pi b^(2d/|D|), r(d) = L / lambda_d,
    gamma(r) = 0 if r < alpha, 1 if r > beta, (r - alpha)/(beta - alpha) otherwise,
    h(theta_d) = (1 - gamma) theta_d / s + gamma theta_d.
    Eq. (22): sqrt(1/t) = 0.1 ln(s) + 1."""
    inv_freq = []
    for f in range(d // 2):
        wavelength = 2 * math.pi * base ** (2 * f / d)
        r = L / wavelength
        gamma = 0.0 if r < alpha else 1.0 if r > beta else (r - alpha) / (beta - alpha)
        theta = base ** (-2 * f / d)
        inv_freq.append((1 - gamma) * theta / s + gamma * theta)
    return {"head_dim": d, "base": base, "train_len": L, "factor": s, "beta_fast": beta, "beta_slow": alpha,
            "inv_freq": inv_freq, "mscale": 0.1 * math.log(s) + 1}


def yarn() -> None:
    write("yarn", {"cases": [yarn_case(64, 10000.0, 2048, 8.0, 1.0, 32.0),
                             yarn_case(16, 10000.0, 64, 4.0, 1.0, 32.0),
                             yarn_case(32, 10000.0, 512, 16.0, 1.0, 32.0)],
                   "mscale": {str(s): 0.1 * math.log(s) + 1 for s in (2, 4, 8, 16)}})


def llama3_case(d: int, base: float, L: int, s: float, low: float, high: float) -> dict:
    """Meta's apply_scaling (llama-models, Llama 3.1), per frequency."""
    low_freq_wavelen, high_freq_wavelen = L / low, L / high
    out = []
    for freq in roformer_theta(d, base):
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            out.append(freq)
        elif wavelen > low_freq_wavelen:
            out.append(freq / s)
        else:
            smooth = (L / wavelen - low) / (high - low)
            out.append((1 - smooth) * freq / s + smooth * freq)
    return {"head_dim": d, "base": base, "train_len": L, "factor": s, "low_freq_factor": low,
            "high_freq_factor": high, "inv_freq": out}


def rope_llama3() -> None:
    write("rope-llama3", {"cases": [llama3_case(128, 500000.0, 8192, 8.0, 1.0, 4.0),
                                    llama3_case(16, 10000.0, 64, 4.0, 1.0, 4.0)]})


if __name__ == "__main__":
    rope()
    rope_partial()
    rope_pi()
    rope_ntk()
    rope_dynamic_ntk()
    yarn()
    rope_llama3()
