"""Golden values for GRAPE (GRAPE-M, GRAPE-A, GRAPE-AP, GRAPE-M contextual), computed by the authors' code.

Reference: model-architectures/GRAPE at commit f5b539f35066f9067bf36e1f9d802212fce7884e
(Zhang et al., "Group Representational Position Encoding", ICLR 2026). Nothing of it is
copied into this project: the script reads the model files with ``git show COMMIT:FILE``,
takes these top-level definitions out of them with :func:`reference.run_definitions`, and
runs them as written:

* ``model/llama-mha-grape-m-nonctx.py``: ``apply_rotary_emb``, ``MSGRAPECommuting`` and
  ``CausalSelfAttention`` (GRAPE-M, non-contextual);
* ``model/llama-mha-grape-a-{querykeygated,keygated,querygated}.py``: ``_softplus_inverse``,
  ``_get_alibi_slopes``, the file's gated-bias class and its ``CausalSelfAttention`` (GRAPE-A);
* ``model/llama-mha-grape-ap-v1.py``: ``Rotary``, ``apply_rotary_emb``, ``_get_alibi_slopes``
  and ``CausalSelfAttention`` (GRAPE-AP, untied probes);
* ``model/llama-mha-grape-m-ctx.py``: ``_softplus_inverse``, ``apply_rotary_emb``,
  ``MSGRAPEContextType1`` and ``CausalSelfAttention`` (GRAPE-M contextual);
* ``model/init_utils.py`` whole (it imports torch alone): ``init_llama_mha_weights``, which
  their ``GPT.__init__`` applies to the whole model, here to the attention alone, named
  ``transformer.h.0.attn`` as in their model so that its exclusions match (the contextual
  GPT-M's ``GPT.__init__`` passes ``exclude_suffixes=("omega_proj.weight",)``, as here).

Each ``CausalSelfAttention`` is built from a plain namespace in place of the authors'
``GPTConfig`` (a transformers ``PretrainedConfig``), with ``use_qk_rmsnorm=False`` and no
KV-shift: QK-RMSNorm and KV-shift are architecture changes outside PosBench's one pluggable
part, so ``RMSNorm`` and ``ShiftLinear`` are never constructed (the namespace holds None for
them). Every GRAPE knob not set here takes the default of the attention's ``getattr``, which
is also the ``GPTConfig`` default the authors' configs leave in place (``grape_log_freq_scale``
16, ``*_omega_init`` None = 1, unit-normalised gate directions). Modules run in float64;
the reference itself keeps GRAPE-M's log-frequencies and GRAPE-A's gate sums in float32,
hence the tolerance of 1e-5.

Recorded per case: the weights (c_q, c_k, c_v, c_proj and the encoding's parameters), the
input x [B, T, C], the attention output y [B, T, C], and GRAPE-M's rotated q, k [B, T, H, D]
or GRAPE-A's bias [B, H, T, T] (the gated-bias module's forward, before the causal mask).
GRAPE-AP's bias [B, H, T, T] (-inf on future keys) and GRAPE-M-ctx's rotated q, k [B, H, T, D]
are what their attention hands to ``F.scaled_dot_product_attention``: the namespace's ``F``
is torch.nn.functional with that one function recording its arguments (:class:`Recording`).
For GRAPE-AP and GRAPE-M-ctx also the parameters their model's initialisation leaves: the
values of GRAPE-M-ctx's (all of them are set, not drawn) and the mean and std of GRAPE-AP's
W_p drawn at a width (256) where they are measured to about 1%.

Regenerate (fetch github:model-architectures/GRAPE first; no packages beyond torch):

    OMP_NUM_THREADS=1 .venv/bin/python scripts/golden/grape.py \\
        --reference-repo /work/.mirror/model-architectures+GRAPE/repo

which writes tests/golden/grape-m.json, grape-a.json, grape-ap.json and grape-m-ctx.json.
"""

from __future__ import annotations

import argparse
import json
import math
import types
from pathlib import Path

import torch
import torch.nn.functional as F
from reference import run_definitions, show
from torch import nn

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden"
COMMIT = "f5b539f35066f9067bf36e1f9d802212fce7884e"
REFERENCE = f"model-architectures/GRAPE@{COMMIT}"
M_FILE = "model/llama-mha-grape-m-nonctx.py"
A_FILES = {  # our gate -> (file, its bias class, the attention's attribute and config prefix)
    "query_key": ("model/llama-mha-grape-a-querykeygated.py", "QueryKeyGatedAdditiveBias", "querykeygated"),
    "key": ("model/llama-mha-grape-a-keygated.py", "KeyGatedAdditiveBias", "keygated"),
    "query": ("model/llama-mha-grape-a-querygated.py", "QueryGatedAdditiveBias", "querygated"),
}
AP_FILE = "model/llama-mha-grape-ap-v1.py"
CTX_FILE = "model/llama-mha-grape-m-ctx.py"
INIT_FILE = "model/init_utils.py"
B, T, N_HEAD, HEAD_DIM = 2, 16, 4, 4


