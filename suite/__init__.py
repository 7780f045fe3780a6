"""PosBench: a declarative benchmark and leaderboard for positional encodings.

The import package is `suite` (the distribution is `posbench`). See DESIGN.md in the
project's shared folder for the architecture; each module has one job:
specs -> grid -> train -> evaluate -> store -> site.
"""

RECIPE_VERSION = 2  # 2: encodings matched to their reference code (KERPLE shared, CoPE /sqrt(d), ...)
"""Bumped whenever training or evaluation code changes results; part of every training run id."""
