"""Golden attention outputs of STRING, computed by the authors' code.

Reference: HKUNLP/STRING at commit 216cc2f04cee147e8c3cfaa15723b182ecbe321e,
``string_for_llama.py``. Nothing of it is copied into this project. The module imports
flash-attn's CUDA extension at its top, so the script takes from the file (``git show``)
exactly the two functions STRING's prefill path runs, ``apply_rotary_pos_emb`` and
``string_flash_forward``, and the three lines of ``forward`` between them, and runs them:

    query_states_1 = apply_rotary_pos_emb(query_states, cos, sin, position_ids)
    position_ids = position_ids - diag_size + local_window
    query_states_2 = apply_rotary_pos_emb(query_states, cos, sin, position_ids)

with the module globals ``diag_size`` (S) and ``local_window`` (W) set as the authors'
``replace_with_string`` sets them, ``rotate_half`` from transformers==5.23.0 (the module's
own import), and cos/sin built as the module's ``RotaryEmbedding`` builds them (default
parameters: cat(freqs, freqs)), both multiplied by the module's global ``attention_factor``
as its ``_set_cos_sin_cache`` does (lines 308-309), so every logit carries the factor
squared. The factor is the value of the expression ``replace_with_string`` assigns to it
(line 739, ``0.1*math.log(2) + 1``), read from the file and evaluated as written. The one stand-in is ``flash_attn_func``, a CUDA kernel:
it is evaluated densely, in float64, from flash-attn's documented semantics (softmax
scale 1/sqrt(head_dim); causal masks aligned to the bottom right; ``window_size=(left,
right)``: query i sees keys [i + Tk - Tq - left, i + Tk - Tq + right], -1 unbounded;
returns the output [B, T, H, D] and the log-sum-exp [B, H, T]).

Regenerate (fetch github:HKUNLP/STRING first; transformers to a scratch folder):

    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/string_rope.py \\
        --reference-repo /work/.mirror/HKUNLP+STRING/repo

which writes tests/golden/string.json.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
from pathlib import Path

import torch
from reference import run_definitions, show

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "string.json"
COMMIT = "216cc2f04cee147e8c3cfaa15723b182ecbe321e"
FUNCTIONS = ("apply_rotary_pos_emb", "string_flash_forward")


def flash_attn_func(q, k, v, causal=False, window_size=(-1, -1), return_attn_probs=False):
    """flash-attn's documented semantics, densely: q [B, Tq, H, D], k, v [B, Tk, H, D]."""
    Tq, Tk = q.shape[1], k.shape[1]
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
    i = torch.arange(Tq)[:, None] + (Tk - Tq)  # bottom-right alignment
    j = torch.arange(Tk)[None, :]
    allowed = torch.ones(Tq, Tk, dtype=torch.bool)
    if causal:
        allowed &= j <= i
    left, right = window_size
    if left >= 0:
        allowed &= j >= i - left
    if right >= 0:
        allowed &= j <= i + right
    scores = scores.masked_fill(~allowed, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)  # [B, H, Tq]
    out = torch.einsum("bhqk,bkhd->bqhd", torch.softmax(scores, dim=-1), v)
    return (out, lse, None) if return_attn_probs else out


def attention_factor(source: str) -> float:
    """The value ``replace_with_string`` gives the global ``attention_factor``: the expression
    of the one assignment to it that is not None, evaluated as written."""
    values = [node.value for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Assign)
              and any(isinstance(t, ast.Name) and t.id == "attention_factor" for t in node.targets)
              and not (isinstance(node.value, ast.Constant) and node.value.value is None)]
    assert len(values) == 1, f"expected one assignment of attention_factor, found {len(values)}"
    return float(eval(compile(ast.Expression(values[0]), "string_for_llama.py", "eval"), {"math": math}))


def reference(repo: str, diag_size: int, local_window: int) -> dict:
    from transformers.models.llama.modeling_llama import rotate_half

    namespace = {"torch": torch, "rotate_half": rotate_half, "flash_attn_func": flash_attn_func,
                 "diag_size": diag_size, "local_window": local_window}
    return run_definitions(show(repo, COMMIT, "string_for_llama.py"), FUNCTIONS, namespace,
                           f"string_for_llama.py@{COMMIT}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-repo", required=True, help="the git directory of the fetched snapshot")
    args = parser.parse_args()
    factor = attention_factor(show(args.reference_repo, COMMIT, "string_for_llama.py"))
    cases = []
    for case, (T, S, W, base) in enumerate([(24, 8, 2, 10000.0), (40, 13, 4, 10000.0), (16, 20, 4, 500.0)]):
        torch.manual_seed(case)
        B, H, D = 1, 2, 8
        q, k, v = (torch.randn(B, H, T, D, dtype=torch.float64) for _ in range(3))
        ns = reference(args.reference_repo, S, W)
        inv_freq = 1.0 / (base ** (torch.arange(0, D, 2, dtype=torch.float64) / D))  # _compute_default_rope_parameters
        freqs = torch.outer(torch.arange(T + W, dtype=torch.float64), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = factor * emb.cos(), factor * emb.sin()  # _set_cos_sin_cache
        position_ids = torch.arange(T)[None]
        key_states = ns["apply_rotary_pos_emb"](k, cos, sin, position_ids)
        query_states_1 = ns["apply_rotary_pos_emb"](q, cos, sin, position_ids)
        position_ids = position_ids - ns["diag_size"] + ns["local_window"]
        query_states_2 = ns["apply_rotary_pos_emb"](q, cos, sin, position_ids)
        out = ns["string_flash_forward"](query_states_1.transpose(1, 2), query_states_2.transpose(1, 2),
                                         key_states.transpose(1, 2), v.transpose(1, 2))  # [B, T, H, D]
        cases.append({"T": T, "S": S, "W": W, "base": base, "q": q[0].tolist(), "k": k[0].tolist(),
                      "v": v[0].tolist(), "out": out.transpose(1, 2)[0].tolist()})
    OUT.write_text(json.dumps({"reference": f"HKUNLP/STRING@{COMMIT}", "attention_factor": factor, "cases": cases}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
