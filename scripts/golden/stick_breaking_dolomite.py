"""Golden values for stick-breaking attention as its authors train it: dolomite-engine's SBAttention.

Reference: IBM/dolomite-engine at commit a250945f218985865a1b496a8978ae81bfef910d (2025-03-03, by
the paper's first author: "Modified stickbreaking attention to work with huggingface checkpoint";
shawntan/stickbreaking-attention's ``load_model_with_dolomite_demo.py`` loads the released
``shawntan/stickbreaking-3b`` through dolomite_engine; Tan et al. 2025, "Scaling Stick-Breaking
Attention", arXiv 2410.17980, Eq. 2). The layer computes the same at the newest snapshot,
d0ee186 (``lm_engine/.../stickbreaking_attention.py`` lines 82-119), but from 03382f2c on its
constructor no longer passes the argument ``use_padding_free_transformer`` that its base class
requires, so it cannot be built there: a250945f is the last commit before that. Executed as
written through ``reference.run_definitions``, nothing of it copied into this project:

- ``dolomite_engine/hf_models/modeling_utils/sequence_mixer_blocks/stickbreaking_attention.py``:
  ``decoding_stickbreaking`` (lines 17-37) and ``SBAttention`` (its ``__init__``, lines 40-77:
  ``head_bias`` zeros [H, Dh] and ``GroupNorm(H, hidden)``; its ``forward``, lines 79-116:
  ``o + rem * head_bias``, the GroupNorm over [B * T, hidden], then ``c_proj``);
- ``.../sequence_mixer_blocks/softmax_attention/base.py``: ``Attention`` (the base class:
  ``c_attn``, ``c_proj``, ``_prepare_qkv_for_forward``, ``_get_softmax_scale``);
- ``.../modeling_utils/linear.py``: ``ParameterizedLinear``; ``hf_models/enums.py``: the enums;
  ``utils/miscellaneous.py``: ``divide_if_divisible``.

Stand-ins, as the namespace gives them: ``DynamicCache`` (an annotation) and ``sb_attn``. The
package imports its kernel ``sb_attn`` from shawntan/stickbreaking-attention, Triton on a GPU;
here ``sb_attn`` keeps the kernel's contract (``stickbreaking_attention/sb_attn/__init__.py``:
``sb_attn(q, k, v, inv_temp=None, zero_start=True, attend_current=False) -> (o, rem)``, inv_temp
None meaning 1/sqrt(Dh); ``o`` allocated ``torch.empty_like(q)``, ``sb_attn/sb_fwd.py`` line 144)
and computes it with the same file's own PyTorch path,
``decoding_stickbreaking``, once per query over the keys up to it (its last key, the query's own,
is left out: attend_current False). The script checks that this equals the kernel repository's
own test oracle, ``stickbreaking_attention/sb_ref.py`` ``stickbreaking()`` with
``tests/test_attn.py``'s ``ref_fwd`` masks (before ``ref_fwd`` adds ``rem * v``), to 1e-6.

The layer as configured: 3 heads of 8 (as many key/value heads: this project has no grouped
queries), ``add_bias`` False (this project's projections have none), ``attention_multiplier``
None (so 1/sqrt(Dh)), position embedding ``nope`` (SBAttention.forward applies none in any case).
Weights N(0, 0.3), ``head_bias`` N(0, 1), the GroupNorm's weight 1 + N(0, 0.5) and bias N(0, 0.5),
so that every term shows; inputs N(0, 1); float64 (both PyTorch paths take their logits in
float32, as written).

Regenerate (fetch github:IBM/dolomite-engine and github:shawntan/stickbreaking-attention first):

    .venv/bin/python scripts/golden/stick_breaking_dolomite.py \\
        --reference-repo /work/.mirror/IBM+dolomite-engine/repo \\
        --kernel-repo /work/.mirror/shawntan+stickbreaking-attention/repo

which writes tests/golden/stick-breaking.json.
"""

from __future__ import annotations

import argparse
import json
import math
from enum import Enum
from pathlib import Path

import torch
import torch.nn.functional as F
from reference import run_definitions, show
from torch import nn

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "stick-breaking.json"
REPO, COMMIT = "IBM/dolomite-engine", "a250945f218985865a1b496a8978ae81bfef910d"
BLOCKS = "dolomite_engine/hf_models/modeling_utils/sequence_mixer_blocks"
SB_FILE = f"{BLOCKS}/stickbreaking_attention.py"
KERNEL_REPO, KERNEL_COMMIT = "shawntan/stickbreaking-attention", "3147a3841b025a31d271fc8f873120ff6fa0461b"
B, T, H, DH = 2, 16, 3, 8


def definitions(repo: str) -> dict:
    """The reference's definitions, run in one namespace (module docstring)."""
    namespace = {"torch": torch, "nn": nn, "F": F, "math": math, "Enum": Enum, "DynamicCache": object}
    for path, names in [("dolomite_engine/utils/miscellaneous.py", ("divide_if_divisible",)),
                        ("dolomite_engine/hf_models/enums.py", ("InitMethod", "PositionEmbeddingType", "AttentionHeadType")),
                        ("dolomite_engine/hf_models/modeling_utils/linear.py", ("ParameterizedLinear",)),
                        (f"{BLOCKS}/softmax_attention/base.py", ("Attention",)),
                        (SB_FILE, ("decoding_stickbreaking", "SBAttention"))]:
        run_definitions(show(repo, COMMIT, path), names, namespace, f"{path}@{COMMIT}")
    return namespace