class Recording:
    """torch.nn.functional, except that ``scaled_dot_product_attention`` keeps what it is given."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        return getattr(F, name)

    def scaled_dot_product_attention(self, q, k, v, **kwargs):
        self.calls.append({"q": q, "k": k, "attn_mask": kwargs.get("attn_mask")})
        return F.scaled_dot_product_attention(q, k, v, **kwargs)


def namespace(repo: str, path: str, names: tuple[str, ...], functional=F) -> dict:
    base = {"torch": torch, "nn": nn, "F": functional, "math": math, "RMSNorm": None, "ShiftLinear": None}
    return run_definitions(show(repo, COMMIT, path), names, base, f"{path}@{COMMIT}")


def config(**grape) -> types.SimpleNamespace:
    return types.SimpleNamespace(n_head=N_HEAD, head_dim=HEAD_DIM, n_embd=N_HEAD * HEAD_DIM, n_layer=1,
                                 use_qk_rmsnorm=False, using_groupnorm=False, **grape)


def tolist(t: torch.Tensor) -> list:
    return t.detach().tolist()


def projections(attn) -> dict:
    return {name: tolist(getattr(attn, name).weight) for name in ("c_q", "c_k", "c_v", "c_proj")}


def grape_m_cases(repo: str) -> list[dict]:
    ns = namespace(repo, M_FILE, ("apply_rotary_emb", "MSGRAPECommuting", "CausalSelfAttention"))
    cases = []
    for name, share, jitter in [("init", True, 0.0), ("learned", True, 0.5), ("per_head", False, 0.5)]:
        torch.manual_seed(len(cases))
        attn = ns["CausalSelfAttention"](config(grape_share_across_heads=share)).double()
        grape = attn.grape
        with torch.no_grad():  # frequencies moved off RoPE's spectrum, as training moves them
            grape.log_freq.add_(jitter * grape.log_freq_scale * torch.randn_like(grape.log_freq))
        x = torch.randn(B, T, N_HEAD * HEAD_DIM, dtype=torch.float64)
        q = attn.c_q(x).view(B, T, N_HEAD, HEAD_DIM)
        k = attn.c_k(x).view(B, T, N_HEAD, HEAD_DIM)
        q_rot, k_rot = grape(q, k)
        cases.append({"name": name, "share_across_heads": share, "log_freq_scale": grape.log_freq_scale,
                      "log_freq": tolist(grape.log_freq), "freq": tolist(grape.freq), **projections(attn),
                      "x": tolist(x), "q": tolist(q), "k": tolist(k), "q_rot": tolist(q_rot), "k_rot": tolist(k_rot),
                      "y": tolist(attn(x))})
    return cases


def grape_a_cases(repo: str) -> tuple[list[dict], dict]:
    cases, slopes = [], {}
    for gate, (path, bias_class, prefix) in A_FILES.items():
        ns = namespace(repo, path, ("_softplus_inverse", "_get_alibi_slopes", bias_class, "CausalSelfAttention"))
        slopes = {n: ns["_get_alibi_slopes"](n) for n in range(1, 13)}
        torch.manual_seed(10 + len(cases))
        # omega_init 3: the bias matters within 16 tokens even for the flattest ALiBi slope
        attn = ns["CausalSelfAttention"](config(**{f"{prefix}_omega_init": 3.0})).double()
        module = getattr(attn, f"{prefix}_bias")
        with torch.no_grad():
            module.omega.add_(0.5 * torch.randn_like(module.omega))  # heads apart, off the init
        x = torch.randn(B, T, N_HEAD * HEAD_DIM, dtype=torch.float64)
        q = attn.c_q(x).view(B, T, N_HEAD, HEAD_DIM)
        k = attn.c_k(x).view(B, T, N_HEAD, HEAD_DIM)
        bias = module(q, k) if gate == "query_key" else module(k if gate == "key" else q)
        params = {p: tolist(getattr(module, p)) for p in ("omega", "u", "v") if hasattr(module, p)}
        cases.append({"gate": gate, "file": path, **params, "slopes": tolist(module.slopes.flatten()),
                      **projections(attn), "x": tolist(x), "bias": tolist(bias), "y": tolist(attn(x))})
    return cases, slopes


def authors_init(repo: str, attn: nn.Module, cfg, exclude_suffixes: tuple[str, ...] = ()) -> None:
    """Their ``init_llama_mha_weights`` on the attention, named as in their GPT."""
    ns: dict = {"__name__": "init_utils"}
    exec(compile(show(repo, COMMIT, INIT_FILE), f"{INIT_FILE}@{COMMIT}", "exec"), ns)
    model = nn.Module()
    model.transformer = nn.ModuleDict({"h": nn.ModuleList([nn.ModuleDict({"attn": attn})])})
    ns["init_llama_mha_weights"](model, cfg, exclude_suffixes=exclude_suffixes)


def grape_ap_cases(repo: str) -> tuple[list[dict], dict]:
    cases = []
    for name, p_head_dim, sharpen in [("init_pdim2", 2, 1.0), ("sharp_pdim6", 6, 4.0)]:
        recording = Recording()
        ns = namespace(repo, AP_FILE, ("Rotary", "apply_rotary_emb", "_get_alibi_slopes", "CausalSelfAttention"),
                       recording)
        torch.manual_seed(20 + len(cases))
        cfg = config(p_head_dim=p_head_dim)
        attn = ns["CausalSelfAttention"](cfg)
        authors_init(repo, attn, cfg)
        attn = attn.double()
        with torch.no_grad():  # larger probes: edges far from log sigmoid(0), as training may make them
            attn.c_p.weight.mul_(sharpen)
        x = torch.randn(B, T, N_HEAD * HEAD_DIM, dtype=torch.float64)
        y = attn(x)
        (call,) = recording.calls
        cases.append({"name": name, "p_head_dim": p_head_dim, **projections(attn), "c_p": tolist(attn.c_p.weight),
                      "slopes": tolist(attn.slopes.flatten()), "x": tolist(x),
                      "bias": [[[[v if math.isfinite(v) else None for v in row] for row in head] for head in batch]
                               for batch in tolist(call["attn_mask"])], "y": tolist(y)})
    ns = namespace(repo, AP_FILE, ("Rotary", "apply_rotary_emb", "_get_alibi_slopes", "CausalSelfAttention"))
    torch.manual_seed(29)
    wide = types.SimpleNamespace(n_head=4, head_dim=64, n_embd=256, n_layer=1, use_qk_rmsnorm=False,
                                 using_groupnorm=False, p_head_dim=8)
    attn = ns["CausalSelfAttention"](wide)
    authors_init(repo, attn, wide)
    init = {"n_embd": 256, "n_head": 4, "p_head_dim": 8,
            "c_p_mean": attn.c_p.weight.mean().item(), "c_p_std": attn.c_p.weight.std().item()}
    return cases, init


def grape_m_ctx_cases(repo: str) -> list[dict]:
    cases = []
    for name, per_head, gate_std, jitter in [("init", False, 0.0, 0.0), ("learned", False, 4.0, 0.5),
                                             ("per_head", True, 4.0, 0.5)]:
        recording = Recording()
        ns = namespace(repo, CTX_FILE, ("_softplus_inverse", "apply_rotary_emb", "MSGRAPEContextType1",
                                        "CausalSelfAttention"), recording)
        torch.manual_seed(30 + len(cases))
        cfg = config(grape_share_across_heads=not per_head, grape_ctx_per_head=per_head)
        attn = ns["CausalSelfAttention"](cfg)
        authors_init(repo, attn, cfg, exclude_suffixes=("omega_proj.weight",))  # as their GPT.__init__
        attn = attn.double()
        init = {"omega_proj_weight": tolist(attn.omega_proj.weight), "omega_proj_bias": tolist(attn.omega_proj.bias),
                "log_freq": tolist(attn.grape.log_freq)}
        with torch.no_grad():  # a gate that reads the content, and frequencies off RoPE's, as training makes them
            attn.omega_proj.weight.normal_(std=gate_std)
            attn.grape.log_freq.add_(jitter * torch.randn_like(attn.grape.log_freq))
        x = torch.randn(B, T, N_HEAD * HEAD_DIM, dtype=torch.float64)
        y = attn(x)
        (call,) = recording.calls
        cases.append({"name": name, "per_head": per_head, "omega_scale": attn.ctx_omega_scale, "init": init,
                      **projections(attn), "omega_proj_weight": tolist(attn.omega_proj.weight),
                      "omega_proj_bias": tolist(attn.omega_proj.bias), "log_freq": tolist(attn.grape.log_freq),
                      "x": tolist(x), "phi": tolist(attn._cumulative_phase(x)), "q_rot": tolist(call["q"]),
                      "k_rot": tolist(call["k"]), "y": tolist(y)})
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-repo", required=True, help="the git directory of the fetched snapshot")
    args = parser.parse_args()
    shape = {"B": B, "T": T, "n_head": N_HEAD, "head_dim": HEAD_DIM}
    command = "scripts/golden/grape.py --reference-repo <model-architectures/GRAPE>"
    outputs = {
        "grape-m": {"reference": REFERENCE, "file": M_FILE, "command": command, "shape": shape,
                    "cases": grape_m_cases(args.reference_repo)},
    }
    a_cases, slopes = grape_a_cases(args.reference_repo)
    outputs["grape-a"] = {"reference": REFERENCE, "command": command, "shape": shape, "cases": a_cases,
                          "alibi_slopes": {str(n): s for n, s in slopes.items()}}
    ap_cases, ap_init = grape_ap_cases(args.reference_repo)
    outputs["grape-ap"] = {"reference": REFERENCE, "file": AP_FILE, "command": command, "shape": shape,
                           "cases": ap_cases, "init": ap_init}
    outputs["grape-m-ctx"] = {"reference": REFERENCE, "file": CTX_FILE, "command": command, "shape": shape,
                              "cases": grape_m_ctx_cases(args.reference_repo)}
    for name, golden in outputs.items():
        out = GOLDEN / f"{name}.json"
        out.write_text(json.dumps(golden, indent=1) + "\n")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
