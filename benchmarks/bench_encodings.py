"""Per-encoding cost: a training step at the training length and an evaluation forward
at 16x, timed in one run and reported as ratios to NoPE, so the shared machine's
noise cancels as far as it can. Peak memory is reported on CUDA only (CPU has no
per-allocation peak that excludes the rest of the process).

    .venv/bin/python benchmarks/bench_encodings.py                  # tiny model, CPU
    .venv/bin/python benchmarks/bench_encodings.py --size small --repeats 7

Writes results/benchmarks/encodings.json beside the table it prints.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from rich.console import Console
from rich.table import Table

from suite.model import ModelConfig, Transformer
from suite.specs import load_encoding, load_size

ROOT = Path(__file__).resolve().parents[1]


def median_ms(fn, repeats: int) -> float:
    fn()  # warm-up: builds cached tables, picks kernels
    times = []
    for _ in range(repeats):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench(spec_path: Path, cfg: ModelConfig, batch: int, scale: int, repeats: int, device) -> dict:
    spec = load_encoding(spec_path)
    impl, params = spec.implementation(), spec.resolved_params()
    torch.manual_seed(0)
    model = Transformer(cfg, lambda: impl(params, cfg.dims)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, 256, (batch, cfg.train_len + 1), device=device)

    def train_step():
        model.train()
        loss = F.cross_entropy(model(x[:, :-1]).flatten(0, 1), x[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()

    long_len = scale * cfg.train_len
    limit = model.encodings[0].max_length()
    row = {"encoding": spec.name, "path": model.path.value, "train_ms": median_ms(train_step, repeats)}
    if limit is not None and long_len > limit:
        row["eval_ms"] = None  # not applicable at this length
    else:
        xl = torch.randint(0, 256, (max(1, batch // scale), long_len), device=device)

        @torch.no_grad()
        def eval_forward():
            model.eval()
            model.set_scale(scale)
            model(xl)

        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        row["eval_ms"] = median_ms(eval_forward, repeats)
        if torch.cuda.is_available():
            row["eval_peak_mib"] = torch.cuda.max_memory_allocated() / 2**20
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="tiny")
    parser.add_argument("--train-len", type=int, default=64)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--scale", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    size = load_size(ROOT / "sizes" / f"{args.size}.yaml")
    cfg = ModelConfig(d_model=size.d_model, n_layers=size.n_layers, n_heads=size.n_heads, d_ff=size.d_ff,
                      train_len=args.train_len)
    rows = [bench(p, cfg, args.batch, args.scale, args.repeats, device) for p in sorted((ROOT / "encodings").glob("*.yaml"))]
    base = next(r for r in rows if r["encoding"] == "nope")
    for r in rows:
        r["train_vs_nope"] = r["train_ms"] / base["train_ms"]
        r["eval_vs_nope"] = None if r["eval_ms"] is None else r["eval_ms"] / base["eval_ms"]
    table = Table(title=f"{args.size} model on {device}: train step at {args.train_len}, eval forward at {args.scale}x "
                        f"(median of {args.repeats})")
    for col in ("encoding", "attention path", "train ms", "x NoPE", f"eval {args.scale}x ms", "x NoPE"):
        table.add_column(col, justify="left" if col in ("encoding", "attention path") else "right")
    for r in sorted(rows, key=lambda r: r["train_vs_nope"]):
        table.add_row(r["encoding"], r["path"], f"{r['train_ms']:.1f}", f"{r['train_vs_nope']:.2f}",
                      "n/a" if r["eval_ms"] is None else f"{r['eval_ms']:.1f}",
                      "n/a" if r["eval_vs_nope"] is None else f"{r['eval_vs_nope']:.2f}")
    Console().print(table)
    out = ROOT / "results" / "benchmarks" / "encodings.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"device": str(device), "args": vars(args), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