def kernel_contract(decoding_stickbreaking, calls: list):
    """``sb_attn`` (module docstring): each query i over keys 0 .. i by decoding_stickbreaking."""
    def sb_attn(q, k, v, inv_temp=None, zero_start=True, attend_current=False):
        assert not attend_current, "SBAttention.forward leaves attend_current at its default, False"
        parts = [decoding_stickbreaking(q[:, :, i : i + 1], k[:, :, : i + 1], v[:, :, : i + 1], scale=inv_temp)
                 for i in range(q.shape[2])]
        # the kernel's output as its _fwd allocates it (sb_fwd.py line 144: o = torch.empty_like(q)), so
        # laid out [B, T, H, Dh] as q is: SBAttention.forward's permute and view (lines 108-109) need that
        o = torch.empty_like(q).copy_(torch.cat([p[0] for p in parts], dim=2))
        rem = torch.cat([p[1] for p in parts], dim=2)
        calls.append((q, k, v, o, rem))
        return o, rem

    return sb_attn


def check_against_the_kernel_oracle(kernel_repo: str, q, k, v, o, rem) -> None:
    """sb_ref.stickbreaking with ref_fwd's masks (attend_current False) gives the same o and rem."""
    stickbreaking = run_definitions(show(kernel_repo, KERNEL_COMMIT, "stickbreaking_attention/sb_ref.py"),
                                    ("stickbreaking",), {"torch": torch, "math": math, "F": F},
                                    "stickbreaking_attention/sb_ref.py")["stickbreaking"]
    length = q.shape[2]
    cm = torch.ones(length, length).tril(-1).to(q)  # ref_fwd's cum_weight
    mask = torch.ones(length, length).triu(0).bool()  # ref_fwd's mask, attend_current=False
    o_ref, rem_ref = stickbreaking(q, k, v, mask, cm)
    assert (o - o_ref).abs().max() < 1e-6 and (rem - rem_ref).abs().max() < 1e-6, "sb_attn stand-in != sb_ref"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference-repo", required=True, help="git dir of IBM/dolomite-engine")
    parser.add_argument("--kernel-repo", required=True, help="git dir of shawntan/stickbreaking-attention")
    args = parser.parse_args()
    ns = definitions(args.reference_repo)
    calls: list = []
    ns["sb_attn"] = kernel_contract(ns["decoding_stickbreaking"], calls)
    torch.manual_seed(0)
    layer = ns["SBAttention"](
        hidden_size=H * DH, num_attention_heads=H, num_key_value_heads=H, attention_multiplier=None,
        attention_head_type=ns["AttentionHeadType"].mha, position_embedding_type=ns["PositionEmbeddingType"].nope,
        add_bias=False, dropout=0.0, init_method=ns["InitMethod"].normal, initializer_range=0.02, m_width=None,
        num_layers=1, causal=True, layer_idx=0).double().eval()
    assert (layer.head_bias == 0).all() and (layer.norm.weight == 1).all() and (layer.norm.bias == 0).all()
    with torch.no_grad():
        layer.c_attn.weight.normal_(0.0, 0.3)
        layer.c_proj.weight.normal_(0.0, 0.3)
        layer.head_bias.normal_(0.0, 1.0)
        layer.norm.weight.copy_(1 + 0.5 * torch.randn_like(layer.norm.weight))
        layer.norm.bias.normal_(0.0, 0.5)
    x = torch.randn(B, T, H * DH, dtype=torch.float64)
    with torch.no_grad():
        out = layer(x)
    (q, k, v, o, rem), = calls
    check_against_the_kernel_oracle(args.kernel_repo, q, k, v, o, rem)
    norm = layer.norm
    OUT.write_text(json.dumps({
        "reference": f"{REPO}@{COMMIT}:{SB_FILE} SBAttention.forward (sb_attn computed by the file's "
                     f"decoding_stickbreaking, checked against {KERNEL_REPO}@{KERNEL_COMMIT} sb_ref.stickbreaking)",
        "batch": B, "length": T, "heads": H, "head_dim": DH,
        "group_norm": {"groups": norm.num_groups, "channels": norm.num_channels, "eps": norm.eps, "affine": norm.affine},
        "x": x.tolist(), "c_attn": layer.c_attn.weight.tolist(), "c_proj": layer.c_proj.weight.tolist(),
        "head_bias": layer.head_bias.tolist(), "norm_weight": norm.weight.tolist(), "norm_bias": norm.bias.tolist(),
        "attention": o.tolist(), "remainder": rem.tolist(), "output": out.tolist()}) + "\n")
    print(f"wrote {OUT}: mean remainder {rem.mean().item():.3f} (per head {rem.mean((0, 2)).tolist()})")


if __name__ == "__main__":
    main()
