"""Golden key tokens for the key-token diagnostic, chosen by its authors' code.

Reference: PKU-ML/LongPPL at commit 1decd2a (Fang et al. 2025, "What is Wrong with Perplexity
for Long-context Language Modeling?", ICLR 2025), ``longppl/longppl.py``: ``find_key_token``
(the selection: a token is key when ``loss_short - loss_full > alpha`` and
``loss_full < -beta``, i.e. LSD > alpha and LCL > beta, with the defaults ``alpha=2``,
``beta=-2`` of its signature), ``merge_intervals`` (which it calls) and ``cal_overlap`` (how
``compute_longppl`` maps the chosen text back to the indices of the loss it averages). Only
those three functions are executed, as written (their file imports ``transformers``, which they
do not use and which this environment does not have), with torch and numpy.

``find_key_token`` runs an evaluator LLM and its tokenizer; here both are stand-ins, said so:

* the tokenizer gives each character of a text of distinct characters its own id and offsets
  ``(i, i + 1)`` (byte-level, as PosBench's models);
* the "model" is a table of fixed log-probabilities: on the whole text (the long context) its
  logits at position ``i`` put log-probability ``long[i + 1]`` on token ``i + 1``; on a
  truncated window (the short context; it recognises the window by its first token, since
  every token is distinct) they put ``short[p]`` on each token ``p``. ``short[p]`` stands for
  log p(x_p | its previous ``trunc_len`` tokens), the exact truncation PosBench computes;
  the authors' sliding window (``sliding_window`` tokens sharing one short window) is how they
  approximate that cheaply, and with a table the window's size changes nothing. Their code
  cannot run with ``sliding_window=1`` (``.squeeze()`` turns its one-element mask into a 0-d
  tensor that ``enumerate`` refuses), so it runs with 4 here.

The rest of the logits share the remaining probability evenly, so the authors' cross-entropy
returns the table's values. The tables are seeded random draws put 0.005 off a grid of 0.01, so that no
value or difference lies within 1e-3 of a (whole-number) threshold; the golden file holds them, the settings and the key tokens (indices into the
authors' ``loss_overall``: the target ``j`` predicted from tokens ``0..j``), which
``tests/evaluation/test_key_tokens.py`` compares with :func:`suite.evaluation.evaluators.key_tokens.key_token_mask`.

Regenerate with (the reference file at that commit in a folder):

    git --git-dir <LongPPL snapshot> show 1decd2a:longppl/longppl.py > /tmp/ref/longppl.py
    .venv/bin/python scripts/golden/key_tokens.py /tmp/ref/longppl.py
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import run_definitions  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "key-tokens.json"
SEQUENCES, LENGTH, SLIDING_WINDOW = 3, 40, 4
CASES = ({"trunc_len": 8, "alpha": 2.0, "beta": -2.0},  # the authors' thresholds
         {"trunc_len": 8, "alpha": 1.0, "beta": -3.0},
         {"trunc_len": 13, "alpha": 3.0, "beta": -1.0})  # (40 - 13) % 4 = 3: their last, shorter window
MARGIN = 1e-3
BASE = 0x4E00  # the texts' characters: LENGTH distinct ones from here


def tables(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(long, short) natural-log probabilities [SEQUENCES, LENGTH] of each token (index 0, the
    first token, is never predicted), kept ``MARGIN`` from every case's thresholds."""
    rng = np.random.default_rng(seed)
    off_grid = lambda x: np.round(x, 2) + 0.005  # the thresholds are whole numbers: nothing lands on one
    long = -off_grid(rng.uniform(0.0, 4.0, (SEQUENCES, LENGTH)))
    short = long - off_grid(rng.uniform(0.0, 6.0, (SEQUENCES, LENGTH)))
    for case in CASES:
        lsd = long - short
        assert np.abs(lsd - case["alpha"]).min() > MARGIN and np.abs(long - case["beta"]).min() > MARGIN, \
            "a draw too near a threshold: change the seed"
    return long, short


def distribution(logp: float, target: int, vocab: int) -> torch.Tensor:
    """Log-probabilities over ``vocab`` with ``logp`` on ``target`` and the rest spread evenly."""
    rest = np.log((1.0 - np.exp(logp)) / (vocab - 1))
    row = torch.full((vocab,), rest, dtype=torch.float64)
    row[target] = logp
    return row.float()


class Tokenizer:
    """A character per token, ids 0.. in order of the text (every character distinct)."""

    def __call__(self, text, return_tensors="pt", return_offsets_mapping=True, **_):
        ids = torch.tensor([[ord(c) - BASE for c in text]])
        offsets = torch.tensor([[[i, i + 1] for i in range(len(text))]])
        return {"input_ids": ids, "offset_mapping": offsets}


class TableModel:
    """The evaluator model of ``find_key_token``, answering from the fixed tables (see the docstring)."""

    device = torch.device("cpu")

    def __init__(self, long: np.ndarray, short: np.ndarray):
        self.long, self.short = long, short

    def __call__(self, input_ids: torch.Tensor):
        ids = input_ids[0].tolist()
        first, n, V = ids[0], len(ids), len(self.long)
        table = self.long if (first, n) == (0, V) else self.short  # the whole text, or a truncated window
        rows = [distribution(table[first + k + 1] if first + k + 1 < V else -1.0, min(first + k + 1, V - 1), V)
                for k in range(n)]
        return SimpleNamespace(logits=torch.stack(rows)[None])


def main(path: Path) -> None:
    ns = run_definitions(path.read_text(), ("merge_intervals", "find_key_token", "cal_overlap"),
                         {"torch": torch, "np": np}, str(path))
    defaults = inspect.signature(ns["find_key_token"]).parameters
    long, short = tables()
    text = "".join(chr(BASE + i) for i in range(LENGTH))
    offsets = [[i, i + 1] for i in range(LENGTH)]
    cases = []
    for case in CASES:
        keys = []
        for s in range(SEQUENCES):
            slices = ns["find_key_token"](text, TableModel(long[s], short[s]), Tokenizer(), case["trunc_len"],
                                          SLIDING_WINDOW, None, case["alpha"], case["beta"])
            keys.append([int(k) for k in ns["cal_overlap"](offsets, slices)])
        assert all(keys), "a sequence without key tokens tests less: change the seed"
        cases.append({**case, "key_tokens": keys})
        print(case, [len(k) for k in keys])
    OUT.write_text(json.dumps({
        "reference": {"repo": "PKU-ML/LongPPL", "commit": "1decd2a", "file": "longppl/longppl.py",
                      "functions": ["find_key_token", "merge_intervals", "cal_overlap"],
                      "command": "scripts/golden/key_tokens.py"},
        "defaults": {"alpha": defaults["alpha"].default, "beta": defaults["beta"].default},
        "sliding_window": SLIDING_WINDOW, "seed": 0,
        "long_logp": long.tolist(), "short_logp": short.tolist(),  # [sequence][position]: log p of token p
        "cases": cases,
    }, indent=1) + "\n")
    print(OUT)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
