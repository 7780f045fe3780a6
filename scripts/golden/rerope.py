"""Golden values for ReRoPE and leaky ReRoPE, computed by Su's own patches.

The reference is bojone/rerope (``rerope_patch.py`` and ``leaky_rerope_patch.py``), two
replacements of transformers 4.31.0's ``LlamaAttention.forward``. Its source is not part
of this project: the script takes it from a git snapshot at run time (``git show
COMMIT:FILE`` into a temporary folder), imports it, and calls the patched forward on a
tiny ``LlamaAttention`` with random float64 weights, catching the logits where the
reference hands them to ``softmax`` (they include its causal mask).

Regenerate with (fetch github:bojone/rerope first; transformers goes to a scratch folder):

    .venv/bin/pip install --no-deps --target /tmp/golden-deps-rerope \\
        transformers==4.31.0 huggingface_hub==0.16.4 safetensors
    PYTHONPATH=/tmp/golden-deps-rerope .venv/bin/python scripts/golden/rerope.py \\
        --reference-repo /work/.mirror/bojone+rerope/repo \\
        --commit acfe78840357a94d0bb504cb8865eeaa752df1a6

which writes tests/golden/rerope.json: per case the projection weights, the
hidden states, the logits [H, T, T] (None above the diagonal) and the attention output.

One departure from running the patch as shipped, for precision only: the rotary tables
are rebuilt in float64 from the same formula (the reference computes inv_freq in float32,
which at tolerance 1e-5 would measure float32 rounding instead of the method).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import tempfile
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden"
REPO = "bojone/rerope"
TRANSFORMERS = "4.31.0"  # the version both patches say they were tested with
FILES = {"rerope": "rerope_patch.py", "leaky": "leaky_rerope_patch.py"}
# tiny shapes: T = 3 L, so queries at 8 .. 23 get the log(n) scaling and distances >= w the rectified logits
TRAIN_LEN, WINDOW, LEAKY_K, T, HEADS, HEAD_DIM = 8, 3, 2, 24, 2, 8


def load_patch(git_dir: str, commit: str, file: str, tmp: Path):
    source = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{file}"],
                            check=True, capture_output=True, text=True).stdout
    path = tmp / file
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def float64_tables(rotary, seq_len: int) -> None:
    """The reference's cos/sin tables, rebuilt from its own _set_cos_sin_cache in float64."""
    rotary.inv_freq = 1.0 / (rotary.base ** (torch.arange(0, rotary.dim, 2, dtype=torch.float64) / rotary.dim))
    rotary._set_cos_sin_cache(seq_len=seq_len, device=rotary.inv_freq.device, dtype=torch.float64)


def run_case(patch, kind: str) -> dict:
    from transformers.models.llama.modeling_llama import LlamaAttention, LlamaConfig

    patch.training_length, patch.window = TRAIN_LEN, WINDOW  # the module globals the patches read
    torch.manual_seed(0 if kind == "rerope" else 1)
    config = LlamaConfig(hidden_size=HEADS * HEAD_DIM, num_attention_heads=HEADS, num_key_value_heads=HEADS,
                         max_position_embeddings=T, intermediate_size=4)
    attn = LlamaAttention(config).double()
    forward = patch.forward_with_leaky_rerope if kind == "leaky" else patch.forward_with_rerope
    if kind == "leaky":
        patch.scaling_factor = LEAKY_K
        patch._init_rope(attn)  # adds rotary_emb2, the position-interpolated table of the far logits
        attn.double()
        float64_tables(attn.rotary_emb2, T + WINDOW * (LEAKY_K - 1))
    float64_tables(attn.rotary_emb, T)
    for proj in (attn.q_proj, attn.k_proj, attn.v_proj, attn.o_proj):
        torch.nn.init.normal_(proj.weight, std=0.5)
    x = torch.randn(1, T, HEADS * HEAD_DIM, dtype=torch.float64)
    position_ids = torch.arange(T)[None]
    mask = torch.full((T, T), torch.finfo(torch.float64).min, dtype=torch.float64).triu(1)[None, None]

    caught = []
    softmax = torch.nn.functional.softmax

    def catching_softmax(scores, *args, **kwargs):
        caught.append(scores.detach().clone())
        return softmax(scores, *args, **kwargs)

    torch.nn.functional.softmax = catching_softmax  # the patches call nn.functional.softmax on the logits
    try:
        with torch.no_grad():
            out, _, _ = forward(attn, x, attention_mask=mask, position_ids=position_ids)
    finally:
        torch.nn.functional.softmax = softmax
    (logits,) = caught
    lower = torch.ones(T, T, dtype=torch.bool).tril()
    return {
        "leaky_k": LEAKY_K if kind == "leaky" else None,
        "patch": FILES[kind],
        "hidden": x[0].tolist(),
        "w_q": attn.q_proj.weight.tolist(), "w_k": attn.k_proj.weight.tolist(),
        "w_v": attn.v_proj.weight.tolist(), "w_o": attn.o_proj.weight.tolist(),
        "logits": [[[v if keep else None for v, keep in zip(row, keeps)] for row, keeps in zip(head, lower.tolist())]
                   for head in logits[0].tolist()],  # [H, T, T]
        "output": out[0].tolist(),  # [T, D]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-repo", required=True, help="git dir of a bojone/rerope snapshot")
    parser.add_argument("--commit", required=True)
    args = parser.parse_args()
    import transformers

    if transformers.__version__ != TRANSFORMERS:
        raise SystemExit(f"needs transformers=={TRANSFORMERS} (the patches' version), found {transformers.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        cases = [run_case(load_patch(args.reference_repo, args.commit, FILES[kind], Path(tmp)), kind)
                 for kind in FILES]
    reference = {"repo": REPO, "commit": args.commit, "file": ", ".join(FILES.values()),
                 "library": f"transformers=={TRANSFORMERS}",
                 "command": "PYTHONPATH=/tmp/golden-deps-rerope .venv/bin/python scripts/golden/rerope.py "
                            f"--reference-repo <bojone/rerope snapshot> --commit {args.commit}"}
    text = json.dumps({"reference": reference, "base": 10000.0, "train_len": TRAIN_LEN, "window": WINDOW,
                       "n_heads": HEADS, "head_dim": HEAD_DIM, "cases": cases}, indent=1)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "rerope.json").write_text(one_row_a_line(text) + "\n")


def one_row_a_line(text: str) -> str:
    """Innermost lists of indented JSON on one line each."""
    return re.sub(r"\[\s*([^\[\]{}]*?)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)


if __name__ == "__main__":
    main()
