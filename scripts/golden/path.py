"""Golden values for PaTH attention, computed by the authors' code.

Reference: fla-org/flash-linear-attention at commit
bc3b101dcb713ddc5bd8924b66754eb68b5ccf89 (the PaTH authors' implementation lives there).
Nothing of it is copied into this project; the script reads ``fla/ops/path_attn/naive.py``
with ``git show COMMIT:FILE`` and runs its ``naive_path_attn`` as written: the PyTorch
reference that the authors' Triton kernel is tested against (``tests/ops/test_path_attn.py``
calls it with ``scale = D ** -0.5``, as here). It computes in float32 whatever its inputs.

Inputs as the authors' test draws them: q, k, v normal; w normal, then l2-normalised; beta
uniform (here in (0, 2), the layer's range, so that some H_t have negative eigenvalues);
the forget gate log uniform(0.95, 1) or zeros (PaTH without it). Two block sizes: the
default 64 (one block: the intra-block UT transform only) and 4 (three blocks of the 12
tokens: the inter-block products too).

Regenerate (fetch github:fla-org/flash-linear-attention first; einops from PyPI into a
scratch folder):

    .venv/bin/pip install --target /tmp/golden-deps einops==0.8.1
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/path.py \\
        --reference-repo /work/.mirror/fla-org+flash-linear-attention/repo

which writes tests/golden/path.json.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import einops
import torch
import torch.nn.functional as F
from reference import run_definitions, show

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "path.json"
COMMIT = "bc3b101dcb713ddc5bd8924b66754eb68b5ccf89"
NAIVE = "fla/ops/path_attn/naive.py"
B, T, H, D = 2, 12, 2, 4  # layout [B, T, H, D], as naive_path_attn takes it


def case(naive, seed: int, gate: bool, chunk_size: int) -> dict:
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(B, T, H, D, generator=gen) for _ in range(3))
    w = F.normalize(torch.randn(B, T, H, D, generator=gen), dim=-1, p=2)
    beta = torch.rand(B, T, H, generator=gen) * 2
    g = (torch.rand(B, T, H, generator=gen) * 0.05 + 0.95).log() if gate else torch.zeros(B, T, H)
    out = naive(q, k, v, w, beta, g, D ** -0.5, chunk_size=chunk_size)
    # stored [B, H, T, ...], the model's layout
    heads_first = lambda t: t.transpose(1, 2).tolist()  # noqa: E731
    return {"gate": gate, "chunk_size": chunk_size, "q": heads_first(q), "k": heads_first(k), "v": heads_first(v),
            "w": heads_first(w), "beta": heads_first(beta), "log_gate": heads_first(g), "out": heads_first(out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference-repo", required=True, help="git dir of fla-org/flash-linear-attention")
    args = parser.parse_args()
    namespace = {"torch": torch, "F": F, "rearrange": einops.rearrange}
    naive = run_definitions(show(args.reference_repo, COMMIT, NAIVE), ("naive_path_attn",), namespace,
                            f"{NAIVE}@{COMMIT}")["naive_path_attn"]
    cases = [case(naive, 0, False, 64), case(naive, 1, False, 4), case(naive, 2, True, 64), case(naive, 3, True, 4)]
    OUT.write_text(json.dumps({"reference": f"fla-org/flash-linear-attention@{COMMIT}:{NAIVE}", "scale": "D ** -0.5",
                               "attention": cases}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
