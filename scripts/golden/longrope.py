"""Golden values for LongRoPE, computed by the authors' code.

Reference: microsoft/LongRoPE@c9e56aa54007c328399677232a489feec446e4b8, read with ``git show``
and executed as written (:mod:`reference`):

* ``rope/longrope.py``, ``LongRoPEScaledRotaryEmbedding`` (llama model type, magnitude policy
  "su"): its cos/sin tables at the golden positions for given rescale factors, and q, k rotated
  with them by transformers' Llama ``apply_rotary_pos_emb`` (the function the authors' model
  calls with those tables).
* ``rope/yarn.py``, ``YaRNScaledRotaryEmbedding.inv_freq_mask`` turned into the search's
  start factors as ``evolution/search.py`` does (s (1 - mask) + mask; llama's betas 32 and 1).
* A model set for a target of 4 x L read at 1x and at 16x (``"target"``): the authors'
  ``LongRoPEScaledRotaryEmbedding`` with ``max_position_embeddings`` 4 L and the search's start
  at 4 as its factors (its attention factor, fixed from the target at ``rope/longrope.py:48``,
  and its tables at positions up to 16 L - 1), and transformers' Llama rotary embedding with
  ``rope_type: longrope`` on the same settings (``short_factor`` ones, ``long_factor`` those
  factors): its tables at 1x (the short factors) and at 16x, with its attention factor.

The reference builds its tables in float32 (``.float()`` inside ``_forward_llama``), so the
angles at position 255 carry ~1.5e-5 of rounding; the tests compare at atol 5e-5.

Regenerate with (fetch github:microsoft/LongRoPE first; transformers goes to a scratch folder):

    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/longrope.py \\
        --reference-repo /work/.mirror/microsoft+LongRoPE/repo

which writes tests/golden/longrope.json.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import run_definitions, show  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "longrope.json"
COMMIT = "c9e56aa54007c328399677232a489feec446e4b8"
HEAD_DIM, BASE, TRAIN_LEN = 16, 10000.0, 64
POSITIONS = [0, 1, 5, 37, 63, 64, 100, 255]
FACTORS = [1.0, 1.0, 1.37, 1.92, 2.55, 3.18, 4.0, 4.61]  # a monotone vector such as a search returns
TARGET = 4  # the target case: set for 4 x L, read at 1x and 16x
TARGET_POSITIONS = {1: [0, 1, 5, 37, 63], 16: [0, 1, 5, 37, 63, 64, 100, 255, 256, 700, 1023]}


def target_case(authors_class, factors: list[float], x: torch.Tensor) -> dict:
    """Set for TARGET x L, read at 1x and 16x: the authors' embedding (its factors at every
    length, its attention factor from the target) and transformers' longrope (short factors
    of ones within L, the long ones beyond, the same attention factor at every length)."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    authors = authors_class(HEAD_DIM, factors, scale=TARGET, max_position_embeddings=TARGET * TRAIN_LEN,
                            original_max_position_embeddings=TRAIN_LEN, base=BASE, magnitude_scaling_policy="su",
                            model_type="llama")
    config = LlamaConfig(hidden_size=HEAD_DIM, num_attention_heads=1, head_dim=HEAD_DIM,
                         max_position_embeddings=TARGET * TRAIN_LEN,
                         rope_parameters={"rope_type": "longrope", "rope_theta": BASE, "short_factor": [1.0] * (HEAD_DIM // 2),
                                          "long_factor": factors, "original_max_position_embeddings": TRAIN_LEN})
    hf = LlamaRotaryEmbedding(config)
    reads = {}
    for scale, positions in TARGET_POSITIONS.items():
        position_ids = torch.tensor([positions])
        cos, sin = authors(x, position_ids)
        hf_cos, hf_sin = hf(x, position_ids)  # dynamic_rope_update: long factors once a position passes L
        reads[str(scale)] = {"positions": positions, "authors_mscale": authors.mscale,
                             "authors_cos": cos[0].tolist(), "authors_sin": sin[0].tolist(),
                             "transformers_attention_factor": hf.attention_scaling,
                             "transformers_cos": hf_cos[0].tolist(), "transformers_sin": hf_sin[0].tolist()}
    return {"target": TARGET, "factors": factors, "reads": reads}


def main() -> None:
    import transformers
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    p = argparse.ArgumentParser()
    p.add_argument("--reference-repo", required=True)
    args = p.parse_args()
    ns = {"torch": torch, "math": math, "transformers": transformers}
    longrope = run_definitions(show(args.reference_repo, COMMIT, "rope/longrope.py"),
                               ("LongRoPEScaledRotaryEmbedding",), dict(ns), "rope/longrope.py")
    yarn_source = show(args.reference_repo, COMMIT, "rope/yarn.py")
    yarn = run_definitions(yarn_source, ("find_correction_dim", "find_correction_range", "linear_ramp_mask",
                                         "get_mscale", "YaRNScaledRotaryEmbedding"),
                           dict(ns, _UNSQUEEZE_CACHE=int(transformers.__version__.split(".")[1]) < 36), "rope/yarn.py")

    torch.manual_seed(0)
    q, k = torch.randn(1, 1, len(POSITIONS), HEAD_DIM), torch.randn(1, 1, len(POSITIONS), HEAD_DIM)
    cases, starts = [], {}
    for scale in (2, 4, 16):
        target = scale * TRAIN_LEN
        emb = yarn["YaRNScaledRotaryEmbedding"](HEAD_DIM, max_position_embeddings=target, base=BASE, scale=scale,
                                                original_max_position_embeddings=TRAIN_LEN, beta_fast=32, beta_slow=1)
        mask = emb.inv_freq_mask.detach().double().flatten()
        start = scale * (1 - mask) + 1.0 * mask  # evolution/search.py: the YaRN start of the search
        starts[scale] = start.tolist()
        factors = [min(f, 1.0 + scale) for f in FACTORS]  # within the search's range [1, 1 + s]
        rope = longrope["LongRoPEScaledRotaryEmbedding"](HEAD_DIM, factors, scale=scale, max_position_embeddings=target,
                                                         original_max_position_embeddings=TRAIN_LEN, base=BASE,
                                                         magnitude_scaling_policy="su", model_type="llama")
        position_ids = torch.tensor([POSITIONS])
        cos, sin = rope(q, position_ids)  # [1, T, Dh]
        q_rot, k_rot = apply_rotary_pos_emb(q, k, cos, sin)
        cases.append({"scale": scale, "start_factors": start.tolist(), "factors": factors, "mscale": rope.mscale,
                      "cos": cos[0].tolist(), "sin": sin[0].tolist(),
                      "q_rotated": q_rot[0, 0].tolist(), "k_rotated": k_rot[0, 0].tolist()})
    target = target_case(longrope["LongRoPEScaledRotaryEmbedding"], starts[TARGET], q)
    OUT.write_text(json.dumps({
        "reference": f"microsoft/LongRoPE@{COMMIT}: rope/longrope.py LongRoPEScaledRotaryEmbedding (llama, su), "
                     "rope/yarn.py YaRNScaledRotaryEmbedding.inv_freq_mask as evolution/search.py starts from it; "
                     f"transformers=={transformers.__version__} apply_rotary_pos_emb",
        "script": "scripts/golden/longrope.py", "head_dim": HEAD_DIM, "base": BASE, "train_len": TRAIN_LEN,
        "positions": POSITIONS, "q": q[0, 0].tolist(), "k": k[0, 0].tolist(), "cases": cases, "target": target},
        indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
