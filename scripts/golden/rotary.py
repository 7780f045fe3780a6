"""Golden values for the rotary family, computed by the reference implementations.

References (nothing of them is copied into this project; both are read at run time):

* Hugging Face transformers==5.23.0 (``modeling_rope_utils.ROPE_INIT_FUNCTIONS`` and
  ``GPTNeoXRotaryEmbedding.compute_default_rope_parameters`` for the frequencies,
  ``models/gpt_neox/modeling_gpt_neox.apply_rotary_pos_emb`` to apply them): rope,
  rope-partial, rope-pi ("linear"), rope-dynamic-ntk ("dynamic", factor 1), yarn
  ("yarn"), rope-llama3 ("llama3").
* The YaRN authors' code, jquesnelle/yarn (``scaled_rope/*.py``), taken from a git
  snapshot with ``git show COMMIT:FILE`` into a temporary folder and imported:
  rope-ntk (``LlamaNTKScaledRotaryEmbedding``: transformers has no static NTK-aware
  scaling), yarn-dynamic (``LlamaDynamicYaRNScaledRotaryEmbedding``), and a cross-check
  that transformers' "yarn" equals the authors' ``LlamaYaRNScaledRotaryEmbedding``.
* yarn-paper-ramp has no code to run: the ramp linear in r of the paper's Eq. (18) is
  evaluated from the formula and labelled so.

Regenerate with (fetch github:jquesnelle/yarn first; transformers goes to a scratch folder):

    .venv/bin/pip install --no-deps --target /tmp/golden-deps transformers==5.23.0 safetensors==0.8.0
    PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/rotary.py \\
        --reference-repo /work/.mirror/jquesnelle+yarn/repo \\
        --commit 995db5b575e75230b3384d658f8b944c9662f775

which writes tests/golden/{rope,rope-partial,rope-pi,rope-ntk,rope-dynamic-ntk,
yarn,yarn-paper-ramp,yarn-dynamic,rope-llama3}.json.

What the tests compare: the reference code hard-codes float32 (``torch.float``,
``torch.float32``, ``Tensor.float``); at the golden positions (up to 255) float32
frequencies alone would move the angles by ~1e-5, the tolerance. So every reference
function is run twice, as shipped and with those three names pointing at float64
(:func:`float64_torch`, for precision only), and the script asserts the two agree to
rtol 1e-6 before storing the float64 one ("inv_freq"; the shipped one is
"inv_freq_float32"). The rotated q, k and their logits are computed by the reference's
``apply_rotary_pos_emb`` with cos/sin built in float64 as the reference's rotary module
builds them (cat(freqs, freqs), times the attention factor); each case asserts that the
library's own float32 module gives the same cos/sin (atol 2e-5).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden"
TRANSFORMERS = "5.23.0"
YARN_REPO = "jquesnelle/yarn"
POSITIONS = [0, 1, 5, 37, 63, 64, 100, 255]  # beyond L = 64 too, where the scalings act
DYNAMIC_SHAPE = dict(head_dim=8, train_len=8, length=32)  # the dynamic golden: 24 queries beyond L


def command(args) -> str:
    return (f"PYTHONPATH=/tmp/golden-deps .venv/bin/python scripts/golden/rotary.py "
            f"--reference-repo <{YARN_REPO} snapshot> --commit {args.commit}")


def write(name: str, reference: dict, data: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps({"reference": reference, **data}, indent=1) + "\n")
    print("wrote", name)


def load_authors_module(git_dir: str, commit: str, file: str, tmp: Path):
    source = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{file}"],
                            check=True, capture_output=True, text=True).stdout
    path = tmp / Path(file).name
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def float64_torch():
    """Reference code that hard-codes float32 computes in float64 inside this block."""
    saved = torch.float, torch.float32, torch.Tensor.float
    torch.float = torch.float32 = torch.float64
    torch.Tensor.float = torch.Tensor.double
    try:
        yield
    finally:
        torch.float, torch.float32, torch.Tensor.float = saved


def reference_frequencies(fn) -> tuple[torch.Tensor, float, torch.Tensor]:
    """(inv_freq in float64, attention factor, inv_freq as shipped) of ``fn() -> (inv_freq,
    attention factor)``, a call into the reference, run as shipped and in float64."""
    inv32, factor32 = fn()
    with float64_torch():
        inv64, factor64 = fn()
    assert inv32.dtype == torch.float32 and inv64.dtype == torch.float64, (inv32.dtype, inv64.dtype)
    torch.testing.assert_close(inv64.float(), inv32, rtol=1e-6, atol=0)
    assert math.isclose(factor64, factor32, rel_tol=1e-12)
    return inv64, float(factor64), inv32


# -- transformers ---------------------------------------------------------------------


def config(head_dim: int, max_len: int, rope_type: str = "default", fraction: float = 1.0, base: float = 10000.0,
           **rope_parameters):
    """A one-head GPT-NeoX config; partial_rotary_factor always explicit (GPT-NeoX defaults to 0.25)."""
    from transformers import GPTNeoXConfig

    return GPTNeoXConfig(hidden_size=head_dim, num_attention_heads=1, max_position_embeddings=max_len,
                         rope_parameters={"rope_type": rope_type, "rope_theta": base, "partial_rotary_factor": fraction,
                                          **rope_parameters})


def hf_frequencies(cfg, seq_len: int | None = None) -> tuple[torch.Tensor, float]:
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

    rope_type = cfg.rope_parameters["rope_type"]
    if rope_type == "default":
        return GPTNeoXRotaryEmbedding.compute_default_rope_parameters(cfg)
    return ROPE_INIT_FUNCTIONS[rope_type](cfg, "cpu", seq_len=seq_len)


def cos_sin(inv_freq: torch.Tensor, attention_factor: float, positions) -> tuple[torch.Tensor, torch.Tensor]:
    """[P, r] in float64, as the reference rotary modules build them: cat(freqs, freqs) * factor."""
    freqs = torch.tensor(positions, dtype=torch.float64)[:, None] * inv_freq.double()[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos() * attention_factor, emb.sin() * attention_factor


def apply(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
    """transformers' GPT-NeoX apply_rotary_pos_emb (half-split; dimensions past r pass through)."""
    from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb

    q_rot, k_rot = apply_rotary_pos_emb(q[None, None], k[None, None], cos[None], sin[None])
    return q_rot[0, 0], k_rot[0, 0]


