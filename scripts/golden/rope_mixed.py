"""Golden values for RoPE with learned per-head frequencies (RoPE-Mixed restricted to one axis), computed by the authors' code.

Reference: naver-ai/rope-vit at commit ce85c2e56c5ff3aadc10e1a849872081f7b86293 (Heo et al.,
"Rotary Position Embedding for Vision Transformer", ECCV 2024, arXiv 2403.13298, Sec. 3.3,
RoPE-Mixed), file ``models/vit_rope.py``: ``init_t_xy``, ``compute_mixed_cis`` (the depth-stacked
version their ``rope_vit_models`` calls, one row of ``freqs`` per layer), ``reshape_for_broadcast``
and ``apply_rotary_emb``. Nothing of it is copied into this project (those functions came to
rope-vit from meta-llama/codellama and are under the Llama 2 Community License there): the script
reads the file with ``git show COMMIT:FILE``, takes these four top-level functions out of it with
:func:`reference.run_definitions` (the file's other imports, timm and deit, are not needed by
them), and runs them as written, in a namespace holding torch alone. Their
``torch.cuda.amp.autocast(enabled=False)`` runs on the CPU as it is (a deprecation warning).

The 1-D restriction: a sequence of T tokens is an image one row high, ``init_t_xy(end_x=T,
end_y=1)``: t_x = 0 .. T-1, t_y = 0. The frequencies ``freqs`` [2, depth, H * d/2] are set, not
drawn by their 2-D ``init_random_2d_freqs``: f_x = RoPE's spectrum base^(-2i/d) times
exp(0.5 z) per layer, head and pair (z ~ N(0, 1), seed 0), about a quarter of them negated (their own
initialisation makes negative ones too); f_y ~ N(0, 1), nonzero, which t_y = 0 leaves unused.
Queries and keys [B, H, T, d] ~ N(0, 1) in float32, in the layout ``apply_rotary_emb`` takes.

Two cases:

* ``float32``: frequencies and positions in float32, as their model runs (the angles are
  float32 products t f, ``torch.polar`` in float32);
* ``float64_far``: the same functions on float64 frequencies and positions, at positions up to
  4095 (a decoding reader's ids past any training length): their ``apply_rotary_emb`` takes q
  and k through ``.float()`` (the inputs are float32 values, so exactly) and multiplies by the
  complex128 rotation, so the outputs are float64.

Recorded per case: f_x and f_y, the positions t_x, q and k, and per layer the rotated q and k
(``apply_rotary_emb(q, k, compute_mixed_cis(freqs, t_x, t_y, H)[layer])``, the call their
``forward_features`` makes for block ``layer``), in their interleaved layout.

Regenerate (fetch github:naver-ai/rope-vit first; no packages beyond torch):

    OMP_NUM_THREADS=1 .venv/bin/python scripts/golden/rope_mixed.py \\
        --reference-repo /work/.mirror/naver-ai+rope-vit/repo

which writes tests/golden/rope-mixed.json.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from reference import run_definitions, show

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "rope-mixed.json"
COMMIT = "ce85c2e56c5ff3aadc10e1a849872081f7b86293"
REFERENCE = f"naver-ai/rope-vit@{COMMIT}"
FILE = "models/vit_rope.py"
NAMES = ("init_t_xy", "compute_mixed_cis", "reshape_for_broadcast", "apply_rotary_emb")
B, T, DEPTH, N_HEAD, HEAD_DIM, BASE = 2, 16, 2, 4, 8, 10000.0
FAR = [0, 1, 2, 3, 5, 8, 13, 31, 64, 127, 255, 511, 1000, 2047, 3001, 4095]  # increasing ids, T of them


def frequencies(seed: int) -> torch.Tensor:
    """freqs [2, depth, H * d/2] in their layout (float32): f_x off RoPE's spectrum, f_y arbitrary."""
    g = torch.Generator().manual_seed(seed)
    rope = BASE ** (-torch.arange(0, HEAD_DIM, 2, dtype=torch.float64) / HEAD_DIM)  # [d/2]
    f_x = rope * torch.exp(0.5 * torch.randn(DEPTH, N_HEAD, HEAD_DIM // 2, generator=g, dtype=torch.float64))
    f_x = torch.where(torch.rand(f_x.shape, generator=g) < 0.25, -f_x, f_x)
    f_y = torch.randn(DEPTH, N_HEAD, HEAD_DIM // 2, generator=g, dtype=torch.float64)
    return torch.stack((f_x, f_y)).view(2, DEPTH, -1).float()


def case(ns: dict, name: str, freqs: torch.Tensor, t_x: torch.Tensor, t_y: torch.Tensor) -> dict:
    g = torch.Generator().manual_seed(1)
    q, k = (torch.randn(B, N_HEAD, T, HEAD_DIM, generator=g) for _ in range(2))  # float32
    cis = ns["compute_mixed_cis"](freqs, t_x, t_y, N_HEAD)  # [depth, H, T, d/2]
    # apply_rotary_emb returns the dtype it is given (type_as): float64 inputs keep the complex128 product
    q_in, k_in = q.to(freqs.dtype), k.to(freqs.dtype)
    rotated = [ns["apply_rotary_emb"](q_in, k_in, cis[layer]) for layer in range(DEPTH)]
    return {"name": name, "dtype": str(freqs.dtype).removeprefix("torch."), "f_x": freqs[0].tolist(),
            "f_y": freqs[1].tolist(), "t_x": t_x.tolist(), "t_y": t_y.tolist(), "q": q.tolist(), "k": k.tolist(),
            "q_rot": [r[0].tolist() for r in rotated], "k_rot": [r[1].tolist() for r in rotated]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-repo", required=True, help="the git directory of the fetched snapshot")
    args = parser.parse_args()
    ns = run_definitions(show(args.reference_repo, COMMIT, FILE), NAMES, {"torch": torch}, f"{FILE}@{COMMIT}")
    freqs = frequencies(seed=0)
    t_x, t_y = ns["init_t_xy"](end_x=T, end_y=1)  # one row: t_x = 0 .. T-1, t_y = 0
    assert torch.equal(t_x, torch.arange(T, dtype=torch.float32)) and not t_y.any()
    far = torch.tensor(FAR, dtype=torch.float64)
    cases = [case(ns, "float32", freqs, t_x, t_y),
             case(ns, "float64_far", freqs.double(), far, torch.zeros_like(far))]
    golden = {"reference": REFERENCE, "file": FILE, "functions": list(NAMES),
              "command": "scripts/golden/rope_mixed.py --reference-repo <naver-ai/rope-vit>",
              "shape": {"B": B, "T": T, "depth": DEPTH, "n_head": N_HEAD, "head_dim": HEAD_DIM},
              "layout": "q, k [B, H, T, d] with pairs (2i, 2i + 1); f_x, f_y [depth, H * d/2] head-major",
              "cases": cases}
    OUT.write_text(json.dumps(golden) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
