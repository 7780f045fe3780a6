"""Golden values for the additive-bias family, computed by each method's reference code.

Nothing of the references is part of this project: each subcommand takes the reference
source from a git snapshot at run time (``git show COMMIT:FILE``), pulls out the
definitions it needs with :mod:`ast` (so the rest of the file, and the framework it
imports, is not needed), executes them, and records what they return. One subcommand
per encoding; each writes tests/golden/<name>.json with a ``reference`` object
naming the repository or library, the commit or version, the file and the command.

    # snapshots: the project's `fetch` tool, or `git clone --mirror https://github.com/<owner>/<name>`
    .venv/bin/python scripts/golden/bias.py alibi \\
        --reference-repo <ofirpress/attention_with_linear_biases> --commit 4b92f28a005ead2567abe2359f633e73e08f3833
    .venv/bin/pip install --no-deps --target /tmp/golden-deps-bias transformers==5.23.0 safetensors==0.8.0
    PYTHONPATH=/tmp/golden-deps-bias .venv/bin/python scripts/golden/bias.py t5
    .venv/bin/python scripts/golden/bias.py kerple \\
        --reference-repo <chijames/KERPLE> --commit 25be3d712e96a3353b374f1f8e36b97d86f97ffa
    .venv/bin/python scripts/golden/bias.py fire \\
        --reference-repo <mcleish7/arithmetic> --commit 86022a57d38c0fde46444d62e8dcbebcc0af614c
    .venv/bin/python scripts/golden/bias.py sandwich \\
        --reference-repo <NVIDIA/NeMo> --commit 8cfedd7203462cb251a914e700e5605444277561

Every reference runs in float64 (parameters built or cast to float64, or the default
dtype set to float64 where the reference builds its own tensors), so the tolerance of
1e-5 measures the method, not float32 rounding; ALiBi's runs in float32 as written, its
values (slopes that are powers of two, times integers) being exact there. Entries above the diagonal (future keys,
masked by the model) are stored as null.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import subprocess
import textwrap
import types
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden"


# -- taking definitions out of a reference snapshot ------------------------------------------


def git_show(git_dir: str, commit: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
                          check=True, capture_output=True, text=True).stdout


def _segment(source: str, first: ast.stmt, last: ast.stmt) -> str:
    """The source lines from ``first`` to ``last`` (decorators excluded), dedented."""
    lines = source.splitlines()[first.lineno - 1: last.end_lineno]
    return textwrap.dedent("\n".join(lines)) + "\n"


def definitions(source: str, names: list[str], within: str | None = None) -> str:
    """The source of the functions/classes ``names``: top level, or methods of class ``within``."""
    body = ast.parse(source).body
    if within is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == within).body
    found = {n.name: n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in names}
    missing = set(names) - set(found)
    if missing:
        raise KeyError(f"not found in the reference: {sorted(missing)}")
    return "".join(_segment(source, found[name], found[name]) for name in names)


def execute(code: str, filename: str, **namespace) -> dict:
    """Run reference ``code`` in a namespace holding only ``namespace`` (its imports)."""
    namespace = {"__name__": "reference", **namespace}
    exec(compile(code, filename, "exec"), namespace)
    return namespace


class Float64Torch(types.ModuleType):
    """``torch`` for reference code that names ``torch.float`` explicitly: that one name
    reads float64, everything else is torch itself."""

    float = torch.float64

    def __getattr__(self, name):
        return getattr(torch, name)


def reference(repo: str, commit: str, file: str, command: str) -> dict:
    return {"repo": repo, "commit": commit, "file": file, "command": command}


def lower(matrix: torch.Tensor) -> list:
    """[..., T, T] -> nested lists with None above the diagonal (future keys are masked)."""
    T = matrix.shape[-1]
    keep = torch.ones(T, T, dtype=torch.bool).tril()
    out = matrix.to(torch.float64).masked_fill(~keep, float("nan")).tolist()

    def clean(x):
        return [clean(v) for v in x] if isinstance(x, list) else (None if math.isnan(x) else x)

    return clean(out)


def far_keys(length: int) -> list[int]:
    """Key positions for the last query of a long window: every distance up to 32, then
    geometrically spaced ones up to length - 1 (a full row would make the file large)."""
    distances = set(range(33)) | {int(1.2 ** k) for k in range(80) if 1.2 ** k < length} | {length - 1}
    return sorted(length - 1 - d for d in distances)


def write(name: str, data: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")


def command(sub: str, args) -> str:
    return (f".venv/bin/python scripts/golden/bias.py {sub} "
            f"--reference-repo <{args.repo_name} snapshot> --commit {args.commit}")


# -- ALiBi: ofirpress/attention_with_linear_biases (the authors' fairseq fork) ----------------


def alibi(args) -> None:
    """``get_slopes`` and the bias build of TransformerDecoder.__init__, and the decoder's
    ``buffered_future_mask`` that adds it to the causal mask, run as written."""
    file = "fairseq/models/transformer.py"
    source = git_show(args.reference_repo, args.commit, file)
    init = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "TransformerDecoder")
    init = next(n for n in init.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    start = next(i for i, n in enumerate(init.body) if isinstance(n, ast.FunctionDef) and n.name == "get_slopes")
    end = next(i for i, n in enumerate(init.body) if "self.alibi.repeat" in ast.get_source_segment(source, n))
    build = _segment(source, init.body[start], init.body[end])
    mask_fn = definitions(source, ["buffered_future_mask"], within="TransformerDecoder")
    utils_source = git_show(args.reference_repo, args.commit, "fairseq/utils.py")
    utils = types.SimpleNamespace(**execute(definitions(utils_source, ["fill_with_neg_inf"]), "fairseq/utils.py", torch=torch))

    def decoder(heads: int, length: int):
        fake_args = types.SimpleNamespace(tokens_per_sample=length, decoder_attention_heads=heads, max_tokens=length)
        self = types.SimpleNamespace(_future_mask=torch.empty(0), args=fake_args)
        scope = execute(build + mask_fn, file, torch=torch, math=math, self=self, args=fake_args, utils=utils)
        return scope, self

    slopes = {str(n): decoder(n, 4)[0]["get_slopes"](n) for n in (2, 4, 6, 8, 12, 16)}
    cases = []
    for heads, length in ((8, 12), (6, 10), (4, 16)):
        scope, self = decoder(heads, length)
        mask = scope["buffered_future_mask"](self, torch.zeros(1, length, 1))  # [B*H, T, T], x is B x T x C here
        cases.append({"n_heads": heads, "length": length, "mask": lower(mask)})
    write("alibi", {
        "reference": reference("ofirpress/attention_with_linear_biases", args.commit,
                               f"{file} (TransformerDecoder.__init__: get_slopes and self.alibi; buffered_future_mask)",
                               command("alibi", args)),
        "convention": "the reference adds m_h * j (key position) to every row, relying on softmax's shift "
                      "invariance; ours adds -m_h * (i - j), the same row minus its diagonal",
        "slopes": slopes, "cases": cases})


# -- T5: Hugging Face transformers, pinned ---------------------------------------------------------


def t5(args) -> None:
    """T5Attention._relative_position_bucket and compute_bias of a decoder (unidirectional)."""
    import transformers
    from transformers import T5Config
    from transformers.models.t5.modeling_t5 import T5Attention

    heads, distances = 4, list(range(0, -301, -1))
    cases = []
    for buckets, max_distance in ((32, 128), (16, 64), (8, 20)):
        torch.manual_seed(buckets)
        config = T5Config(d_model=16, d_kv=4, num_heads=heads, is_decoder=True, relative_attention_num_buckets=buckets,
                          relative_attention_max_distance=max_distance)
        attn = T5Attention(config, has_relative_attention_bias=True).double()
        torch.nn.init.normal_(attn.relative_attention_bias.weight)
        bucket_ids = attn._relative_position_bucket(torch.tensor(distances), bidirectional=False, num_buckets=buckets,
                                                    max_distance=max_distance)
        with torch.no_grad():
            full = attn.compute_bias(24, 24)[0]  # [H, T, T]
            # the last query of a 1000-token window: compute_bias of one query after 999 cached tokens
            row = attn.compute_bias(1, 1000, past_seen_tokens=999)[0, :, 0, far_keys(1000)]  # [H, keys]
        cases.append({"num_buckets": buckets, "max_distance": max_distance,
                      "values": attn.relative_attention_bias.weight.tolist(),  # [buckets, H], our table's layout
                      "buckets": bucket_ids.tolist(), "bias": lower(full),
                      "far": {"length": 1000, "keys": far_keys(1000), "bias": row.tolist()}})
    write("t5", {
        "reference": {"library": f"transformers=={transformers.__version__}", "version": transformers.__version__,
                      "file": "transformers/models/t5/modeling_t5.py (T5Attention._relative_position_bucket, compute_bias)",
                      "command": "PYTHONPATH=/tmp/golden-deps-bias .venv/bin/python scripts/golden/bias.py t5"},
        "n_heads": heads, "relative_positions": distances, "cases": cases})


# -- KERPLE: chijames/KERPLE (the authors' GPT-NeoX fork) ------------------------------------------


def kerple(args) -> None:
    """ParallelKerpleLog and ParallelKerplePower (megatron/mpu/layers.py) with model parallelism 1:
    forward(x) returns x + bias, so x = 0 gives the bias; parameters partly outside their
    box show the in-place clamp of the authors' forward."""
    file = "megatron/mpu/layers.py"
    source = git_show(args.reference_repo, args.commit, file)
    scope = execute(definitions(source, ["ParallelKerpleLog", "ParallelKerplePower"]), file, torch=torch, math=math,
                    Parameter=torch.nn.Parameter, get_model_parallel_world_size=lambda: 1,
                    get_model_parallel_rank=lambda: 0)
    model_source = git_show(args.reference_repo, args.commit, "megatron/model/gpt2_model.py")
    # the layer sharing the default follows: one instance built before the layer loop, handed to every layer
    loop = model_source.index("for i in range(self.neox_args.num_layers)")
    shared = (model_source.index("rpe_emb = ParallelKerpleLog(") < loop
              and model_source.index("rpe=rpe_emb if self.neox_args.pos_emb.startswith") > loop)
    torch.cuda.current_device = lambda: "cpu"  # the reference allocates on the current CUDA device
    heads, short, long = 4, 24, 2048
    params = {"log": {"pos_emb": "kerple_log", "cls": "ParallelKerpleLog",
                      "r1": ("bias_p", [0.5, 1.7, -0.3, 2.5]), "r2": ("bias_a", [0.3, 0.05, 1.2, 0.005])},
              "power": {"pos_emb": "kerple_power_ap_", "cls": "ParallelKerplePower",
                        "r1": ("bias_a", [0.6, 0.02, -1.0, 1.3]), "r2": ("bias_p", [1.9, 0.5, 1.0, 3.0])}}
    out = {}
    for kernel, p in params.items():
        neox_args = types.SimpleNamespace(num_attention_heads=heads, pos_emb=p["pos_emb"], params_dtype=torch.float64)
        module = scope[p["cls"]](neox_args)
        with torch.no_grad():
            for ours in ("r1", "r2"):
                name, values = p[ours]
                getattr(module, name).copy_(torch.tensor(values, dtype=torch.float64)[:, None, None])
            full = module(torch.zeros(1, heads, short, short, dtype=torch.float64))[0]  # [H, T, T]
            row = module(torch.zeros(1, heads, long, long, dtype=torch.float64))[0, :, -1, far_keys(long)]  # the last query
        out[kernel] = {"reference_names": {"r1": p["r1"][0], "r2": p["r2"][0]}, "r1": p["r1"][1], "r2": p["r2"][1],
                       "r1_after": getattr(module, p["r1"][0]).flatten().tolist(),
                       "r2_after": getattr(module, p["r2"][0]).flatten().tolist(),
                       "bias": lower(full), "far": {"length": long, "keys": far_keys(long), "bias": row.tolist()}}
    write("kerple", {
        "reference": reference("chijames/KERPLE", args.commit,
                               f"{file} (ParallelKerpleLog, ParallelKerplePower); megatron/model/gpt2_model.py "
                               "(GPT2ModelPipe: one rpe_emb for all layers)", command("kerple", args)),
        "shared_across_layers": shared, "n_heads": heads, "eps": 1e-2, **out})


