"""Golden values for xPos, computed by the authors' torchscale code.

The reference is microsoft/torchscale, ``torchscale/component/xpos_relative_position.py``
(class ``XPOS``), used by ``torchscale/component/multihead_attention.py`` as

    k = self.xpos(k, offset=0, downscale=True)
    q = self.xpos(q, offset=offset, downscale=False)

Its source is not part of this project: the script takes it from a git snapshot at run
time (``git show COMMIT:FILE`` into a temporary folder) and imports it. It needs only
torch (no install).

One departure from running it as shipped, for precision only: the module builds its
angles with ``dtype=torch.float`` (float32); at position 128 that rounds an angle by
up to ~1e-5, the size of the tolerance. The script runs the module with float64 in place of
float32 (``torch.float`` seen by the module is float64, and the default dtype is float64),
so the golden values are its formula at float64 precision.

Regenerate with (fetch github:microsoft/torchscale first):

    .venv/bin/python scripts/golden/xpos.py \\
        --reference-repo /work/.mirror/microsoft+torchscale/repo \\
        --commit 4d1e0e82e5adf86dd424f1463192635b73fc8efc

which writes tests/golden/xpos.json: per case the queries and keys as given
to XPOS ([T, Dh], torchscale's interleaved pair layout: pairs (2i, 2i + 1)) and the
rotated and scaled queries and keys it returns (the test takes their products q_n . k_m).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import tempfile
import types
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden"
REPO = "microsoft/torchscale"
FILE = "torchscale/component/xpos_relative_position.py"
HEAD_DIM, SCALE_BASE = 16, 512
# (keys, queries): a whole window, odd and even (the centre differs), a long one, and
# the last 5 queries of a window as torchscale's incremental decoding gives them (offset)
CASES = [(25, 25), (24, 24), (128, 128), (40, 5)]


def load_xpos(git_dir: str, commit: str, tmp: Path):
    source = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{FILE}"],
                            check=True, capture_output=True, text=True).stdout
    path = tmp / "xpos_relative_position.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("xpos_relative_position", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # float64 wherever the module says torch.float (see the module docstring)
    module.torch = types.SimpleNamespace(**{**{n: getattr(torch, n) for n in dir(torch) if not n.startswith("__")},
                                            "float": torch.float64})
    return module


def run_case(module, n_keys: int, n_queries: int, seed: int) -> dict:
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(1, n_queries, HEAD_DIM, generator=gen, dtype=torch.float64)  # [B*H, T, Dh], torchscale's layout
    k = torch.randn(1, n_keys, HEAD_DIM, generator=gen, dtype=torch.float64)
    xpos = module.XPOS(HEAD_DIM, SCALE_BASE).double()
    k_out = xpos(k, offset=0, downscale=True)  # as multihead_attention.py calls it
    q_out = xpos(q, offset=n_keys - n_queries, downscale=False)
    return {"n_keys": n_keys, "n_queries": n_queries, "offset": n_keys - n_queries,
            **{name: rounded(t[0]) for name, t in (("q", q), ("k", k), ("q_out", q_out), ("k_out", k_out))},
            "zeta": xpos.scale.tolist()}


def rounded(t: torch.Tensor) -> list:
    """10 significant digits: 1e-10 relative, far below the tolerance, and half the file."""
    return [[float(f"{v:.10g}") for v in row] for row in t.tolist()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-repo", required=True, help="git dir of a microsoft/torchscale snapshot")
    parser.add_argument("--commit", required=True)
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)
    with tempfile.TemporaryDirectory() as tmp:
        module = load_xpos(args.reference_repo, args.commit, Path(tmp))
        cases = [run_case(module, n_keys, n_queries, seed) for seed, (n_keys, n_queries) in enumerate(CASES)]
    reference = {"repo": REPO, "commit": args.commit, "file": FILE, "library": f"torch=={torch.__version__}",
                 "command": f".venv/bin/python scripts/golden/xpos.py --reference-repo <{REPO} snapshot> "
                            f"--commit {args.commit}"}
    OUT.mkdir(parents=True, exist_ok=True)
    text = json.dumps({
        "reference": reference, "head_dim": HEAD_DIM, "gamma": 0.4, "scale_base": SCALE_BASE, "base": 10000.0,
        "layout": "interleaved: torchscale pairs dims (2i, 2i + 1); ours (i, i + Dh/2)", "cases": cases}, indent=1)
    (OUT / "xpos.json").write_text(one_row_a_line(text) + "\n")


def one_row_a_line(text: str) -> str:
    """Innermost lists of indented JSON on one line each."""
    return re.sub(r"\[\s*([^\[\]{}]*?)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)


if __name__ == "__main__":
    main()
