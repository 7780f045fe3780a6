"""How long planning every published grid takes, with one pydantic validator per parameter class
(suite.encodings.params._adapter) and with a new one at every call (the code before 2026-11-28),
in one process so that the ratio does not depend on what else the machine runs.

    .venv/bin/python benchmarks/bench_planning.py

Planning is what `posbench run`, `plan`, `publish` and `replicate` do first, and what the tests
that cut the published snapshot by grid do (tests/snapshot_cut.py). Each wrapped encoding
checks its inner parameters at every id it is part of: some ten thousand checks of a few
dozen classes for the published grids.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pydantic

from suite.encodings import params
from suite.plan.grid import load_plan
from suite.specs import Project

ROOT = Path(__file__).resolve().parent.parent


def plan_all(grids: list[str]) -> float:
    """Seconds to plan ``grids`` (names under grids/) once."""
    start = time.perf_counter()
    for grid in grids:
        load_plan(ROOT / "grids" / f"{grid}.yaml", Project(ROOT))
    return time.perf_counter() - start


def main() -> None:
    grids = json.loads((ROOT / "leaderboard" / "SNAPSHOT.json").read_text())["grids"]
    plan_all(grids)  # imports and the corpus fingerprints, paid once by either way
    cached = plan_all(grids)
    params._adapter = pydantic.TypeAdapter  # a new validator at every call
    uncached = plan_all(grids)
    print(f"planning the {len(grids)} published grids: {cached:.1f} s with one validator per class, "
          f"{uncached:.1f} s with one per call ({uncached / cached:.1f}x)")


if __name__ == "__main__":
    main()
