"""Golden values for the Forgetting Transformer, computed by the authors' code.

Reference: zhixuan-lin/forgetting-transformer at commit
883f260c636e87971339749b0d8310004794a5cc. Nothing of it is copied into this project;
the script reads two pieces of it with ``git show COMMIT:FILE`` and runs them:

* the forgetting attention: the PyTorch reference implementation inside the authors'
  ``test_op`` (``src/forgetting_transformer/ops/forgetting_attention.py``), which their
  Triton kernel is tested against. The kernel needs a GPU; the reference is the part of
  ``test_op`` before ``# triton implementation``, run here on the CPU (``device="cuda"``
  replaced by ``"cpu"``) in float64 for precision, with its own causal mask, its own
  cumulative-sum decay bias and its own ``sm_scale`` (0.5 = 1/sqrt(head_dim 4), our
  scaling). The function's body is executed as the authors wrote it, up to that point.
* the forget gate: the three lines of ``ForgettingAttentionLayer.forward`` under
  ``if self.fgate_type == "full":`` (``modeling_forgetting_transformer.py``), run with
  a ``torch.nn.Linear`` as ``self.fgate_proj``.

Regenerate (fetch github:zhixuan-lin/forgetting-transformer first; einops from PyPI
into a scratch folder, for the gate's ``rearrange``):

    .venv/bin/pip install --target /tmp/golden-deps einops==0.8.1
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/fox.py \\
        --reference-repo /work/.mirror/zhixuan-lin+forgetting-transformer/repo

which writes tests/golden/fox.json.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

import torch
from reference import show

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "fox.json"
COMMIT = "883f260c636e87971339749b0d8310004794a5cc"
OPS = "src/forgetting_transformer/ops/forgetting_attention.py"
MODEL = "src/forgetting_transformer/model/forgetting_transformer/modeling_forgetting_transformer.py"
SHAPE = dict(Z=2, H=2, M=12, N=12, HEAD_DIM=4)  # self-attention: M == N


def reference_attention(source: str):
    """The authors' test_op, cut before its Triton half, returning its inputs and ref_out."""
    start = source.index("def test_op(")
    body = source[start : source.index("# triton implementation", start)].rstrip() + "\n"
    body = body.replace('device="cuda"', 'device="cpu"').replace("dtype=torch.float16", "dtype=torch.float64")
    body += "    return q.detach(), k.detach(), v.detach(), log_fgate.detach(), ref_out.detach()\n"
    namespace = {"torch": torch}
    exec(compile(body, f"{OPS}@{COMMIT}:test_op", "exec"), namespace)
    return namespace["test_op"]


def reference_gate(source: str):
    """The gate lines of ForgettingAttentionLayer.forward, as a function of (self, hidden_states)."""
    start = source.index('        if self.fgate_type == "full":')
    lines = source[start:].splitlines()[1:4]  # fgate_logit = ..., rearrange, logsigmoid
    assert "fgate_proj" in lines[0] and "rearrange" in lines[1] and "logsigmoid" in lines[2], lines
    body = "def gate(self, hidden_states):\n" + textwrap.indent(textwrap.dedent("\n".join(lines)), "    ") + "\n    return log_fgate\n"
    from einops import rearrange

    namespace = {"torch": torch, "rearrange": rearrange}
    exec(compile(body, f"{MODEL}@{COMMIT}:forward", "exec"), namespace)
    return namespace["gate"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-repo", required=True, help="the git directory of the fetched snapshot")
    args = parser.parse_args()

    attention = reference_attention(show(args.reference_repo, COMMIT, OPS))
    cases = []
    for logit_range in [(0.0, 5.0), (-3.0, 3.0)]:
        q, k, v, log_fgate, out = attention(**SHAPE, causal=True, fgate_logit_range=logit_range,
                                            has_seq_start=False, adaptive_threshold=None)
        cases.append({"fgate_logit_range": list(logit_range), "q": q.tolist(), "k": k.tolist(), "v": v.tolist(),
                      "log_fgate": log_fgate.tolist(), "out": out.tolist()})

    gate = reference_gate(show(args.reference_repo, COMMIT, MODEL))
    torch.manual_seed(7)
    d_model, n_heads, T = 8, 2, 5
    proj = torch.nn.Linear(d_model, n_heads, bias=True).double()
    hidden = torch.randn(1, T, d_model, dtype=torch.float64)
    layer = type("Layer", (), {"fgate_proj": proj})()
    log_fgate = gate(layer, hidden)
    golden = {
        "reference": f"zhixuan-lin/forgetting-transformer@{COMMIT}", "shape": SHAPE, "sm_scale": 0.5,
        "attention": cases,
        "gate": {"weight": proj.weight.tolist(), "bias": proj.bias.tolist(), "hidden": hidden.tolist(),
                 "log_fgate": log_fgate.tolist()},
    }
    OUT.write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
