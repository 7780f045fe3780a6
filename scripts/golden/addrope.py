"""Golden values for AddRoPE, computed by the author's own training code.

The reference is the code of the blog post's author (Jonathan Chang, "Additive Rotary
Embedding - A Competitive Alternative to RoPE", jonathanc.net): his fork of Meta's
lingua, cccntu/lingua, branch ``addrope``, ``lingua/transformer.py``: the class
``AdditiveRotaryEmbedding`` (one per TransformerBlock) and the function
``apply_additive_rotary_emb``. Its source is not part of this project: the script
takes that file from a git snapshot at run time (``git show COMMIT:FILE``), and since
the file's imports need xformers and lingua, extracts the three definitions it uses
(``reshape_for_broadcast``, ``apply_additive_rotary_emb``, ``AdditiveRotaryEmbedding``)
with ``ast`` and runs them with torch alone.

Two departures from running it as shipped, for precision only: ``inv_freq`` is given
in float64 (the same formula; the reference builds it in float32, whose angles at
position 511 are off by ~5e-5, more than the tolerance), and the embeddings are cast
back to float32 where ``apply_additive_rotary_emb`` asserts float32 (a rounding of
~6e-8 relative).

Regenerate with (fetch github:cccntu/lingua first; needs only torch):

    .venv/bin/python scripts/golden/addrope.py \\
        --reference-repo /work/.mirror/cccntu+lingua/repo \\
        --commit af71c61574438644865154fabf8403dd9c5fecc5

which writes tests/golden/addrope.json: per case the position ids, the
learnable phases and weights (random, so that every one of them is tested), the queries
and keys [T, H, Dh] in the reference's layout (pairs interleaved: (2f, 2f + 1) is
(real, imaginary) of pair f) and what ``apply_additive_rotary_emb`` returns for them.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import typing
from pathlib import Path

import torch
from torch import nn

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden"
REPO = "cccntu/lingua"
BRANCH = "addrope"
FILE = "lingua/transformer.py"
NAMES = ("reshape_for_broadcast", "apply_additive_rotary_emb", "AdditiveRotaryEmbedding")
HEADS, HEAD_DIM, MAX_SEQLEN = 2, 8, 512
CASES = {"consecutive": list(range(20)), "sparse": [0, 3, 4, 9, 100, 250, 511]}


def load_reference(git_dir: str, commit: str) -> dict:
    source = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{FILE}"],
                            check=True, capture_output=True, text=True).stdout
    tree = ast.parse(source)
    wanted = [node for node in tree.body if getattr(node, "name", None) in NAMES]
    if {node.name for node in wanted} != set(NAMES):
        raise SystemExit(f"{FILE}@{commit} lacks one of {NAMES}")
    namespace = {"torch": torch, "nn": nn, "F": torch.nn.functional,
                 "Optional": typing.Optional, "Tuple": typing.Tuple}
    exec(compile(ast.Module(body=wanted, type_ignores=[]), f"{REPO}/{FILE}", "exec"), namespace)
    return namespace


def run_case(ref: dict, positions: list[int], seed: int) -> dict:
    gen = torch.Generator().manual_seed(seed)
    emb = ref["AdditiveRotaryEmbedding"](head_dim=HEAD_DIM, n_heads=HEADS, max_seqlen=MAX_SEQLEN, theta=10000.0)
    with torch.no_grad():
        for p in (emb.q_phase, emb.k_phase):
            p.copy_(torch.rand(p.shape, generator=gen) * 6 - 3)
        for p in (emb.q_weight, emb.k_weight):
            p.copy_(torch.rand(p.shape, generator=gen) * 2 - 0.5)
        n_freqs = HEAD_DIM // 2  # float64, else the formula of its compute_inv_freq
        emb.inv_freq = 1.0 / (emb.theta ** (torch.arange(0, n_freqs, dtype=torch.float64) / n_freqs))
        q_emb, k_emb = emb(tok_idx=torch.tensor(positions))  # [T, H, F, 2] each
        T = len(positions)
        xq = torch.randn(1, T, HEADS, HEAD_DIM, generator=gen, dtype=torch.float64)  # B S H D, the reference's layout
        xk = torch.randn(1, T, HEADS, HEAD_DIM, generator=gen, dtype=torch.float64)
        xq_out, xk_out = ref["apply_additive_rotary_emb"](xq, xk, 1, (q_emb.float(), k_emb.float()))
    return {"positions": positions,
            "q_phase": emb.q_phase.tolist(), "k_phase": emb.k_phase.tolist(),
            "q_weight": emb.q_weight.tolist(), "k_weight": emb.k_weight.tolist(),
            "q": xq[0].tolist(), "k": xk[0].tolist(), "q_out": xq_out[0].tolist(), "k_out": xk_out[0].tolist()}


def one_row_a_line(text: str) -> str:
    """Innermost lists of indented JSON on one line each."""
    return re.sub(r"\[\s*([^\[\]{}]*?)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-repo", required=True, help="git dir of a cccntu/lingua snapshot")
    parser.add_argument("--commit", required=True, help=f"the tip of its branch {BRANCH!r}")
    args = parser.parse_args()
    ref = load_reference(args.reference_repo, args.commit)
    init = ref["AdditiveRotaryEmbedding"](head_dim=HEAD_DIM, n_heads=HEADS)
    init.reset_parameters()  # the reference's initialisation, which the post does not state
    reference = {"repo": REPO, "branch": BRANCH, "commit": args.commit, "file": f"{FILE} ({', '.join(NAMES)})",
                 "library": f"torch=={torch.__version__}",
                 "command": f".venv/bin/python scripts/golden/addrope.py --reference-repo <{REPO} snapshot> "
                            f"--commit {args.commit}"}
    text = json.dumps({
        "reference": reference, "n_heads": HEADS, "head_dim": HEAD_DIM, "base": 10000.0,
        "layout": "interleaved: the reference pairs dims (2f, 2f + 1); ours (f, f + Dh/2)",
        "init": {"q_weight": init.q_weight.tolist(), "k_weight": init.k_weight.tolist(),
                 "q_phase": init.q_phase.tolist(), "k_phase": init.k_phase.tolist()},
        "cases": {name: run_case(ref, positions, seed) for seed, (name, positions) in enumerate(CASES.items())},
    }, indent=1)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "addrope.json").write_text(one_row_a_line(text) + "\n")


if __name__ == "__main__":
    main()
