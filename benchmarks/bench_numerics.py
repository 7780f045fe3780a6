"""What the pinned numerics cost in speed: training steps at the standard numerics
(suite.core.numerics: one thread, ATen at AVX2, MKL's AVX2 branch in strict mode) against
the same steps at the CPU's own (``--against native``: ATen and MKL at whatever the CPU has),
or at MKL's COMPATIBLE branch (``--against compatible``: the one branch Intel documents as the
same on Intel and other vendors' CPUs), one thread each.

Each setting runs in a process of its own (ATen's SIMD level is fixed at a process's first
kernel); the two alternate round by round, so the machine's other load falls on both alike.
A round times ``--steps`` bare training steps (suite.bench.training_steps.bare_step_times:
the model, optimizer, schedule, loss and clipping of training) of the tiny model for each
encoding at the default job's shapes (language modelling: B 16, T 64; flip-flop: B 32, T 16).
The table gives each setting's median step and the ratio pinned / the other.

    .venv/bin/python benchmarks/bench_numerics.py [--rounds 5] [--steps 30] [--encodings nope,rope,alibi]
        [--against native|compatible]

Writes results/benchmarks/bench_numerics.json (bench_numerics-compatible.json for
``--against compatible``) beside the table, with the CPU, the load average before and after,
and both settings' recorded numerics.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {"native": {"POSBENCH_CPU_CAPABILITY": "native", "POSBENCH_MKL_CBWR": "native"},
            "compatible": {"POSBENCH_MKL_CBWR": "COMPATIBLE"},  # the rest standard
            "pinned": {}}  # the standard numerics
SHAPES = {"lm": (16, 64), "flip-flop": (32, 16)}

WORKER = r"""
import json, sys
import torch
from suite.core import numerics
from suite.specs import Project, load_encoding, load_size
from suite.bench.run import BenchConfig
from suite.bench.training_steps import bare_step_times, random_batches, training_run

numerics.pin()
project, steps = Project(__import__("pathlib").Path(sys.argv[1])), int(sys.argv[2])
out = {"numerics": numerics.measured(), "times": {}}
size = load_size(project.spec_path("sizes", "tiny", project.root))
for name in sys.argv[3].split(","):
    spec = load_encoding(project.spec_path("encodings", name, project.root))
    for shape, (batch, seq_len) in json.loads(sys.argv[4]).items():
        cfg = BenchConfig(encodings=(name,), batch=batch, seq_len=seq_len)
        run = training_run(project, spec, size, cfg, steps + 3)
        times = bare_step_times(run, random_batches(cfg, steps + 3, torch.device("cpu")), torch.device("cpu"))
        out["times"][f"{name}/{shape}"] = times[3:]  # the first steps warm the allocator up
print(json.dumps(out))
"""


def one_round(setting: str, steps: int, encodings: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("POSBENCH_")}
    done = subprocess.run([sys.executable, "-c", WORKER, str(ROOT), str(steps), encodings, json.dumps(SHAPES)],
                          env={**clean, **SETTINGS[setting]}, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--encodings", default="nope,rope,alibi")
    parser.add_argument("--against", choices=("native", "compatible"), default="native")
    args = parser.parse_args()
    other, pair = args.against, (args.against, "pinned")
    load_before = os.getloadavg()
    times: dict[str, dict[str, list[float]]] = {s: {} for s in pair}
    recorded = {}
    for r in range(args.rounds):
        for setting in (pair if r % 2 == 0 else reversed(pair)):
            result = one_round(setting, args.steps, args.encodings)
            recorded[setting] = result["numerics"]
            for key, ts in result["times"].items():
                times[setting].setdefault(key, []).extend(ts)
    rows = []
    print(f"{'encoding/shape':<20} {other + ' ms':>14} {'pinned ms':>10} {'pinned/' + other:>18}")
    for key in times[other]:
        theirs, pinned = statistics.median(times[other][key]), statistics.median(times["pinned"][key])
        rows.append({"piece": key, f"{other}_ms": theirs * 1e3, "pinned_ms": pinned * 1e3, "ratio": pinned / theirs})
        print(f"{key:<20} {theirs * 1e3:>14.2f} {pinned * 1e3:>10.2f} {pinned / theirs:>18.3f}")
    overall = statistics.median(r["ratio"] for r in rows)
    print(f"median ratio pinned / {other}: {overall:.3f} ({args.rounds} rounds of {args.steps} steps, alternating; "
          f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f})")
    name = "bench_numerics.json" if other == "native" else f"bench_numerics-{other}.json"
    out = ROOT / "results" / "benchmarks" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "median_ratio": overall, "rounds": args.rounds, "steps": args.steps,
                               "load_before": load_before, "load_after": os.getloadavg(), "numerics": recorded},
                              indent=1) + "\n")


if __name__ == "__main__":
    main()
