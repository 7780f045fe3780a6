#!/usr/bin/env bash
# The language-modelling size ladder (grids/ladder-lm*.yaml), rung by rung: tiny, then small,
# then medium and the fourth rung (order below). Resumable: each call trains and evaluates only
# what the records in results/ lack, and a run killed mid-training resumes from its last resume
# point (POSBENCH_RESUME_EVERY_S), so a session that ends mid-rung loses at most minutes;
# and it starts from the published snapshot's records (leaderboard/), so what an earlier
# machine ran and published counts as done here, and from those of the rung still running that
# an earlier session committed (ladder-progress/: a machine's end then loses only its runs in
# flight, not a rung's hours of finished records).
#   JOBS=2 scripts/ladder.sh          # both cores; records only (publish them with posbench publish)
# Every hour or so, and before a session ends, commit the unfinished rung's records alone: the
# command for the rung it is on is the line it printed last that starts with "rung".
set -u
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
JOBS=${JOBS:-1}
rung() {
    echo "rung $1 $2: save its records so far with: .venv/bin/posbench publish grids/$1.yaml --size $2 --out ladder-progress"
    "$PYTHON" -m suite.cli.main run "grids/$1.yaml" --size "$2" --jobs "$JOBS" --no-ingest --quiet "${@:3}"
}
rung ladder-lm tiny --with-published  # the published records into results/ first (then tiny's, if any, remain)
if [ -f ladder-progress/SNAPSHOT.json ]; then rung ladder-lm tiny --with-published ladder-progress; fi
for size in tiny small; do
    rung ladder-lm "$size"
    rung ladder-lm-question "$size"
    rung ladder-lm-budget "$size"
done
# Above small, the question's rows first (NoPE, RoPE with NTK-aware and YaRN, ALiBi): their
# medium rung at six seeds, its second budget, then the fourth rung, which answers "does the
# ordering at 16x survive a 60x larger model"; then the other seven rows' medium rung. Each grid
# is a rung of its own to publish, and a run two grids share (the question's seeds 0-2 are
# ladder-lm.yaml's) trains once.
rung ladder-lm-question medium
rung ladder-lm-budget-medium medium
rung ladder-lm-question large
rung ladder-lm medium
