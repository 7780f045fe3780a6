"""Golden values for CoPE, computed by the authors' released code.

The reference is facebookresearch/RAM, ``projects/cope/src/cope/context_position.py``,
class ``ContextPosSelfAttn`` (Golovneva et al. 2024). Its source is not part of this
project: the script takes the class from a git snapshot at run time (see
scripts/golden/bias.py for the mechanics), builds it with the defaults of the released
command line (``add_args``: no ``--cope-npos``, so block_size + 1 position embeddings; no
``--cope-nodiv``, so q.e is divided by sqrt(d) with q.k) and, for the paper's listing,
with ``--cope-nodiv``. It catches the attention logits where the reference hands them to
``torch.softmax`` (they hold its causal mask as -inf) and keeps the attention weights.

Regenerate with

    .venv/bin/python scripts/golden/cope.py \\
        --reference-repo <facebookresearch/RAM snapshot> --commit e6f051fbcfaef4cab69bf2ea1b25f500f94c0c64

which writes tests/golden/cope.json. Float64 throughout (inputs and position
embeddings); block_size 4 with 10 tokens, so counts reach the clamp at block_size.
"""

from __future__ import annotations

import argparse
import math
import types
from typing import Optional

import torch

from bias import definitions, execute, git_show, lower, reference, write

FILE = "projects/cope/src/cope/context_position.py"
HEADS, HEAD_DIM, BLOCK, T = 2, 4, 4, 10


class SoftmaxSpy(types.ModuleType):
    """``torch`` for the reference, recording what it passes to ``torch.softmax``."""

    def __init__(self):
        super().__init__("torch")
        self.logits = []

    def softmax(self, x, dim):
        self.logits.append(x.detach().clone())
        return torch.softmax(x, dim=dim)

    def __getattr__(self, name):
        return getattr(torch, name)


def run(cls, spy: SoftmaxSpy, nodiv: bool, pos_emb: torch.Tensor, q, k, v) -> dict:
    cfg = types.SimpleNamespace(drop=0.0, cope_layers=1, pos_emb="cope", cope_npos=None, block_size=BLOCK,
                                head_dim=HEAD_DIM, cope_val_gates=False, cope_sep_key=False, cope_nodiv=nodiv,
                                cope_shared=False)
    module = cls(cfg, lay_ind=0).double().eval()
    with torch.no_grad():
        module.pos_emb.copy_(pos_emb)
        mask = torch.ones(T, T, dtype=torch.float64).tril()[None]  # [1, T, T], as the reference's decoder builds it
        out = module(q, k, k, v, attn_mask=mask)  # key_cope = key: no --cope-sep-key
    logits = spy.logits.pop()
    return {"npos": module.npos, "nodiv": nodiv, "logits": lower(logits), "attention": lower(module.attn_saved),
            "output": out.tolist()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference-repo", required=True, help="git dir of a facebookresearch/RAM snapshot")
    parser.add_argument("--commit", required=True)
    args = parser.parse_args()
    spy = SoftmaxSpy()
    source = git_show(args.reference_repo, args.commit, FILE)
    cls = execute(definitions(source, ["ContextPosSelfAttn"]), FILE, torch=spy, nn=torch.nn, math=math,
                  Optional=Optional)["ContextPosSelfAttn"]
    torch.manual_seed(0)
    # [B * H, T, Dh], the reference's layout of heads; scaled so that gates span (0, 1)
    q, k, v = (2 * torch.randn(HEADS, T, HEAD_DIM, dtype=torch.float64) for _ in range(3))
    pos_emb = torch.randn(1, HEAD_DIM, BLOCK + 1, dtype=torch.float64)  # shared by the heads of the layer
    cases = [run(cls, spy, nodiv, pos_emb, q, k, v) for nodiv in (False, True)]
    write("cope", {
        "reference": reference("facebookresearch/RAM", args.commit, f"{FILE} (ContextPosSelfAttn)",
                               ".venv/bin/python scripts/golden/cope.py --reference-repo <facebookresearch/RAM snapshot> "
                               f"--commit {args.commit}"),
        "n_heads": HEADS, "head_dim": HEAD_DIM, "block_size": BLOCK, "length": T,
        "q": q.tolist(), "k": k.tolist(), "v": v.tolist(), "pos_emb": pos_emb[0].tolist(), "cases": cases})


if __name__ == "__main__":
    main()
