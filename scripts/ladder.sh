#!/usr/bin/env bash
# The language-modelling size ladder (grids/ladder-lm*.yaml), rung by rung: tiny, then small,
# then medium, then the fourth rung. Resumable: each call trains and evaluates only what the
# records in results/ lack, so a session that ends mid-rung loses at most the pieces in flight.
#   JOBS=2 scripts/ladder.sh          # both cores; records only (publish them with posbench publish)
set -u
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
JOBS=${JOBS:-1}
rung() { "$PYTHON" -m suite.cli.main run "grids/$1.yaml" --size "$2" --jobs "$JOBS" --no-ingest --quiet; }
for size in tiny small; do
    rung ladder-lm "$size"
    rung ladder-lm-question "$size"
    rung ladder-lm-budget "$size"
done
rung ladder-lm medium
rung ladder-lm-question medium
rung ladder-lm-budget-medium medium
rung ladder-lm-question large
