"""Our model against x-transformers (lucidrains/x-transformers), the general-purpose
library people use for these encodings, at identical shapes: bytes (V = 256), d = 256,
4 layers, 4 heads of 64, d_ff = 1024, T = 256, B = 16, fp32 on CPU, tied embeddings,
pre-LayerNorm, GELU MLP with biases, attention projections without. Both take a full
training step (forward, cross entropy, backward, AdamW) on the same batch, interleaved
step by step in one process (the order alternates every step), so the shared machine's
load falls on both alike; the table gives the median step of each and their ratio.

Encodings both implement: NoPE, RoPE (full head dimension), ALiBi, xPos, T5 bias, CoPE,
and RoPE with position interpolation and NTK-aware scaling (factor 4, set on both:
training at a scaled rotation costs what training at scale 1 does, but it is the
option each library has). x-transformers is timed with its fastest attention for each
(``attn_flash=True``, its ``scaled_dot_product_attention`` path) where it accepts the
encoding, else its explicit attention; the table says which.

Not part of the test suite and not a project dependency: x-transformers is installed
into a scratch folder, never into .venv:

    .venv/bin/pip install --target /tmp/peer-deps --no-deps x-transformers einops einx loguru frozendict torch-einops-utils
    PYTHONPATH=/tmp/peer-deps .venv/bin/python benchmarks/peer_xtransformers.py [--steps 5] [--encodings rope,alibi]

Writes results/benchmarks/peer_xtransformers.json beside the table it prints.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from importlib import metadata
from pathlib import Path

import torch
import torch.nn.functional as F
from rich.console import Console
from rich.table import Table

from suite.modeling.model import ModelConfig, Transformer
from suite.specs import load_encoding

ROOT = Path(__file__).resolve().parents[1]
D, LAYERS, HEADS, D_FF, V = 256, 4, 4, 1024, 256

# ours: (spec, scale set during training); theirs: Decoder keyword arguments
PEERS = {
    "nope": ("nope", 1, {}),
    "rope": ("rope", 1, {"rotary_pos_emb": True, "rotary_emb_dim": D // HEADS}),
    "alibi": ("alibi", 1, {"alibi_pos_bias": True}),
    "xpos": ("xpos", 1, {"rotary_xpos": True, "rotary_emb_dim": D // HEADS}),
    "t5": ("t5", 1, {"rel_pos_bias": True}),
    "cope": ("cope", 1, {"attn_use_cope": True}),
    "rope-pi": ("rope-pi", 4, {"rotary_pos_emb": True, "rotary_emb_dim": D // HEADS, "rotary_interpolation_factor": 4.0}),
    "rope-ntk": ("rope-ntk", 4, {"rotary_pos_emb": True, "rotary_emb_dim": D // HEADS, "rotary_base_rescale_factor": 4.0}),
}


def ours(name: str, T: int) -> Transformer:
    spec_name, scale, _ = PEERS[name]
    spec = load_encoding(ROOT / "encodings" / f"{spec_name}.yaml")
    cfg = ModelConfig(d_model=D, n_layers=LAYERS, n_heads=HEADS, d_ff=D_FF, train_len=T)
    impl, params = spec.implementation(), spec.resolved_params()
    model = Transformer(cfg, lambda dims: impl(params, dims)).train()
    model.set_scale(scale)
    return model


def theirs(name: str, T: int, flash: bool):
    from x_transformers import Decoder, TransformerWrapper

    kwargs = dict(PEERS[name][2])
    if name == "cope":
        kwargs["attn_cope_max_pos"] = T + 1  # as ours: training length + 1 positions
    layers = Decoder(dim=D, depth=LAYERS, heads=HEADS, attn_dim_head=D // HEADS, ff_mult=D_FF // D, attn_flash=flash,
                     **kwargs)
    return TransformerWrapper(num_tokens=V, max_seq_len=T, attn_layers=layers, use_abs_pos_emb=False,
                              tie_embedding=True).train()


def step_fn(model, x):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step() -> float:
        start = time.perf_counter()
        logits = model(x[:, :-1])  # [B, T, V]
        loss = F.cross_entropy(logits.flatten(0, 1), x[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return time.perf_counter() - start

    return step


def peer_model(name: str, T: int, x):
    """x-transformers' model with its fastest attention that runs this encoding, and which one."""
    for flash in (True, False):
        try:
            model = theirs(name, T, flash)
            step_fn(model, x[:2])()  # it accepts this encoding on this path
            return model, "flash" if flash else "explicit"
        except Exception:  # noqa: BLE001 (an option combination it refuses)
            continue
    raise RuntimeError(f"x-transformers runs no attention path for {name}")


def count(model) -> int:
    return sum(p.numel() for p in model.parameters())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encodings", default=",".join(PEERS))
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=5, help="timed steps of each model (after 1 warm-up)")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's; 1 is steadier on a shared machine)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    x = torch.randint(0, V, (args.batch, args.seq_len + 1))
    rows, start, load_start = [], time.perf_counter(), os.getloadavg()
    for name in args.encodings.split(","):
        a = ours(name, args.seq_len)
        b, path = peer_model(name, args.seq_len, x)
        steps = {"ours": step_fn(a, x), "x-transformers": step_fn(b, x)}
        times = {k: [] for k in steps}
        for i in range(args.steps + 1):
            for k in (list(steps) if i % 2 == 0 else list(steps)[::-1]):
                t = steps[k]()
                if i > 0:
                    times[k].append(t)
        med = {k: statistics.median(v) for k, v in times.items()}
        rows.append({"encoding": name, "ours_ms": med["ours"] * 1e3, "peer_ms": med["x-transformers"] * 1e3,
                     "speed_ratio": med["x-transformers"] / med["ours"], "ours_path": a.path.value, "peer_path": path,
                     "ours_params": count(a), "peer_params": count(b)})
    table = Table(title=f"training step, d={D}, {LAYERS} layers, {HEADS} heads, d_ff={D_FF}, T={args.seq_len}, "
                        f"B={args.batch}, fp32 CPU: median of {args.steps} interleaved steps")
    for col in ("encoding", "ours ms", "x-transformers ms", "speed ours / theirs", "our path", "their path",
                "params ours", "params theirs"):
        table.add_column(col, justify="left" if col in ("encoding", "our path", "their path") else "right")
    for r in rows:
        table.add_row(r["encoding"], f"{r['ours_ms']:.0f}", f"{r['peer_ms']:.0f}", f"{r['speed_ratio']:.2f}x",
                      r["ours_path"], r["peer_path"], f"{r['ours_params']:,}", f"{r['peer_params']:,}")
    Console(width=160).print(table)
    out = ROOT / "results" / "benchmarks" / "peer_xtransformers.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"x_transformers": metadata.version("x-transformers"), "torch": torch.__version__,
                               "threads": torch.get_num_threads(), "load_average": [load_start, os.getloadavg()],
                               "wall_s": time.perf_counter() - start, "args": vars(args), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
