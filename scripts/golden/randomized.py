"""Golden values for randomized positional encodings, drawn by the authors' own code.

The reference is google-deepmind/randomized_positional_encodings (JAX/Haiku):
``models/positional_encodings.py`` (``noisy_fixed_positional_encodings``: the draw)
and ``models/transformer.py`` (``NOISY_ROTARY``: where the draw is made). Its source
is not part of this project: the script takes it from a git snapshot at run time
(``git archive COMMIT`` into a temporary package ``randomized_positional_encodings``)
and runs it on JAX's CPU backend.

JAX's random numbers cannot be reproduced with torch's, so the golden values are the
reference's draws themselves, which the tests compare with ours in distribution and
in structure:

- ``subsets``: how often each 3-subset of [0, 6) came out of 20,000 draws of
  ``noisy_fixed_positional_encodings`` (the whole distribution of a small case);
- ``order_statistics``: per slot k, how often each id of [0, 32) was the k-th of
  8 sorted ids, over 20,000 draws;
- ``model_draws``: the ids that the reference's ``TransformerEncoder`` with
  ``NOISY_ROTARY`` (3 layers, a batch of 2) hands to the rotary encoding of its
  queries and keys, call by call, in two forward passes with two rng keys (as its
  ``range_evaluation`` passes a fresh key per test batch).

Regenerate with (fetch github:google-deepmind/randomized_positional_encodings first;
JAX goes to a scratch folder):

    .venv/bin/pip install --target /tmp/golden-deps-randomized "jax[cpu]==0.10.2" chex==0.1.92 dm-haiku==0.0.17
    PYTHONPATH=/tmp/golden-deps-randomized .venv/bin/python scripts/golden/randomized.py \\
        --reference-repo /work/.mirror/google-deepmind+randomized_positional_encodings/repo \\
        --commit e8c64749d8cad7772dc7ade75b32ef9b2b29b466

which writes tests/golden/randomized.json.
"""

from __future__ import annotations

import argparse
import importlib
import io
import itertools
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden"
REPO = "google-deepmind/randomized_positional_encodings"
PACKAGE = "randomized_positional_encodings"  # the name the reference's own imports use
N_DRAWS = 20_000


def unpack_reference(git_dir: str, commit: str, into: Path) -> None:
    archive = subprocess.run(["git", "--git-dir", git_dir, "archive", "--format=tar", commit],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into / PACKAGE, filter="data")
    sys.path.insert(0, str(into))


def reference_draws(pe, key, n: int, length: int, max_length: int):
    """[n, length] ids drawn by the reference: its draw applied to a table whose rows are their own ids."""
    import jax
    import jax.numpy as jnp

    table = jnp.arange(max_length)[:, None]
    draw = jax.jit(jax.vmap(lambda k: pe.noisy_fixed_positional_encodings(table, length, rng=k)[:, 0]))
    return jax.device_get(draw(jax.random.split(key, n)))


def subsets(pe, key) -> dict:
    L, T = 6, 3
    ids = reference_draws(pe, key, N_DRAWS, T, L)
    counts = {",".join(map(str, s)): 0 for s in itertools.combinations(range(L), T)}
    for row in ids.tolist():
        counts[",".join(map(str, row))] += 1  # a KeyError here: an unsorted or repeated draw
    return {"max_position": L, "length": T, "n": N_DRAWS, "counts": counts}


def order_statistics(pe, key) -> dict:
    L, T = 32, 8
    ids = reference_draws(pe, key, N_DRAWS, T, L)
    histograms = [[int((ids[:, slot] == v).sum()) for v in range(L)] for slot in range(T)]
    return {"max_position": L, "length": T, "n": N_DRAWS, "histograms": histograms}


def model_draws(pe, tr, key) -> dict:
    """The ids the reference's NOISY_ROTARY attention uses, recorded call by call."""
    import haiku as hk
    import jax
    import jax.numpy as jnp

    L, T, layers, batch = 32, 8, 3, 2
    config = tr.TransformerConfig(embedding_dim=8, num_layers=layers, num_heads=2, dropout_prob=None,
                                  positional_encodings=pe.PositionalEncodings.NOISY_ROTARY,
                                  positional_encodings_params=pe.NoisyRotaryParams(noise_max_length=L))
    model = hk.transform(lambda x: tr.TransformerEncoder(config)(x))
    calls = []
    draw = pe.noisy_fixed_positional_encodings

    def recording(table, length, rng=None):  # apply_rotary_encoding looks it up in its module at call time
        calls.append(jax.device_get(draw(jnp.arange(table.shape[0])[:, None], length, rng=rng)[:, 0]).tolist())
        return draw(table, length, rng=rng)

    pe.noisy_fixed_positional_encodings = recording
    try:
        x = jnp.ones((batch, T, 4))
        k_init, k_a, k_b = jax.random.split(key, 3)
        params = model.init(k_init, x)
        passes = []
        for k in (k_a, k_b):  # not jitted, so the recorded ids are concrete
            calls.clear()
            model.apply(params, k, x)
            passes.append([{"q": calls[2 * i], "k": calls[2 * i + 1]} for i in range(layers)])
    finally:
        pe.noisy_fixed_positional_encodings = draw
    return {"max_position": L, "length": T, "n_layers": layers, "batch": batch, "passes": passes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-repo", required=True, help=f"git dir of a {REPO} snapshot")
    parser.add_argument("--commit", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        unpack_reference(args.reference_repo, args.commit, Path(tmp))
        import jax

        pe = importlib.import_module(f"{PACKAGE}.models.positional_encodings")
        tr = importlib.import_module(f"{PACKAGE}.models.transformer")
        k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
        golden = {
            "reference": {"repo": REPO, "commit": args.commit,
                          "file": "models/positional_encodings.py (noisy_fixed_positional_encodings), "
                                  "models/transformer.py (NOISY_ROTARY)",
                          "library": f"jax=={jax.__version__} (CPU)",
                          "command": "PYTHONPATH=/tmp/golden-deps-randomized .venv/bin/python "
                                     "scripts/golden/randomized.py "
                                     f"--reference-repo <{REPO} snapshot> --commit {args.commit}"},
            "subsets": subsets(pe, k1),
            "order_statistics": order_statistics(pe, k2),
            "model_draws": model_draws(pe, tr, k3),
        }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "randomized.json").write_text(one_row_a_line(json.dumps(golden, indent=1)) + "\n")


def one_row_a_line(text: str) -> str:
    """Innermost lists of indented JSON on one line each."""
    return re.sub(r"\[\s*([^\[\]{}]*?)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)


if __name__ == "__main__":
    main()
