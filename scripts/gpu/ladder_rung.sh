#!/usr/bin/env bash
# The size ladder's GPU rung (issue 57), in one call on a lent GPU machine
# (docs/how-to/run-on-a-gpu.md, "The ladder's GPU rung"):
#   1. grids/ladder-lm-gpu.yaml: the question rows at base (19M matmul weights), its sweep and
#      three seeds, by JOBS worker processes sharing the one GPU (16 x 64-token batches leave it
#      mostly idle, so one process is bound by its Python, not the GPU); the records, never the
#      checkpoints, go to $OUT/ladder-lm-gpu.tar.gz;
#   2. grids/ladder-lm-question.yaml's tiny rung at seeds 0-2: the very runs (the same ids) of the
#      published CPU records, on the GPU, for the device effect (benchmarks/device_effect.py). Its
#      records are kept apart, in $OUT/device-effect.tar.gz: same ids, another machine class.
# Each step has a time limit (RUNG_S, TINY_S seconds); a limit that cuts a step short leaves the
# pieces finished so far, and a later call resumes them (see RESUME below). Wheels of the packages the machine lacks
# are installed from .whl/ (docs/how-to/run-on-a-gpu.md). Run from the repository root:
#   OUT=/tmp/gpu-out scripts/gpu/ladder_rung.sh
source "$(dirname "$0")/setup.sh"
posbench() { python3 -m suite.cli.main --root . "$@"; }
{ stamp environment; nvidia-smi; lscpu | grep -E "Model name|Vendor|CPU family|^Model:|Flags" | cut -c1-400
  python3 -c "import torch, lightning, sys; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name()); print('lightning', lightning.__version__)"; nproc; } >"$OUT/env.log" 2>&1

rung() {  # $1: seconds, then posbench run's arguments
  local limit=$1; shift
  stamp "run $*"
  timeout -s TERM -k 20 "$limit" python3 -m suite.cli.main --root . run "$@" --no-ingest --quiet
  echo "exit $?"
  pkill -f "suite.cli.main --root . run" 2>/dev/null; sleep 1
  posbench plan "$1" ${SIZE_ARGS:-} 2>&1 | grep -E "^(training runs|evaluations):"
}

# A warm machine keeps ignored folders between calls (results/, .cache/), so a second call resumes
# both steps with their checkpoints; a fresh machine resumes from records carried in RESUME (a
# folder laid out as results/: runs/, evals/, samples/, e.g. the rung's published records).
if [[ -n ${RESUME:-} && -d $RESUME ]]; then mkdir -p results && cp -rn "$RESUME"/. results/; fi
rung "${RUNG_S:-380}" grids/ladder-lm-gpu.yaml --jobs "${JOBS:-4}" >>"$OUT/rung.log" 2>&1
pack ladder-lm-gpu.tar.gz

# the tiny rung at seeds 0-2 in its own results/ (the rung's waits in .cache/gpu/), from a copy
# of the grid under its own file's name (a grid's name must match its file's); TINY_S=0 skips it
# (a call that only completes the rung: `timeout 0` would mean no limit at all)
if (( ${TINY_S:-110} > 0 )); then
  mkdir -p .cache/gpu && mv results .cache/gpu/rung && { [[ -d .cache/gpu/tiny ]] && mv .cache/gpu/tiny results; }
  tiny=$(mktemp -d)/ladder-lm-question.yaml
  sed -e "s/^seeds: .*/seeds: [0, 1, 2]/" grids/ladder-lm-question.yaml >"$tiny"
  SIZE_ARGS="--size tiny" rung "${TINY_S:-110}" "$tiny" --size tiny --jobs "${JOBS:-4}" --retry-failed >>"$OUT/tiny.log" 2>&1
  pack device-effect.tar.gz
  mv results .cache/gpu/tiny && mv .cache/gpu/rung results
fi
stamp done >>"$OUT/env.log"