def check_module(cfg, inv_freq, attention_factor, positions) -> None:
    """The library's own forward (float32) agrees with the float64 construction."""
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

    module = GPTNeoXRotaryEmbedding(cfg)
    pos = torch.tensor(positions)[None]
    cos32, sin32 = module(torch.zeros(1, dtype=torch.float32), pos)
    cos64, sin64 = cos_sin(inv_freq, attention_factor, positions)
    torch.testing.assert_close(cos32[0].double(), cos64, rtol=0, atol=2e-5)
    torch.testing.assert_close(sin32[0].double(), sin64, rtol=0, atol=2e-5)


def sample(n: int, d: int, seed: int) -> torch.Tensor:
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def applied(inv_freq, attention_factor, head_dim: int, seed: int, positions=POSITIONS) -> dict:
    """q, k at ``positions``, the reference's rotation of them, and their logits q.k [P, P]."""
    q, k = sample(len(positions), head_dim, seed), sample(len(positions), head_dim, seed + 1)
    q_rot, k_rot = apply(q, k, *cos_sin(inv_freq, attention_factor, positions))
    return {"positions": positions, "q": q.tolist(), "k": k.tolist(), "q_rotated": q_rot.tolist(),
            "k_rotated": k_rot.tolist(), "logits": (q_rot @ k_rot.T).tolist()}


