"""How long rendering the site takes for a database of 1,000 training runs.

Writes 1,000 synthetic training-run records and their evaluation records (the shape
suite.execution.runner writes, through suite.results.records.write_record) into a temporary folder, ingests
them with suite.results.store.ingest, then times suite.report.site.render: the first call (which also
imports the rendering code and its libraries, as `posbench site` does) and a second one.

    .venv/bin/python benchmarks/bench_render.py            # 1,000 runs
    .venv/bin/python benchmarks/bench_render.py --runs 200 --keep /tmp/bench-site

The grid: 20 encodings x 2 sizes x 5 tasks (language modelling with GLUE-style scores,
flip-flop, passkey with its ten depth deciles, copy, parity) x 5 seeds, at 5 scales; five
training-free variants are evaluated on every RoPE language-modelling checkpoint.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path

from suite.results.record_types import SCHEMA_VERSION, from_json
from suite.results.records import write_record

ENCODINGS = ["nope", "sinusoidal", "learned", "rope", "rope-partial", "xpos", "randomized", "addrope", "alibi", "t5",
             "kerple-log", "kerple-power", "fire", "sandwich", "cope", "rerope", "rerope-leaky", "rope-ntk-trained",
             "rope-base500k", "sinusoidal-t2t"]
VARIANTS = ["rope-pi", "rope-ntk", "rope-dynamic-ntk", "yarn", "rope-llama3"]  # evaluated on the rope checkpoints
SIZES = {"tiny": (64, 2, 4), "small": (128, 4, 4)}
TASKS = ["lm", "flip_flop", "passkey", "copy", "parity"]
SEEDS = range(5)
SCALES = [1, 2, 4, 8, 16]
GLUE = ["acceptability", "order", "paraphrase", "similarity", "duplicate", "inference", "qa_alignment", "rte"]
CURVE_BUCKETS = 32


def spec(name: str) -> dict:
    family = "rotary" if "rope" in name or name in VARIANTS else "bias" if name in ("alibi", "t5", "fire") else "absolute"
    return {"name": name, "display_name": name.replace("-", " ").title(), "family": family, "impl": family,
            "paper": f"the {name} paper", "description": f"{name}, synthetic for the benchmark",
            "params": {"base": 10000, "variant": name}}


class Writer:
    def __init__(self, root: Path):
        self.runs, self.evals = root / "runs", root / "evals"
        self.n_evals = 0

    def run(self, run_id: str, encoding: str, size: str, task: str, seed: int) -> dict:
        d, layers, heads = SIZES[size]
        seq_len = 64 if task == "lm" else 48
        record = {
            "schema_version": SCHEMA_VERSION, "kind": "training_run", "run_id": run_id,
            "run": {"encoding": spec(encoding), "encoding_source": f"/home/bench/posbench/encodings/{encoding}.yaml",
                    "size": {"name": size, "d_model": d, "n_layers": layers, "n_heads": heads, "d_ff": 4 * d},
                    "task": {"name": task, "kind": "lm" if task == "lm" else "synthetic"}, "seed": seed,
                    "train": {"seq_len": seq_len, "steps": 250, "batch_size": 16, "lr": 0.003},
                    "data_fingerprint": "bench"},
            "content": {"encoding": {"params": spec(encoding)["params"]}}, "encoding": encoding,
            "display_name": spec(encoding)["display_name"], "family": spec(encoding)["family"], "size": size,
            "task": task, "seed": seed, "status": "done", "reason": None, "checkpoint": f"results/checkpoints/{run_id}.ckpt",
            "provenance": {"git_commit": "bench", "versions": {"python": "3.11"}, "corpus": "bench corpus",
                           "corpus_fingerprint": "bench", "n_params": 100_000 * (d // 64), "wall_s": 30.0,
                           "train_tokens_per_s": 20_000.0 + seed, "peak_memory_mb": 700.0, "train_wall_s": 25.0,
                           "final_train_loss": 2.0, "finished_at": "2026-11-22T00:00:00+00:00"},
        }
        write_record(from_json(record), self.runs)
        return record

    def evaluation(self, run: dict, encoding: str, scale: int | None, evaluator: str, metrics: list[dict],
                   curves: list[dict] = ()) -> None:
        self.n_evals += 1
        record = {
            "schema_version": SCHEMA_VERSION, "kind": "evaluation", "eval_id": f"e{self.n_evals:07d}",
            "run_id": run["run_id"], "evaluation": {"encoding": spec(encoding)}, "evaluator": evaluator,
            "settings": {"battery": "offline"} if evaluator == "glue" else {}, "scale": scale, "encoding": encoding,
            "content": {"encoding": {"params": spec(encoding)["params"]}}, "display_name": spec(encoding)["display_name"],
            "family": spec(encoding)["family"], "paper": "", "trained_as": run["encoding"],
            "checkpoint_level": evaluator == "glue", "size": run["size"], "task": run["task"], "seed": run["seed"],
            "status": "done", "reason": None, "metrics": metrics, "curves": list(curves),
            "scale_behaviour": "extrapolate", "max_length": None,
            "provenance": {"wall_s": 1.0, "finished_at": "2026-11-22T00:00:00+00:00"},
        }
        write_record(from_json(record), self.evals)


def metric(task, name, value, n, scale=None, chance=None, status="ok") -> dict:
    return {"task": task, "metric": name, "value": value, "n": n, "scale": scale,
            "eval_len": None if scale is None else 64 * scale, "stderr": 0.01, "window_policy": "bench",
            "source": "bench", "chance": chance, "status": status}


def write_grid(root: Path, n_runs: int) -> tuple[int, int]:
    writer, rng, count = Writer(root), random.Random(0), 0
    for size in SIZES:
        for task in TASKS:
            for encoding in ENCODINGS:
                for seed in SEEDS:
                    if count == n_runs:
                        return count, writer.n_evals
                    count += 1
                    run = writer.run(f"r{count:06d}", encoding, size, task, seed)
                    evaluated = [encoding] + (VARIANTS if encoding == "rope" and task == "lm" else [])
                    for as_ in evaluated:
                        write_scales(writer, rng, run, as_)
                    if task == "lm":
                        scores = {t: rng.uniform(0.3, 0.9) for t in GLUE}
                        rows = [metric(f"glue/{t}", m, v, 50, chance=0.5) for t, v in scores.items()
                                for m in ("accuracy", "score")]
                        rows.append(metric("glue", "glue_score", sum(scores.values()) / len(scores), len(GLUE), chance=0.5))
                        writer.evaluation(run, encoding, None, "glue", rows)
    return count, writer.n_evals


def write_scales(writer: Writer, rng: random.Random, run: dict, encoding: str) -> None:
    base = 2.0 + 0.3 * rng.random()
    for s in SCALES:
        if run["task"] == "lm":
            na = encoding == "learned" and s > 1
            value = None if na else base * (1 + 0.02 * s * rng.random())
            curves = [] if na else [
                {"task": "lm", "scale": s, "eval_len": 64 * s, "bucket": b, "pos_start": b * 2 * s,
                 "pos_end": (b + 1) * 2 * s, "value": value + 0.1 * rng.random(), "n": 100} for b in range(CURVE_BUCKETS)]
            writer.evaluation(run, encoding, s, "extrapolation",
                              [metric("lm", "bpb", value, 16384, s, status="not_applicable" if na else "ok")], curves)
        else:
            acc = max(0.0, min(1.0, 0.9 / s + 0.05 * rng.random()))
            rows = [metric(run["task"], "acc", acc, 64, s, chance=0.5 if run["task"] in ("flip_flop", "parity") else None)]
            if run["task"] == "passkey":
                rows += [metric("passkey", f"acc_depth{d}", acc, 6, s) for d in range(10)]
            writer.evaluation(run, encoding, s, "lmeval_task", rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="render the site here and keep it (default: a temporary folder)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="posbench-bench-render-"))
    try:
        t0 = time.perf_counter()
        runs, evals = write_grid(tmp / "results", args.runs)
        t1 = time.perf_counter()
        from suite.results.store import ingest

        report = ingest(tmp / "results" / "runs", tmp / "results" / "evals", tmp / "results" / "posbench.duckdb")
        assert not report.problems, report.problems[:3]
        t2 = time.perf_counter()
        from suite.report.site import render

        out = args.keep or tmp / "site"
        render(tmp / "results" / "posbench.duckdb", out)
        t3 = time.perf_counter()
        render(tmp / "results" / "posbench.duckdb", out)
        t4 = time.perf_counter()
        pages = sum(1 for _ in out.rglob("*.html"))
        print(f"{runs} training runs, {evals} evaluations: records written in {t1 - t0:.1f} s, ingested in {t2 - t1:.1f} s")
        print(f"render: {t3 - t2:.2f} s (first call, with imports), {t4 - t3:.2f} s (again); {pages} pages")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
