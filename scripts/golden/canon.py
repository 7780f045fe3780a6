"""Golden values for Canon layers, computed by their author's code.

Reference: facebookresearch/PhysicsLM4 at commit 75806965208c55e9f7f2e2363d3793d2da75d2e4
(Allen-Zhu 2025, "Physics of Language Models: Part 4.1", arXiv 2512.17351),
``huggingface/canon_helper.py``: ``ShortConvolution`` (its author's copy of fla's), ``create_canon``
and ``apply_canon``, run as written through ``reference.run_definitions``; nothing of them is
copied into this project. The file imports transformers for ``ACT2FN`` alone and the optional
``causal_conv1d`` CUDA kernel; the namespace gives torch, nn, F, einops' ``rearrange``, typing's
Optional and Tuple, ``warnings``, ``causal_conv1d_fn = None`` (not installed: ``create_canon`` then
takes the naive PyTorch path, ``use_fast_conv1d`` False, as it does on any machine without the
kernel) and, for ``ACT2FN``, ``{"silu": torch.nn.SiLU()}`` (transformers maps "silu" to SiLU).

Each case: a Canon layer made by ``create_canon(width, config)`` with the author's defaults
(``canon_kernel`` 4, ``canon_bias`` False, ``canon_residual`` True, ``canon_activation`` False;
one case with the activation on), its weights as ``nn.Conv1d`` draws them (the author keeps that
initialisation), then ``apply_canon(name, canon, h, cache=None, layer_idx=0,
attention_mask=None)`` on hidden states h [B, T, width] drawn N(0, 1). Widths as the sites of a
block of this project's test model (d_model 32, d_ff 64): A and C 32, B 96, D 64. float64.

Regenerate (fetch github:facebookresearch/PhysicsLM4 first; einops from PyPI into a scratch folder):

    .venv/bin/pip install --target /tmp/golden-deps einops==0.8.1
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/canon.py \\
        --reference-repo /work/.mirror/facebookresearch+PhysicsLM4/repo

which writes tests/golden/canon.json.
"""

from __future__ import annotations

import argparse
import json
import types
import warnings
from pathlib import Path
from typing import Optional, Tuple

import einops
import torch
import torch.nn.functional as F
from reference import run_definitions, show
from torch import nn

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "canon.json"
REPO = "facebookresearch/PhysicsLM4"
COMMIT = "75806965208c55e9f7f2e2363d3793d2da75d2e4"
FILE = "huggingface/canon_helper.py"
B, T = 2, 9
CASES = [("A", 32, False), ("B", 96, False), ("C", 32, False), ("D", 64, False), ("A", 32, True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference-repo", required=True, help="git dir of facebookresearch/PhysicsLM4")
    args = parser.parse_args()
    namespace = {"torch": torch, "nn": nn, "F": F, "rearrange": einops.rearrange, "Optional": Optional,
                 "Tuple": Tuple, "warnings": warnings, "causal_conv1d_fn": None, "causal_conv1d_update": None,
                 "ACT2FN": {"silu": nn.SiLU()}}
    ref = run_definitions(show(args.reference_repo, COMMIT, FILE), ("ShortConvolution", "create_canon", "apply_canon"),
                          namespace, f"{FILE}@{COMMIT}")
    cases = []
    for seed, (site, width, activation) in enumerate(CASES):
        torch.manual_seed(seed)
        config = types.SimpleNamespace(canon_kernel=4, canon_bias=False, canon_activation=activation, canon_residual=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ImportWarning)  # "the naive PyTorch version is very slow"
            canon = ref["create_canon"](width, config).double()
        assert not canon.use_fast_conv1d
        h = torch.randn(B, T, width, dtype=torch.float64)
        with torch.no_grad():
            out = ref["apply_canon"](f"canon{site}", canon, h.clone(), cache=None, layer_idx=0, attention_mask=None)
        cases.append({"site": site, "width": width, "activation": activation, "kernel": 4,
                      "weight": canon.weight.tolist(), "h": h.tolist(), "out": out.tolist()})
    OUT.write_text(json.dumps({"reference": f"{REPO}@{COMMIT}:{FILE} create_canon + apply_canon (naive conv path)",
                               "batch": B, "length": T, "cases": cases}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