# -- FIRE: no code by the authors; mcleish7/arithmetic's FIRE, the paper's appendix listing --------


def fire(args) -> None:
    """class FIRE of cramming/architectures/embeddings.py (McLeish et al. 2024), which follows
    the PyTorch listing of Li et al.'s appendix; with max_length=0 its positions are arange(T)."""
    file = "cramming/architectures/embeddings.py"
    source = git_show(args.reference_repo, args.commit, file)
    # float64 throughout: its parameters are built in the default dtype, its positions as torch.float
    FIRE = execute(definitions(source, ["FIRE"]), file, torch=Float64Torch("torch"))["FIRE"]
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(0)
    heads, width, length = 4, 8, 24
    module = FIRE(num_heads=heads, mlp_width=width, init_c=0.1, init_L=6.0).eval()
    with torch.no_grad():  # off their initial values, so that both take part: threshold |1.5 * 6| = 9 < T
        module.c.fill_(0.25)
        module.L_multiplier.fill_(1.5)
        bias = module(length, "cpu")[0]  # [H, T, T]
    torch.set_default_dtype(torch.float32)
    first, last = module.mlp[0], module.mlp[2]
    write("fire", {
        "reference": reference("mcleish7/arithmetic", args.commit,
                               f"{file} (class FIRE; no public code by Li et al., this follows their appendix listing)",
                               command("fire", args)),
        "n_heads": heads, "mlp_width": width, "length": length, "c": 0.25, "init_threshold": 6.0,
        "threshold_multiplier": 1.5, "eps": module.eps,
        "w1": first.weight.tolist(), "b1": first.bias.tolist(), "w2": last.weight.tolist(), "b2": last.bias.tolist(),
        "bias": lower(bias)})


