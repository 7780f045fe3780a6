"""Golden values for the sinusoidal absolute encoding, from two references, one per reading.

* ``paper`` (Vaswani et al. 2017, Sec. 3.5: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1)
  = cos(...), interleaved): Hugging Face transformers' ``_create_sinusoidal_embeddings``
  (models/distilbert/modeling_distilbert.py), pinned, which writes exactly that formula
  (computed in float64 by numpy, stored in float32).
* ``tensor2tensor`` (the code the paper's experiments ran: sin and cos concatenated, not
  interleaved, inverse frequencies 10000^(-i/(d/2 - 1)), so the longest wavelength is
  exactly 2 pi 10000): fairseq's ``SinusoidalPositionalEmbedding.get_embedding``, whose
  docstring says it "matches the implementation in tensor2tensor", taken from the fairseq
  fork in which Press et al. ran their sinusoidal baseline (ofirpress/attention_with_linear_biases).
  It computes in float32, so the tolerance stated for this reading is 1e-4.

Regenerate with

    .venv/bin/pip install --no-deps --target /tmp/golden-deps-bias transformers==5.23.0 safetensors==0.8.0
    PYTHONPATH=/tmp/golden-deps-bias .venv/bin/python scripts/golden/sinusoidal.py \\
        --reference-repo <ofirpress/attention_with_linear_biases snapshot> --commit 4b92f28a005ead2567abe2359f633e73e08f3833

which writes tests/golden/sinusoidal.json: rows of the [positions, d_model] tables.
"""

from __future__ import annotations

import argparse
import math
from typing import Optional

import torch

from bias import definitions, execute, git_show, write

DIM, TABLE = 16, 1024
POSITIONS = list(range(40)) + [63, 100, 255, 511, 1023]  # rows kept from a table of TABLE rows
FAIRSEQ_FILE = "fairseq/modules/sinusoidal_positional_embedding.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference-repo", required=True, help="git dir of an ofirpress/attention_with_linear_biases snapshot")
    parser.add_argument("--commit", required=True)
    args = parser.parse_args()

    import transformers
    from transformers.models.distilbert.modeling_distilbert import _create_sinusoidal_embeddings

    paper = _create_sinusoidal_embeddings(TABLE, DIM, torch.empty(TABLE, DIM))[POSITIONS]
    source = git_show(args.reference_repo, args.commit, FAIRSEQ_FILE)
    get_embedding = execute(definitions(source, ["get_embedding"], within="SinusoidalPositionalEmbedding"),
                            FAIRSEQ_FILE, torch=torch, math=math, Optional=Optional)["get_embedding"]
    t2t = get_embedding(TABLE, DIM)[POSITIONS]  # no padding_idx: row p is position p
    library = {"library": f"transformers=={transformers.__version__}", "version": transformers.__version__}
    fairseq = {"repo": "ofirpress/attention_with_linear_biases", "commit": args.commit}
    command = ("PYTHONPATH=/tmp/golden-deps-bias .venv/bin/python scripts/golden/sinusoidal.py "
               f"--reference-repo <ofirpress/attention_with_linear_biases snapshot> --commit {args.commit}")
    write("sinusoidal", {
        "reference": {**library, **fairseq, "file": "see paper.reference and tensor2tensor.reference", "command": command},
        "d_model": DIM, "positions": POSITIONS,
        "paper": {"reference": {**library, "command": command,
                                "file": "transformers/models/distilbert/modeling_distilbert.py (_create_sinusoidal_embeddings)"},
                  "table": paper.tolist()},
        "tensor2tensor": {"reference": {**fairseq, "command": command,
                                        "file": f"{FAIRSEQ_FILE} (SinusoidalPositionalEmbedding.get_embedding)"},
                          "tolerance": 1e-4, "table": t2t.tolist()}})

if __name__ == "__main__":
    main()