def hf_case(head_dim: int, train_len: int, rope_type: str = "default", factor: float | None = None,
            fraction: float = 1.0, base: float = 10000.0, seed: int = 0, **extra) -> dict:
    params = dict(extra, **({} if factor is None else {"factor": factor}))
    max_len = train_len
    if rope_type in ("yarn", "llama3"):  # as their configs ship: the extended length, and the original one
        params["original_max_position_embeddings"] = train_len
        max_len = int(train_len * factor)
    cfg = config(head_dim, max_len, rope_type, fraction, base, **params)
    inv_freq, attention_factor, inv32 = reference_frequencies(lambda: hf_frequencies(cfg))
    check_module(cfg, inv_freq, attention_factor, [p for p in POSITIONS if p <= 2 * train_len])
    return {"head_dim": head_dim, "train_len": train_len, "base": base, "fraction": fraction, "factor": factor or 1.0,
            "rope_parameters": cfg.rope_parameters, "inv_freq": inv_freq.tolist(), "inv_freq_float32": inv32.tolist(),
            "attention_factor": attention_factor, **applied(inv_freq, attention_factor, head_dim, seed)}


def dynamic_golden(frequencies_at) -> dict:
    """Per query t of a left-to-right reader: the frequencies of context length t + 1 and
    its logits q_t . k_j for j <= t, every key rotated with the query's frequencies."""
    d, L, T = DYNAMIC_SHAPE["head_dim"], DYNAMIC_SHAPE["train_len"], DYNAMIC_SHAPE["length"]
    q, k = sample(T, d, 10), sample(T, d, 11)
    inv_freqs, factors, logits = [], [], []
    for t in range(T):
        inv_freq, attention_factor = frequencies_at(t + 1)
        q_rot, k_rot = apply(q[: t + 1], k[: t + 1], *cos_sin(inv_freq, attention_factor, list(range(t + 1))))
        inv_freqs.append(inv_freq.tolist())
        factors.append(attention_factor)
        logits.append((k_rot @ q_rot[t]).tolist())  # [t + 1]: the keys this query sees
    return {"head_dim": d, "train_len": L, "length": T, "base": 10000.0, "inv_freq_by_seq_len": inv_freqs,
            "attention_factor_by_seq_len": factors, "q": q.tolist(), "k": k.tolist(), "logits": logits}


# -- the encodings ----------------------------------------------------------------------


def hf_reference(args, file: str) -> dict:
    return {"library": f"transformers=={TRANSFORMERS}", "file": file, "command": command(args)}


def authors_reference(args, file: str) -> dict:
    return {"repo": YARN_REPO, "commit": args.commit, "file": file, "command": command(args)}


def rope(args) -> None:
    write("rope", hf_reference(args, "models/gpt_neox/modeling_gpt_neox.py (compute_default_rope_parameters, apply_rotary_pos_emb)"),
          {"cases": [hf_case(16, 64), hf_case(64, 64, seed=2)]})


def rope_partial(args) -> None:
    write("rope-partial", hf_reference(args, "models/gpt_neox/modeling_gpt_neox.py (partial_rotary_factor)"),
          {"cases": [hf_case(16, 64, fraction=0.25), hf_case(64, 64, fraction=0.5, seed=2)]})


def rope_pi(args) -> None:
    write("rope-pi", hf_reference(args, "modeling_rope_utils.py (_compute_linear_scaling_rope_parameters)"),
          {"cases": [hf_case(16, 64, "linear", 4.0), hf_case(32, 64, "linear", 16.0, seed=2)]})


def rope_llama3(args) -> None:
    extra = dict(low_freq_factor=1.0, high_freq_factor=4.0)
    write("rope-llama3", hf_reference(args, "modeling_rope_utils.py (_compute_llama3_parameters)"),
          {"cases": [hf_case(16, 64, "llama3", 4.0, **extra), hf_case(16, 64, "llama3", 16.0, seed=2, **extra),
                     hf_case(128, 8192, "llama3", 8.0, base=500000.0, seed=4, **extra)]})


