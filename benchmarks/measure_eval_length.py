"""How much text a bits-per-byte figure needs: the passage-level error against the between-seed spread.

    posbench run benchmarks/eval-length/eval-length-pilot.yaml --jobs 1 --no-site --quiet
    python benchmarks/measure_eval_length.py [RESULTS] [--json OUT]

The pilot grid scores every 1,024-byte passage of the test split (1,440 passages, the whole
split) for NoPE, RoPE and ALiBi at grids/quick.yaml's recipe, seeds 0-2, at 1x-16x. From its
records (RESULTS, default results/) and the published snapshot's ten seeds of the same three
rows (grids/quick.yaml's board), per scale:

* the passages' standard deviation: a row's figure over P evenly spaced passages has a
  text-sampling error of sd / sqrt(P) (the passages are 1 KB apart or more, so nearly
  independent: the lag-1 correlation of neighbouring passages is printed to check it);
* the same for a *difference* of two rows on the same passages (what the boards' paired tests
  and headlines compare): the text the rows share cancels;
* the between-seed standard deviation of a row's figure and of a paired difference, from the
  snapshot's ten seeds;
* the passages P at which text sampling adds at most a third of the between-seed spread
  (P >= (3 sd_text / sd_seed)^2), and the evaluation's cost per passage from the pilot's
  records, against a run's training time.

Prints a Markdown table (docs/concepts/statistics.md carries it) and writes the figures as
JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from suite.results.samples import read_samples  # noqa: E402

ROWS = ("nope", "rope", "alibi")
SCALES = (1, 2, 4, 8, 16)
THIRD = 3.0


def pilot(results: Path) -> tuple[dict, dict, dict]:
    """(encoding -> scale -> seed -> per-passage bits, scale -> eval seconds per passage, seconds of training)."""
    passages: dict = defaultdict(lambda: defaultdict(dict))
    seconds: dict = defaultdict(list)
    for path in sorted((results / "evals").glob("*.json")):
        record = json.loads(path.read_text())
        if record.get("status") != "done" or not record.get("samples"):
            continue
        rows = read_samples(results / "samples" / f"{record['eval_id']}.parquet")
        values = np.array([r.correct for r in sorted(rows, key=lambda r: r.doc_id)])
        passages[record["encoding"]][record["scale"]][record["seed"]] = values
        seconds[record["scale"]].append(record["provenance"]["wall_s"] / len(values))
    training = [json.loads(p.read_text())["provenance"].get("train_wall_s") for p in (results / "runs").glob("*.json")]
    return passages, {s: statistics.median(v) for s, v in seconds.items()}, {
        "median train s": statistics.median(t for t in training if t)}


def published_seeds(snapshot: Path) -> dict:
    """encoding -> scale -> seed -> bpb of grids/quick.yaml's LM board in the published snapshot."""
    runs = {}
    with gzip.open(snapshot / "runs.jsonl.gz", "rt") as f:
        for line in f:
            r = json.loads(line)
            run = r.get("run", {})
            train = run.get("train", {})
            if (run.get("task", {}).get("name") == "lm" and run.get("size", {}).get("name") == "tiny"
                    and train.get("steps") == 600 and train.get("lr") == 0.003 and r.get("status") == "done"):
                runs[r["run_id"]] = r
    out: dict = defaultdict(lambda: defaultdict(dict))
    with gzip.open(snapshot / "evals.jsonl.gz", "rt") as f:
        for line in f:
            e = json.loads(line)
            if e.get("run_id") not in runs or e.get("evaluator") != "extrapolation" or e.get("encoding") not in ROWS:
                continue
            for m in e.get("metrics", []):
                if m["metric"] == "bpb" and m["status"] == "ok":
                    out[e["encoding"]][m["scale"]][e["seed"]] = m["value"]
    return out


def lag1(x: np.ndarray) -> float:
    x = x - x.mean()
    return float((x[:-1] * x[1:]).sum() / (x * x).sum())


