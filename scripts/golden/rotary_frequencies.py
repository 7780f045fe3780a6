"""Golden frequencies and rotation tables for RoPE's frequency variants.

References (nothing of them is copied into this project; they are read at run time):

* Resonance RoPE: sheryc/resonance_rope at commit 4a7f5a703b2e96756939db51916937ab7c5ab3a9,
  ``src/models/components/positional_embedding/rotary_resonance.py``
  (``ResonanceRotaryEmbedding``) and the ``rotary_utils.py`` it imports, taken with
  ``git show`` into a temporary package and run: its cos/sin tables (one period of each
  integer wavelength repeated) at 64 and 200 positions. It needs ``einops``.
* The base sweep (rope-base500, rope-base500k): transformers==5.23.0,
  ``GPTNeoXRotaryEmbedding.compute_default_rope_parameters`` with ``rope_theta`` 500 and
  500,000 (as scripts/golden/rotary.py does for base 10,000).
* p-RoPE: transformers==5.23.0's ``proportional`` RoPE (``ROPE_INIT_FUNCTIONS["proportional"]``,
  ``_compute_proportional_rope_parameters`` in ``modeling_rope_utils.py``, the RoPE of
  Gemma 4's global layers), whose ``partial_rotary_factor`` is p-RoPE's p: the first
  floor(p x Dh/2) of RoPE's frequencies kept, the rest 0. At p = 0.75 and head sizes 16,
  20 and 64 (20: where floor and round part, 7 pairs against 8).
* HoPE (Chen et al. 2025) has no public code: its golden file holds RoPE's frequencies
  from transformers and the paper's rule applied to them, labelled so (``"rule": "paper"``):
  those with theta_i >= 2 pi / L, at L = 64 and 256.

Regenerate (fetch github:sheryc/resonance_rope first; transformers and einops go to a
scratch folder):

    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0 einops==0.8.1
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/rotary_frequencies.py \\
        --reference-repo /work/.mirror/sheryc+resonance_rope/repo

which writes tests/golden/{resonance-rope,rope-base500,rope-base500k,p-rope,hope}.json.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden"
RESONANCE_COMMIT = "4a7f5a703b2e96756939db51916937ab7c5ab3a9"
PACKAGE = "src/models/components/positional_embedding"
HEAD_DIM = 16


def write(name: str, data: dict) -> None:
    (OUT / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")
    print("wrote", name)


def resonance_module(repo: str, tmp: Path):
    """The authors' package, as files in a temporary folder, imported."""
    for file in ("rotary_resonance.py", "rotary_utils.py"):
        source = subprocess.run(["git", f"--git-dir={repo}", "show", f"{RESONANCE_COMMIT}:{PACKAGE}/{file}"],
                                check=True, capture_output=True, text=True).stdout
        path = tmp / PACKAGE / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    for folder in (tmp / PACKAGE).relative_to(tmp).parents:
        if str(folder) != ".":
            (tmp / folder / "__init__.py").touch()
    (tmp / PACKAGE / "__init__.py").touch()
    sys.path.insert(0, str(tmp))
    import importlib

    return importlib.import_module(PACKAGE.replace("/", ".") + ".rotary_resonance")


def hf_default_inv_freq(base: float) -> torch.Tensor:
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

    cfg = GPTNeoXConfig(hidden_size=HEAD_DIM, num_attention_heads=1, max_position_embeddings=64,
                        rope_parameters={"rope_type": "default", "rope_theta": base, "partial_rotary_factor": 1.0})
    inv_freq, factor = GPTNeoXRotaryEmbedding.compute_default_rope_parameters(cfg)
    assert factor == 1.0
    return inv_freq


def hf_proportional_inv_freq(head_dim: int, p: float) -> torch.Tensor:
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    cfg = LlamaConfig(hidden_size=head_dim, num_attention_heads=1, head_dim=head_dim, max_position_embeddings=64,
                      rope_parameters={"rope_type": "proportional", "rope_theta": 10000.0, "partial_rotary_factor": p})
    inv_freq, factor = ROPE_INIT_FUNCTIONS["proportional"](cfg, "cpu")
    assert factor == 1.0 and len(inv_freq) == head_dim // 2
    return inv_freq


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-repo", required=True, help="resonance_rope's git directory")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        module = resonance_module(args.reference_repo, Path(tmp))
        tables = {}
        for seq_len in (64, 200):
            emb = module.ResonanceRotaryEmbedding(HEAD_DIM, max_position_embeddings=seq_len, base=10000)
            cos, sin = emb(torch.zeros(1), seq_len=seq_len)
            tables[seq_len] = {"cos": cos[0, 0].tolist(), "sin": sin[0, 0].tolist()}
        write("resonance-rope", {"reference": f"sheryc/resonance_rope@{RESONANCE_COMMIT} ResonanceRotaryEmbedding",
                                 "head_dim": HEAD_DIM, "base": 10000, "r_inv_freq": emb.r_inv_freq.tolist(),
                                 "tables": tables})
    for name, base in (("rope-base500", 500.0), ("rope-base500k", 500000.0)):
        write(name, {"reference": "transformers==5.23.0 GPTNeoXRotaryEmbedding.compute_default_rope_parameters",
                     "head_dim": HEAD_DIM, "base": base, "inv_freq": hf_default_inv_freq(base).tolist()})
    write("p-rope", {"reference": "transformers==5.23.0 ROPE_INIT_FUNCTIONS['proportional'] "
                                  "(_compute_proportional_rope_parameters, partial_rotary_factor = p)",
                     "p": 0.75, "inv_freq": {str(d): hf_proportional_inv_freq(d, 0.75).tolist() for d in (16, 20, 64)}})
    rope = hf_default_inv_freq(10000.0)
    write("hope", {"reference": "transformers==5.23.0 default frequencies; the rule is the paper's (no public code)",
                   "rule": "paper", "head_dim": HEAD_DIM,
                   "inv_freq": {str(L): [f if f >= 2 * math.pi / L else 0.0 for f in rope.tolist()] for L in (64, 256)}})


if __name__ == "__main__":
    main()
