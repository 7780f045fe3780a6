"""Golden values of FoPE, computed by the authors' code.

Reference: TsinghuaC3I/Fourier-Position-Embedding at commit
bd94b20d82bf11240ad3584c515c790d255da919, ``olmo/model.py``: the classes
``RotaryEmbedding`` and ``FourierEmbedding`` and the helper ``_non_meta_init_device``,
taken from the file (``git show`` and ``ast``) and executed as written. The OLMo package
around them imports boto3, omegaconf and more, which the two classes do not use; their
``config`` is a namespace holding every field of the file's own ``ModelConfig`` at its
default (read from ``olmo/config.py`` the same way), with the FoPE paper's settings as
the authors' configs set them (``configs/c4/length-1024/ce-fourier/OLMo-60M-...-ignore_
clamp_zero.yaml``: ``rope_clamp_floor_freq``, ``rope_clamp_floor_to_zero``, ``fourier``,
``fourier_init: eye_xavier_norm``, gain 0.3, separate basis and heads, ``fourier_ignore_zero``)
and a small model (d_model 64, 4 heads, max_sequence_length 64).

The script records the module's coefficients (random at init) and its rotated queries;
the test loads the coefficients into our FoPE and compares the rotation.

Regenerate (fetch github:TsinghuaC3I/Fourier-Position-Embedding first):

    .venv/bin/python scripts/golden/fope.py \\
        --reference-repo /work/.mirror/TsinghuaC3I+Fourier-Position-Embedding/repo

which writes tests/golden/fope.json.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import types
from pathlib import Path
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn
from reference import run_definitions, show

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "fope.json"
COMMIT = "bd94b20d82bf11240ad3584c515c790d255da919"
FOPE = dict(rope=True, rope_clamp_floor_freq=True, rope_clamp_floor_to_zero=True, fourier=True,
            fourier_init="eye_xavier_norm", fourier_init_norm_gain=0.3, fourier_separate_basis=True,
            fourier_separate_head=True, fourier_ignore_zero=True)
SHAPE = dict(d_model=64, n_heads=4, max_sequence_length=64, init_device="cpu")


def model_config_defaults(source: str) -> dict:
    """Every field of olmo/config.py's ModelConfig with a literal default."""
    (cls,) = [n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "ModelConfig"]
    out = {}
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            try:
                out[node.target.id] = ast.literal_eval(node.value)
            except ValueError:
                pass  # enums and the like: FoPE reads none of them
    return out


def authors_classes(source: str) -> dict:
    namespace = {"torch": torch, "nn": nn, "F": F, "math": math, "Optional": Optional, "Tuple": Tuple,
                 "ModelConfig": object, "BufferCache": dict}
    return run_definitions(source, ("RotaryEmbedding", "FourierEmbedding", "_non_meta_init_device"), namespace,
                           f"olmo/model.py@{COMMIT}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-repo", required=True, help="the git directory of the fetched snapshot")
    args = parser.parse_args()
    config = types.SimpleNamespace(**{**model_config_defaults(show(args.reference_repo, COMMIT, "olmo/config.py")), **FOPE, **SHAPE})
    classes = authors_classes(show(args.reference_repo, COMMIT, "olmo/model.py"))
    torch.manual_seed(0)
    emb = classes["FourierEmbedding"](config, {})
    T, H, D = 100, SHAPE["n_heads"], SHAPE["d_model"] // SHAPE["n_heads"]  # beyond max_sequence_length too
    q = torch.randn(1, H, T, D)
    with torch.no_grad():
        rotated = emb(q, T)
    golden = {"reference": f"TsinghuaC3I/Fourier-Position-Embedding@{COMMIT}", "config": {**FOPE, **SHAPE},
              "inv_freq": emb.inv_freq.flatten().tolist(), "input_dim": emb.input_dim, "output_dim": emb.output_dim,
              "sin_coef": emb.sin_coef.tolist(), "cos_coef": emb.cos_coef.tolist(),
              "q": q[0].tolist(), "rotated": rotated[0].tolist()}
    OUT.write_text(json.dumps(golden) + "\n")
    print(f"wrote {OUT}: input_dim {emb.input_dim}, output_dim {emb.output_dim}")


if __name__ == "__main__":
    main()
