"""Golden training ids of PoSE and randomized positions, drawn by the authors' code.

Reference: dwzhu-pku/PoSE at commit a3d4ba8bd38e6615ba778d9a1061e380c8e69647,
``src/train_pose.py``: ``train_preprocess_function_pose`` and
``train_preprocess_function_randomized``. Nothing of it is copied into this project.
The module imports deepspeed, transformers and the authors' Llama at its top, none of
which the two functions use, so the script takes the two functions' source from the
file (``git show COMMIT:src/train_pose.py``) and runs exactly that with Python's
``random`` (seeded per case) and a byte "tokenizer": a callable returning
``{"input_ids": [...]}`` for each text, truncated to ``max_length`` as a tokenizer would.
Each text is 5 L bytes long, so PoSE's second-chunk draw ``rt2`` ranges over [L, 5 L]
as it does on the authors' long documents.

Regenerate with (fetch github:dwzhu-pku/PoSE first):

    .venv/bin/python scripts/golden/pose.py --reference-repo /work/.mirror/dwzhu-pku+PoSE/repo

which writes tests/golden/position_transforms.json.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import torch
from reference import run_definitions, show

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "position_transforms.json"
COMMIT = "a3d4ba8bd38e6615ba778d9a1061e380c8e69647"
FUNCTIONS = ("train_preprocess_function_pose", "train_preprocess_function_randomized")


def reference_functions(repo: str) -> dict:
    namespace = run_definitions(show(repo, COMMIT, "src/train_pose.py"), FUNCTIONS, {"random": random, "torch": torch},
                                f"src/train_pose.py@{COMMIT}")
    return {name: namespace[name] for name in FUNCTIONS}


def byte_tokenizer(texts, padding=False, truncation=True, max_length=None):
    return {"input_ids": [list(t.encode())[:max_length] for t in texts]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-repo", required=True, help="the git directory of the fetched snapshot")
    args = parser.parse_args()
    functions = reference_functions(args.reference_repo)
    cases = []
    for transform, function in (("pose", FUNCTIONS[0]), ("randomized", FUNCTIONS[1])):
        for seed, train_len, target in ((0, 64, 1024), (1, 64, 256), (2, 33, 100), (3, 8, 8)):
            random.seed(seed)
            text = "x" * (5 * train_len)
            out = functions[function]({"text": [text]}, byte_tokenizer, target, train_len)
            cases.append({"transform": transform, "seed": seed, "train_len": train_len, "target": target,
                          "position_ids": [int(i) for i in out["position_ids"][0]]})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"reference": f"dwzhu-pku/PoSE@{COMMIT}", "cases": cases}) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
