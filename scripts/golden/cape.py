"""Golden training ids of CAPE (continuous augmented positions), drawn by Meta's code.

Reference: demucs==4.0.1 from PyPI (Meta's Hybrid Transformer Demucs, whose transformer
uses CAPE; the CAPE authors' own repository, facebookresearch/CAPE, cannot be fetched
here), ``demucs/transformer.py``: ``create_sin_embedding_cape``. Nothing of it is copied
into this project. The package's ``__init__`` imports its audio stack, so the script
takes that one function's source from the file in the sdist and runs it as written with
torch and numpy (``np.random`` seeded per case), ``augment=True`` and
``mean_normalize=False``.

The function returns the sinusoidal embedding of the ids, not the ids. With ``dim=4`` and
``max_period=2**20`` it returns cos and sin of the id itself and of the id / 2**20; the
script reads each id back from the two: the second angle (under pi, so no wrap) gives the
id to about 1e-4, which picks the turn of the first angle, whose remainder is exact to
float32's 1e-7. The file stores those ids.

Regenerate with (the sdist goes to a scratch folder, not into the venv):

    .venv/bin/pip download --no-deps --dest /tmp/demucs demucs==4.0.1
    .venv/bin/python scripts/golden/cape.py --sdist /tmp/demucs/demucs-4.0.1.tar.gz

which writes tests/golden/cape.json.
"""

from __future__ import annotations

import argparse
import json
import math
import tarfile
from pathlib import Path

import numpy as np
import torch
from reference import run_definitions

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "cape.json"
VERSION = "demucs==4.0.1"
MEMBER = "demucs-4.0.1/demucs/transformer.py"
FUNCTION = "create_sin_embedding_cape"
PERIOD = 2.0**20
# (seed, length, max_global_shift, max_local_shift, max_scale): HT Demucs's own setting
# (5000, 1, 1.4), the quick grids' (1024, 1, 1.4) and (16, 0.5, 1.2), and no augmentation.
CASES = ((0, 64, 5000.0, 1.0, 1.4), (1, 64, 1024.0, 1.0, 1.4), (2, 33, 16.0, 0.5, 1.2), (3, 8, 0.0, 0.0, 1.0))


def reference_function(sdist: str):
    with tarfile.open(sdist) as tar:
        source = tar.extractfile(MEMBER).read().decode()
    return run_definitions(source, (FUNCTION,), {"torch": torch, "np": np, "math": math},
                           f"{VERSION}:{MEMBER}")[FUNCTION]


def ids_from_embedding(emb: torch.Tensor) -> list[float]:
    """The ids of a [T, 1, 4] embedding (cos t, cos t/P, sin t, sin t/P)."""
    e = emb[:, 0].double()
    fine = torch.atan2(e[:, 2], e[:, 0])  # t mod 2 pi, in (-pi, pi]
    coarse = torch.atan2(e[:, 3], e[:, 1]) * PERIOD  # t to about 1e-4
    turns = torch.round((coarse - fine) / (2 * math.pi))
    return (fine + 2 * math.pi * turns).tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist", required=True, help="demucs-4.0.1.tar.gz (pip download --no-deps demucs==4.0.1)")
    args = parser.parse_args()
    cape = reference_function(args.sdist)
    cases = []
    for seed, length, shift, local, scale in CASES:
        np.random.seed(seed)
        emb = cape(length, 4, 1, mean_normalize=False, augment=True, max_global_shift=shift, max_local_shift=local,
                   max_scale=scale, max_period=PERIOD)
        cases.append({"seed": seed, "length": length, "max_global_shift": shift, "max_local_shift": local,
                      "max_global_scaling": scale, "position_ids": ids_from_embedding(emb)})
    OUT.write_text(json.dumps({"reference": f"{VERSION} {MEMBER} {FUNCTION}", "cases": cases}, indent=1) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
