#!/usr/bin/env bash
# The language-modelling size ladder (grids/ladder-lm*.yaml), rung by rung: tiny, then small,
# then medium, then the fourth rung. Resumable: each call trains and evaluates only what the
# records in results/ lack, so a session that ends mid-rung loses at most the pieces in flight;
# and it starts from the published snapshot's records (leaderboard/), so what an earlier
# machine ran and published counts as done here.
#   JOBS=2 scripts/ladder.sh          # both cores; records only (publish them with posbench publish)
set -u
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
JOBS=${JOBS:-1}
rung() { "$PYTHON" -m suite.cli.main run "grids/$1.yaml" --size "$2" --jobs "$JOBS" --no-ingest --quiet "${@:3}"; }
rung ladder-lm tiny --with-published  # the published records into results/ first (then tiny's, if any, remain)
for size in tiny small; do
    rung ladder-lm "$size"
    rung ladder-lm-question "$size"
    rung ladder-lm-budget "$size"
done
rung ladder-lm medium
rung ladder-lm-question medium
rung ladder-lm-budget-medium medium
rung ladder-lm-question large
