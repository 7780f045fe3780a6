"""Golden values for LongRoPE's evolutionary search, run by the authors' own algorithm classes.

Reference: microsoft/LongRoPE@c9e56aa54007c328399677232a489feec446e4b8 (the stored snapshot's
HEAD), read with ``git show`` and executed as written (:func:`reference.run_definitions`):

* ``evolution/algorithms/genetic_base.py``: ``Individual``, ``EvaluatorQueue`` and
  ``GeneticAlgorithm`` (``run_genetic_algorithm``: the initial population of mutants of the
  start, then per iteration the best ``parents_size``, ``mutation_numbers`` mutants of random
  parents and ``crossover_size`` crossovers of random parent pairs, a failed crossover
  replaced by a mutant of its first parent);
* ``evolution/algorithms/dim_mono.py``: ``DimMonoGeneticAlgorithm`` (``mutate``,
  ``crossover``: the monotone constraint and the ``history`` of every candidate made, compared
  by ``Individual.__eq__``, i.e. ``np.allclose``).

Ding et al. 2024, "LongRoPE", Sec. 3.2, Algorithm 1. What is replaced, and why it cannot change
which candidates are generated:

* The scoring path. The authors' ``Evaluator`` starts ``evolution/evaluate.py`` in a
  subprocess on GPUs and talks to it over a socket: ``set_rope(rope_args)`` sends a
  candidate's ``rescale_factors``, ``get_result()`` receives its perplexity. Here
  :class:`FixedEvaluator`, with the same two methods, computes a closed-form loss of those
  factors instead (:func:`loss`). The authors' ``EvaluatorQueue`` is kept: it pushes each
  candidate to the next evaluator and joins (fills in ``ppl``) when all are busy and after the
  mutation and crossover phases, so two evaluators stand for two GPUs. No random number is
  drawn while scoring, and ``mutate``/``crossover`` never read ``ppl`` (only the sorts at the
  start of an iteration and at the end do, after ``queue.join()``), so the global
  ``np.random`` stream and every choice made from it are those of the authors' run with a
  model whose perplexity were this loss.
* Nothing else. ``socket``/``subprocess`` are not needed (``Evaluator`` is not loaded: its
  name is bound to :class:`FixedEvaluator` for the queue's annotation); ``tqdm`` is the real
  one (silenced by ``TQDM_DISABLE``); ``log`` writes its JSON and CSV files to a scratch folder
  as written, and a subclass only records its argument (the sorted parents of each iteration,
  and the final population) before calling it; ``history`` is a ``list`` subclass that counts
  how often a made candidate is found in it (a redrawn mutation or a skipped crossover), and a
  subclass counts crossovers that give up (``None``): neither draws a random number.

Seeded as ``evolution/search.py``'s ``set_seed`` seeds it (``np.random.seed``), 3 seeds from
each of two starts:

* ``yarn``: the authors' own start for s = 4, head dim 16, L 64 (``evolution/search.py``'s YaRN
  start, recorded by scripts/golden/longrope.py in tests/golden/longrope.json; their float32
  values as float64, since PosBench's calibration passes float64 start factors);
* ``near-grid``: a start whose values sit 4.2e-6 off the list_step grid that mutations from 1.0
  reach. ``np.allclose`` (atol 1e-8, rtol 1e-5) calls such values equal to the grid's, a
  6-decimal key does not: these runs pin how ``history`` compares candidates.

The fitness is a bowl with its minimum at a monotone target inside [1, 1 + s], coupled through
the sum of the errors so that no factor can be searched alone:
loss(l) = sum_i w_i (l_i - t_i)^2 + c (sum_i (l_i - t_i))^2.

All arithmetic is float64, so numpy's promotion rules (NEP 50, numpy 2) change nothing: the
file is identical written under numpy 1.26.4 and 2.x (checked; ``"numpy"`` records the one used).

Regenerate with (fetch github:microsoft/LongRoPE first):

    .venv/bin/python scripts/golden/longrope_search.py --reference-repo /work/.mirror/microsoft+LongRoPE/repo

which writes tests/golden/longrope-search.json.
"""

from __future__ import annotations

import abc
import argparse
import json
import logging
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")  # before tqdm is imported: its bars are not the algorithm's

import numpy as np  # noqa: E402
from tqdm import tqdm  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import run_definitions, show  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "golden" / "longrope-search.json"
COMMIT = "c9e56aa54007c328399677232a489feec446e4b8"
SEEDS = [42, 0, 1]  # 42: evolution/search.py's set_seed default
SCALE = 4  # s: the grids' target; the search's range is [1, 1 + s]
HYPER_PARAMS = {  # the keys of evolution/default_hyper_params/dim_mono.json, smaller
    "evo_scale": 1.0, "population_size": 16, "max_time_budget": 12, "mutation_numbers": 8,
    "crossover_size": 8, "max_crossover_try": 3, "parents_size": 8, "list_step": 0.01}
EVALUATORS = 2  # two "GPUs": the queue joins every second candidate
TARGET = [1.0, 1.0, 1.37, 1.92, 2.55, 3.18, 4.0, 4.61]  # the bowl's minimum: monotone, in [1, 1 + s]
WEIGHTS = [4.0, 3.0, 2.5, 2.0, 1.5, 1.0, 0.75, 0.5]  # the high frequencies matter more
COUPLING = 0.5
NEAR_GRID = [1.0000042, 1.0000042, 1.5000042, 2.0, 2.5000042, 3.0, 3.5000042, 4.0]
FORMULA = "sum_i w_i (l_i - t_i)^2 + c (sum_i (l_i - t_i))^2"


