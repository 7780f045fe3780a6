"""Which of MKL's code paths decide a trained model's bits on this CPU: the same short training
(a Lightning fit of the tiny model, the factory training uses) under each ``MKL_CBWR`` branch,
and a hash of the weights it ends with.

Intel's oneMKL developer guide ("Getting Started with Conditional Numerical Reproducibility")
promises a branch such as ``AVX2`` the same results on every *Intel* CPU that has it, and says
that on other vendors' CPUs MKL ignores the request and takes AUTO; ``COMPATIBLE`` is the one
branch it supports on Intel and non-Intel CPUs alike. This probe makes that checkable: each
branch runs in a process of its own (MKL reads ``MKL_CBWR`` at its first call) with the rest of
the standard numerics (one thread, ATen at AVX2), and the table gives the branch MKL reports in
effect (suite.core.numerics.mkl_branches) beside the hash. Two machines whose hashes agree for
a branch compute alike under it; run it on each CPU model a board mixes.

    .venv/bin/python benchmarks/probe_mkl_branches.py [--steps 20] [--encoding rope]
        [--branches AUTO,COMPATIBLE,AVX2,AVX2,STRICT,AVX512,STRICT]

Writes results/benchmarks/probe_mkl_branches.json with the CPU, each branch's report and hash.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BRANCHES = ("AUTO", "COMPATIBLE", "AVX2", "AVX2,STRICT", "AVX512,STRICT")

WORKER = r"""
import hashlib, json, sys
import torch
from suite.core import numerics
from suite.specs import Project, load_encoding, load_size
from suite.bench.run import BenchConfig
from suite.bench.training_steps import lightning_step_times, random_batches, training_run

numerics.pin()
project, steps, name = Project(__import__("pathlib").Path(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
size = load_size(project.spec_path("sizes", "tiny", project.root))
spec = load_encoding(project.spec_path("encodings", name, project.root))
cfg = BenchConfig(encodings=(name,), batch=16, seq_len=64)  # the default job's language-modelling shape
run = training_run(project, spec, size, cfg, steps)
_, module = lightning_step_times(run, random_batches(cfg, steps, torch.device("cpu")), torch.device("cpu"))
digest = hashlib.sha256()
for key, tensor in sorted(module.model.state_dict().items()):
    digest.update(key.encode()); digest.update(tensor.detach().contiguous().numpy().tobytes())
print(json.dumps({"numerics": numerics.measured(), "weights_sha256": digest.hexdigest()}))
"""


def probe(branch: str, steps: int, encoding: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("POSBENCH_")}
    done = subprocess.run([sys.executable, "-c", WORKER, str(ROOT), str(steps), encoding],
                          env={**clean, "POSBENCH_MKL_CBWR": branch}, capture_output=True, text=True, check=True,
                          cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def split_branches(text: str) -> list[str]:
    """``AUTO,AVX2,STRICT,COMPATIBLE`` -> [AUTO, AVX2,STRICT, COMPATIBLE]: STRICT joins the branch before it."""
    out: list[str] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if part.upper() == "STRICT" and out:
            out[-1] += ",STRICT"
        else:
            out.append(part)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--encoding", default="rope")
    parser.add_argument("--branches", default=",".join(BRANCHES))
    args = parser.parse_args()
    rows = []
    for branch in split_branches(args.branches):
        result = probe(branch, args.steps, args.encoding)
        n = result["numerics"]
        rows.append({"asked": branch, "mkl_branch": n.get("mkl_branch"), "mkl_auto_branch": n.get("mkl_auto_branch"),
                     "weights_sha256": result["weights_sha256"]})
    cpu = result["numerics"]["cpu"]
    print(f"{args.encoding}, {args.steps} Lightning steps (B 16, T 64), one thread, ATen at AVX2; {cpu}; "
          f"MKL's AUTO here: {rows[0]['mkl_auto_branch']}")
    print(f"{'MKL_CBWR asked':<16} {'MKL reports':<16} {'weights sha256':<18} same bits as")
    for row in rows:
        same = [r["asked"] for r in rows if r is not row and r["weights_sha256"] == row["weights_sha256"]]
        print(f"{row['asked']:<16} {row['mkl_branch'] or '?':<16} {row['weights_sha256'][:16]:<18} "
              f"{', '.join(same) or '-'}")
    out = ROOT / "results" / "benchmarks" / "probe_mkl_branches.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"cpu": cpu, "encoding": args.encoding, "steps": args.steps, "rows": rows,
                               "numerics": result["numerics"]}, indent=1) + "\n")


if __name__ == "__main__":
    main()
