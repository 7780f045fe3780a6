"""Is the learning-rate choice of a tuned grid read on enough text? Its three rates ranked on
32 validation windows against the whole validation split.

    python benchmarks/measure_validation_text.py RESULTS [--grid grids/ladder-lm.yaml] [--size tiny] [--json OUT]

A tuned grid (suite.plan.tuning) trains each (encoding, size) at three learning rates at seed 0
and keeps the rate of the lowest validation loss, read on the validation split's first 32
windows of the training length (2,048 bytes at L = 64), until this measurement.
From the sweep checkpoints of RESULTS (a results folder that ran the grid's sweeps, e.g. the
size ladder's), for each group this script scores every rate's model on W evenly spaced windows
of the whole validation split (1.6 MB for the code corpus) and gives:

* the rate the 32 windows chose (the record's) and the rate the W windows choose;
* the paired difference in loss between the best and the second-best rate on the W windows,
  and the standard error that difference has on 32 windows, from blocks of 32 consecutive
  windows (neighbouring windows share a file, so they are not independent: a block's mean
  difference is one draw of what the tuning reads);
* the share of those blocks whose three-rate choice is the whole split's: how reliably 2,048
  bytes rank the rates;
* the same for the design that replaced it, at each count of ``SPREADS``: that many windows
  evenly spaced over the split (every (W / count)-th window, from each of the W / count
  shifts), the standard error of the difference and the share of its samples that choose the
  whole split's rate.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from suite.data.corpus import load_corpus  # noqa: E402
from suite.specs import Project, load_grid  # noqa: E402
from suite.training.checkpoints import load_checkpoint  # noqa: E402

WINDOWS = 8192  # evenly spaced windows of the validation split scored per model
FIRST = 32  # the windows the tuning read before: the validation split's first 32, contiguous
SPREADS = (32, 256)  # window counts of the evenly spaced design (suite.data.windows.VALIDATION_WINDOWS)


@torch.no_grad()
def window_losses(model, split: torch.Tensor, length: int, windows: int) -> np.ndarray:
    """Mean next-byte loss (nats) of each of ``windows`` evenly spaced windows of ``length``."""
    room = len(split) - (length + 1)
    starts = np.linspace(0, room, windows).round().astype(int)
    spans = torch.stack([split[a: a + length + 1] for a in starts]).long()
    out = []
    for chunk in spans.split(256):
        logits = model(chunk[:, :-1]).float()
        loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), chunk[:, 1:], reduction="none")
        out.append(loss.mean(dim=1).numpy())
    return np.concatenate(out)


def measure(results: Path, grid_path: Path, size: str) -> list[dict]:
    torch.set_num_threads(1)
    grid = load_grid(grid_path, Project(ROOT))
    task = grid.tasks[0]
    split = load_corpus(task.corpus)["validation"]
    groups: dict[str, dict[float, dict]] = defaultdict(dict)
    for path in (results / "runs").glob("*.json"):
        record = json.loads(path.read_text())
        train = record["run"]["train"]
        if (record.get("status") == "done" and train.get("lr_sweep") and record["size"] == size
                and record["seed"] == grid.spec.tuning.seed and record["task"] == task.name):
            groups[record["encoding"]][train["lr"]] = record
    rows = []
    for encoding, by_rate in sorted(groups.items()):
        if len(by_rate) < 3:
            continue
        losses, recorded = {}, {}
        for lr, record in sorted(by_rate.items()):
            model = load_checkpoint(results / "checkpoints" / f"{record['run_id']}.ckpt").model.eval()
            losses[lr] = window_losses(model, split, record["run"]["train"]["seq_len"], WINDOWS)
            recorded[lr] = record["learning_curve"]["val_loss"][-1]
        rates = sorted(losses)
        whole = {lr: float(losses[lr].mean()) for lr in rates}
        best, second = sorted(rates, key=whole.get)[:2]
        block = FIRST
        blocks = len(losses[best]) // block
        means = {lr: losses[lr][: blocks * block].reshape(blocks, block).mean(axis=1) for lr in rates}
        chosen = np.array([min(rates, key=lambda lr: means[lr][k]) for k in range(blocks)])
        diff = means[second] - means[best]
        row = {}
        for count in SPREADS:
            step = len(losses[best]) // count
            spread = {lr: np.array([losses[lr][shift::step][:count].mean() for shift in range(step)]) for lr in rates}
            spread_chosen = np.array([min(rates, key=lambda lr: spread[lr][k]) for k in range(step)])
            row[f"se_on_{count}_spread"] = float((spread[second] - spread[best]).std(ddof=1))
            row[f"share_of_{count}_spread_choosing_it"] = float((spread_chosen == best).mean())
        rows.append({**row, "encoding": encoding, "chosen_by_32": min(rates, key=recorded.get), "chosen_by_whole": best,
                     "whole_loss": whole, "best_minus_second": whole[second] - whole[best],
                     "se_on_32_windows": float(diff.std(ddof=1)), "blocks": blocks,
                     "share_of_blocks_choosing_it": float((chosen == best).mean())})
    return rows


def markdown(rows: list[dict]) -> str:
    out = ["| encoding | chosen on the first 32 windows | chosen on the whole split | best - second (nats) "
           "| its se on 32 windows | blocks of 32 that choose it"
           + "".join(f" | its se on {c} spread | samples of {c} spread that choose it" for c in SPREADS) + " |",
           "|---|---|---|---|---|---" + "|---|---" * len(SPREADS) + "|"]
    for r in rows:
        out.append(f"| {r['encoding']} | {r['chosen_by_32']:g} | {r['chosen_by_whole']:g} | "
                   f"{r['best_minus_second']:.4f} | {r['se_on_32_windows']:.4f} | {r['share_of_blocks_choosing_it']:.0%}"
                   + "".join(f" | {r[f'se_on_{c}_spread']:.4f} | {r[f'share_of_{c}_spread_choosing_it']:.0%}" for c in SPREADS)
                   + " |")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--grid", type=Path, default=ROOT / "grids" / "ladder-lm.yaml")
    parser.add_argument("--size", default="tiny")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows = measure(args.results, args.grid, args.size)
    print(markdown(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
