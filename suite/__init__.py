"""PosBench: a declarative benchmark and leaderboard for positional encodings.

The import package is `suite` (the distribution is `posbench`). Its folders are the
stages of the flow, each importing only the ones before it (docs/layout.md):
core -> encodings, data -> specs -> modeling -> plan -> training -> evaluation -> results ->
execution -> report, with bench, submission and cli on top.
"""

RECIPE_VERSION = 2  # 2: encodings matched to their reference code (KERPLE shared, CoPE /sqrt(d), ...)
"""Bumped whenever training or evaluation code changes results; part of every training run id."""

# Before torch runs its first kernel, in every process that imports the suite (grid workers,
# SLURM tasks, verify, tests): the numerics that make a CPU figure reproducible (suite.core.numerics).
from suite.core import numerics as _numerics  # noqa: E402

try:
    _numerics.export()
except ValueError as _exc:  # a POSBENCH_* variable with a value it cannot take: one line, not a traceback
    raise SystemExit(f"posbench: {_exc}") from None