def yarn(args, tmp: Path) -> None:
    authors = load_authors_module(args.reference_repo, args.commit, "scaled_rope/LlamaYaRNScaledRotaryEmbedding.py", tmp)
    cases = []
    for d, L, s, seed in ((16, 64, 16.0, 0), (16, 64, 4.0, 2), (32, 512, 16.0, 4), (64, 2048, 8.0, 6)):
        case = hf_case(d, L, "yarn", s, seed=seed, beta_fast=32.0, beta_slow=1.0)

        def authors_yarn():
            module = authors.LlamaYaRNScaledRotaryEmbedding(d, max_position_embeddings=int(L * s), base=10000.0, scale=s,
                                                             original_max_position_embeddings=L, beta_fast=32, beta_slow=1)
            return module.inv_freq, module.mscale

        inv_freq, mscale, _ = reference_frequencies(authors_yarn)
        torch.testing.assert_close(inv_freq, torch.tensor(case["inv_freq"], dtype=torch.float64), rtol=1e-12, atol=0)
        assert math.isclose(mscale, case["attention_factor"], rel_tol=1e-12)
        cases.append({**case, "beta_fast": 32.0, "beta_slow": 1.0})
    ref = hf_reference(args, "modeling_rope_utils.py (_compute_yarn_parameters)")
    ref["cross_check"] = (f"{YARN_REPO}@{args.commit} scaled_rope/LlamaYaRNScaledRotaryEmbedding.py: "
                          "same inv_freq (rtol 1e-12, both in float64) and mscale for every case")
    write("yarn", ref, {"cases": cases})