def loss(factors) -> float:
    """The fixed fitness (module docstring); float64, in this order of operations."""
    err = np.asarray(factors, dtype=np.float64) - np.asarray(TARGET)
    return float(np.sum(np.asarray(WEIGHTS) * err ** 2) + COUPLING * np.sum(err) ** 2)


class FixedEvaluator:
    """Stands for ``genetic_base.Evaluator`` (a GPU process behind a socket): the same
    ``set_rope``/``get_result``, scoring with :func:`loss`; every candidate in scoring order
    goes to ``scored``."""

    def __init__(self, scored: list):
        self.scored, self.result = scored, None

    def set_rope(self, rope_args: dict):
        self.result = loss(rope_args["rescale_factors"])
        self.scored.append((list(rope_args["rescale_factors"]), self.result))

    def get_result(self) -> float:
        return self.result


class CountingHistory(list):
    """``GeneticAlgorithm.history``, counting the ``in`` tests that find a made candidate."""

    hits = 0

    def __contains__(self, indv) -> bool:
        found = super().__contains__(indv)
        self.hits += found
        return found


def authors_algorithm(repo: str) -> type:
    """``DimMonoGeneticAlgorithm`` executed from the reference's files, over the stand-in evaluator."""
    ns = {"np": np, "json": json, "os": os, "abc": abc, "tqdm": tqdm, "Evaluator": FixedEvaluator,
          "logger": logging.getLogger("genetic_base")}
    run_definitions(show(repo, COMMIT, "evolution/algorithms/genetic_base.py"),
                    ("Individual", "EvaluatorQueue", "GeneticAlgorithm"), ns, "evolution/algorithms/genetic_base.py")
    run_definitions(show(repo, COMMIT, "evolution/algorithms/dim_mono.py"), ("DimMonoGeneticAlgorithm",), ns,
                    "evolution/algorithms/dim_mono.py")
    return ns["DimMonoGeneticAlgorithm"]


def run(algorithm: type, seed: int, start: np.ndarray, scratch: Path) -> dict:
    scored, logged, fallbacks = [], [], []

    class Recorded(algorithm):
        def log(self, iteration, population):
            logged.append([(indv.factors.tolist(), indv.ppl) for indv in population])
            super().log(iteration, population)

        def crossover(self, indv_1, indv_2):
            child = super().crossover(indv_1, indv_2)
            fallbacks.append(child is None)
            return child

    rope_args = {"dim": 2 * len(start), "scale": SCALE, "max_position_embeddings": SCALE * 64,
                 "original_max_position_embeddings": 64, "base": 10000.0, "model_type": "llama"}
    search = Recorded(evaluators=[FixedEvaluator(scored) for _ in range(EVALUATORS)], scale=SCALE,
                      target_length=SCALE * 64, hyper_params=HYPER_PARAMS, init_factors=start.copy(),
                      rope_args=rope_args, log_json_path=str(scratch / f"log-{seed}.json"), output_dir=str(scratch))
    search.history = CountingHistory()
    np.random.seed(seed)  # evolution/search.py set_seed
    final = search.run_genetic_algorithm()
    *iterations, last = logged  # log(i, parents) each iteration, then log(i, final population)
    assert np.array_equal(final, np.asarray(last[0][0])), "the result is the final population's best"
    return {"seed": seed,
            "scored_factors": [f for f, _ in scored], "scored_losses": [v for _, v in scored],
            "best_per_iteration": [parents[0][1] for parents in iterations],  # the authors' "PPL curve"
            "best_factors_per_iteration": [parents[0][0] for parents in iterations],
            "final_factors": final.tolist(), "final_loss": last[0][1],
            "history_hits": search.history.hits, "crossover_fallbacks": int(sum(fallbacks))}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--reference-repo", required=True)
    args = p.parse_args()
    algorithm = authors_algorithm(args.reference_repo)
    longrope = json.loads((ROOT / "tests" / "golden" / "longrope.json").read_text())
    start = np.asarray(next(c for c in longrope["cases"] if c["scale"] == SCALE)["start_factors"], dtype=np.float64)
    starts = {"yarn": start, "near-grid": np.asarray(NEAR_GRID)}
    with tempfile.TemporaryDirectory() as scratch:
        cases = [{"start_name": name, "start": s.tolist(), "runs": [run(algorithm, seed, s, Path(scratch)) for seed in SEEDS]}
                 for name, s in starts.items()]
    OUT.write_text(json.dumps({
        "reference": f"microsoft/LongRoPE@{COMMIT}: evolution/algorithms/genetic_base.py GeneticAlgorithm."
                     "run_genetic_algorithm with EvaluatorQueue and Individual, evolution/algorithms/dim_mono.py "
                     "DimMonoGeneticAlgorithm, executed as written; genetic_base.Evaluator (a GPU process behind a "
                     "socket) replaced by a closed-form loss with its set_rope/get_result; np.random.seed(seed)",
        "script": "scripts/golden/longrope_search.py", "numpy": np.__version__,
        "scale": SCALE, "hyper_params": HYPER_PARAMS, "evaluators": EVALUATORS,
        "evaluator": {"formula": FORMULA, "t": TARGET, "w": WEIGHTS, "c": COUPLING},
        "cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT}")
    for case in cases:
        for r in case["runs"]:
            print(case["start_name"], r["seed"], len(r["scored_factors"]), r["final_loss"], r["history_hits"],
                  r["crossover_fallbacks"])


if __name__ == "__main__":
    main()