def measure(passages: dict, seeds: dict, seconds: dict) -> list[dict]:
    rows = []
    for scale in SCALES:
        single = [np.std(v, ddof=1) for enc in ROWS for v in passages[enc][scale].values()]
        corr = [lag1(v) for enc in ROWS for v in passages[enc][scale].values()]
        pairs = []
        for a, b in itertools.combinations(ROWS, 2):
            shared = passages[a][scale].keys() & passages[b][scale].keys()
            pairs += [np.std(passages[a][scale][s] - passages[b][scale][s], ddof=1) for s in shared]
        seed_sd = [statistics.stdev(seeds[enc][scale].values()) for enc in ROWS if len(seeds[enc][scale]) > 2]
        seed_diff = []
        for a, b in itertools.combinations(ROWS, 2):
            shared = sorted(seeds[a][scale].keys() & seeds[b][scale].keys())
            if len(shared) > 2:
                seed_diff.append(statistics.stdev(seeds[a][scale][s] - seeds[b][scale][s] for s in shared))
        text_row, text_diff = float(np.median(single)), float(np.median(pairs))
        sd_row, sd_diff = statistics.median(seed_sd), statistics.median(seed_diff)
        rows.append({
            "scale": scale, "passage_sd_row": text_row, "passage_sd_difference": text_diff,
            "lag1_correlation": float(np.median(corr)), "seed_sd_row": sd_row, "seed_sd_difference": sd_diff,
            "passages_for_a_third_row": math.ceil((THIRD * text_row / sd_row) ** 2),
            "passages_for_a_third_difference": math.ceil((THIRD * text_diff / sd_diff) ** 2),
            "eval_s_per_passage": seconds.get(scale),
            "by_passages": systematic(passages, scale),
        })
    return rows


PASSAGE_COUNTS = (16, 32, 64, 128, 256, 480)


def systematic(passages: dict, scale: int) -> list[dict]:
    """Per P, the standard error over the design's shifted samples of a difference of two rows'
    figures (median over pairs and seeds) against sd / sqrt(P)."""
    out = []
    for count in PASSAGE_COUNTS:
        measured, independent = [], []
        for a, b in itertools.combinations(ROWS, 2):
            for seed in passages[a][scale].keys() & passages[b][scale].keys():
                d = passages[a][scale][seed] - passages[b][scale][seed]
                step = len(d) // count
                means = [d[shift::step][:count].mean() for shift in range(step)]
                measured.append(float(np.std(means)))
                independent.append(float(np.std(d, ddof=1) / math.sqrt(count)))
        out.append({"passages": count, "systematic_se_difference": float(np.median(measured)),
                    "independent_se_difference": float(np.median(independent))})
    return out


def markdown(rows: list[dict], train: dict) -> str:
    out = ["| scale | passage sd: row | passage sd: difference | lag-1 corr. | seed sd: row | seed sd: difference "
           "| passages for 1/3: row | passages for 1/3: difference | eval s per passage |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['scale']}x | {r['passage_sd_row']:.3f} | {r['passage_sd_difference']:.3f} | "
                   f"{r['lag1_correlation']:.2f} | {r['seed_sd_row']:.4f} | {r['seed_sd_difference']:.4f} | "
                   f"{r['passages_for_a_third_row']:,} | {r['passages_for_a_third_difference']:,} | "
                   f"{r['eval_s_per_passage']:.4f} |")
    out.append(f"\nMedian training time of a pilot run: {train['median train s']:.1f} s.\n")
    out.append("| scale | " + " | ".join(f"P = {p}" for p in PASSAGE_COUNTS) + " |")
    out.append("|---|" + "---|" * len(PASSAGE_COUNTS))
    for r in rows:
        out.append(f"| {r['scale']}x | " + " | ".join(f"{b['systematic_se_difference']:.4f} ({b['independent_se_difference']:.4f})"
                                                  for b in r["by_passages"]) + " |")
    out.append("\nText-sampling standard error of a difference of two rows at P evenly spaced passages: over the "
               "design's shifted samples (in brackets: sd / sqrt(P), for independent passages).")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", type=Path, default=ROOT / "results")
    parser.add_argument("--snapshot", type=Path, default=ROOT / "leaderboard")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    passages, seconds, train = pilot(args.results)
    rows = measure(passages, published_seeds(args.snapshot), seconds)
    print(markdown(rows, train))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, **train}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