def yarn_paper_ramp(args) -> None:
    """YaRN Eqs. (17)-(19) with gamma linear in r = L / lambda (Eq. 18), Eq. (22) factor."""
    cases = []
    for d, L, s, seed in ((16, 64, 16.0, 0), (64, 2048, 8.0, 6)):
        theta = torch.tensor([10000.0 ** (-2 * i / d) for i in range(d // 2)], dtype=torch.float64)
        r = L * theta / (2 * math.pi)
        gamma = ((r - 1.0) / (32.0 - 1.0)).clamp(0, 1)
        inv_freq = (1 - gamma) * theta / s + gamma * theta
        mscale = 0.1 * math.log(s) + 1
        cases.append({"head_dim": d, "train_len": L, "base": 10000.0, "factor": s, "beta_fast": 32.0, "beta_slow": 1.0,
                      "inv_freq": inv_freq.tolist(), "attention_factor": mscale, **applied(inv_freq, mscale, d, seed)})
    ref = {"paper": "Peng et al. 2023, YaRN (arXiv:2309.00071), Eqs. 17-19 and 22",
           "reference": ("paper formula, no public code found: the authors' code (jquesnelle/yarn) and transformers "
                         "ramp over the pair index instead, which is the default spec yarn"),
           "file": "scripts/golden/rotary.py (yarn_paper_ramp)", "command": command(args)}
    write("yarn-paper-ramp", ref, {"cases": cases})


def rope_ntk(args, tmp: Path) -> None:
    """bloc97's NTK-aware scaling as the YaRN authors' repository runs it (alpha = s)."""
    authors = load_authors_module(args.reference_repo, args.commit, "scaled_rope/LlamaNTKScaledRotaryEmbedding.py", tmp)
    cases = []
    for d, L, s, seed in ((16, 64, 4.0, 0), (64, 64, 8.0, 2), (16, 64, 16.0, 4)):
        def ntk():
            return authors.LlamaNTKScaledRotaryEmbedding(d, max_position_embeddings=max(POSITIONS) + 1, base=10000.0,
                                                         alpha=s)

        inv_freq, _, inv32 = reference_frequencies(lambda: (ntk().inv_freq, 1.0))
        cos32 = ntk().cos_cached[0, 0, POSITIONS].double()  # the module's own float32 table
        torch.testing.assert_close(cos32, cos_sin(inv_freq, 1.0, POSITIONS)[0], rtol=0, atol=1e-4)
        cases.append({"head_dim": d, "train_len": L, "base": 10000.0, "factor": s, "inv_freq": inv_freq.tolist(),
                      "inv_freq_float32": inv32.tolist(), "attention_factor": 1.0, **applied(inv_freq, 1.0, d, seed)})
    write("rope-ntk", authors_reference(args, "scaled_rope/LlamaNTKScaledRotaryEmbedding.py"), {"cases": cases})


def rope_dynamic_ntk(args) -> None:
    d, L = DYNAMIC_SHAPE["head_dim"], DYNAMIC_SHAPE["train_len"]
    cfg = config(d, L, "dynamic", factor=1.0)  # factor 1: s = max(1, l / L), the YaRN paper's Sec. 3.3

    def frequencies_at(seq_len: int):
        inv_freq, attention_factor, inv32 = reference_frequencies(lambda: hf_frequencies(cfg, seq_len))
        check_dynamic_module(cfg, seq_len, inv32)
        return inv_freq, attention_factor

    write("rope-dynamic-ntk", hf_reference(args, "modeling_rope_utils.py (_compute_dynamic_ntk_parameters, rope_type dynamic, factor 1)"),
          {"rope_parameters": cfg.rope_parameters, **dynamic_golden(frequencies_at)})


def check_dynamic_module(cfg, seq_len: int, inv_freq: torch.Tensor) -> None:
    """The library's dynamic update, fed the prefix [0 .. seq_len - 1], lands on the same frequencies."""
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

    module = GPTNeoXRotaryEmbedding(cfg)
    module(torch.zeros(1), torch.arange(seq_len)[None])
    torch.testing.assert_close(module.inv_freq, inv_freq, rtol=1e-6, atol=0)  # a tensor seq_len there: float32 base


def yarn_dynamic(args, tmp: Path) -> None:
    authors = load_authors_module(args.reference_repo, args.commit, "scaled_rope/LlamaDynamicYaRNScaledRotaryEmbedding.py", tmp)
    d, L = DYNAMIC_SHAPE["head_dim"], DYNAMIC_SHAPE["train_len"]

    def read(seq_len: int):
        """The module after reading a prefix of seq_len tokens (it rescales when a sequence outgrows L)."""
        module = authors.LlamaDynamicYaRNScaledRotaryEmbedding(d, max_position_embeddings=L, base=10000.0,
                                                                original_max_position_embeddings=L, beta_fast=32, beta_slow=1)
        module(torch.zeros(1), seq_len=seq_len)
        return module.inv_freq, float(module.mscale)

    def frequencies_at(seq_len: int):
        return reference_frequencies(lambda: read(seq_len))[:2]

    write("yarn-dynamic", authors_reference(args, "scaled_rope/LlamaDynamicYaRNScaledRotaryEmbedding.py"),
          {"beta_fast": 32.0, "beta_slow": 1.0, **dynamic_golden(frequencies_at)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference-repo", required=True, help=f"git dir of a {YARN_REPO} snapshot")
    parser.add_argument("--commit", required=True)
    args = parser.parse_args()
    import transformers

    if transformers.__version__ != TRANSFORMERS:
        sys.exit(f"needs transformers=={TRANSFORMERS}, found {transformers.__version__}")
    rope(args)
    rope_partial(args)
    rope_pi(args)
    rope_llama3(args)
    rope_dynamic_ntk(args)
    yarn_paper_ramp(args)
    with tempfile.TemporaryDirectory() as tmp:
        yarn(args, Path(tmp))
        rope_ntk(args, Path(tmp))
        yarn_dynamic(args, Path(tmp))


if __name__ == "__main__":
    main()