# -- Sandwich: no code by the authors; NVIDIA NeMo's SandwichRelativePositionEmbedding --------------


def sandwich(args) -> None:
    """SandwichRelativePositionEmbedding (causal) with build_relative_position from the ALiBi
    module it imports; forward(q_len, k_len) -> [1, H, q_len, k_len]."""
    base = "nemo/collections/nlp/modules/common/megatron/position_embedding/"
    files = {"sandwich": base + "sandwich_relative_position_embedding.py", "alibi": base + "alibi_relative_position_embedding.py"}
    build = definitions(git_show(args.reference_repo, args.commit, files["alibi"]), ["build_relative_position"])
    cls = definitions(git_show(args.reference_repo, args.commit, files["sandwich"]), ["SandwichRelativePositionEmbedding"])
    Sandwich = execute(build + cls, files["sandwich"], torch=torch)["SandwichRelativePositionEmbedding"]
    torch.set_default_dtype(torch.float64)  # its frequencies are built in the default dtype
    cases, short, long = [], 24, 3000
    for dim, heads in ((16, 4), (8, 2), (128, 4)):
        module = Sandwich(bidirectional=False, num_attention_heads=heads, layer_type=None, hidden_size=dim,
                          max_seq_len=short)
        full = module(short, short)[0]  # [H, T, T]
        # the last query of a long window (a full causal [T, T] would not fit): its own one-query
        # call, bidirectional, because the causal branch's tril of a [1, T] slice keeps only key 0;
        # for past keys the two branches compute the same |m - n|
        wide = Sandwich(bidirectional=True, num_attention_heads=heads, layer_type=None, hidden_size=dim, max_seq_len=long)
        row = wide(1, long)[0, :, 0, far_keys(long)]  # [H, keys]
        cases.append({"dim": dim, "n_heads": heads, "bias": lower(full),
                      "far": {"length": long, "keys": far_keys(long), "bias": row.tolist()}})
    torch.set_default_dtype(torch.float32)
    write("sandwich", {
        "reference": reference("NVIDIA/NeMo", args.commit, f"{files['sandwich']} (SandwichRelativePositionEmbedding); "
                               f"{files['alibi']} (build_relative_position)", command("sandwich", args)),
        "convention": "sum over i = 1 .. d'/2 of cos((m - n) / 10000^(2i/d')) - d'/2, divided by 8h/H; "
                      "NeMo passes d' = the head dimension",
        "length": short, "cases": cases})


RUNS = {"alibi": ("ofirpress/attention_with_linear_biases", alibi), "t5": ("", t5), "kerple": ("chijames/KERPLE", kerple),
        "fire": ("mcleish7/arithmetic", fire), "sandwich": ("NVIDIA/NeMo", sandwich)}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("encoding", choices=sorted(RUNS))
    parser.add_argument("--reference-repo", help="git dir of the reference's snapshot (all but t5)")
    parser.add_argument("--commit", help="the reference commit (all but t5)")
    args = parser.parse_args()
    args.repo_name, run = RUNS[args.encoding]
    if args.repo_name and not (args.reference_repo and args.commit):
        parser.error(f"{args.encoding} needs --reference-repo and --commit of {args.repo_name}")
    run(args)
