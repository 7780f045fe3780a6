#!/usr/bin/env bash
# The GPU checks, in one call on a lent GPU machine (docs/how-to/run-on-a-gpu.md):
#   1. grids/paper-gpu.yaml: NoPE, RoPE and ALiBi at GPT-2 small's shape, trained and evaluated
#      through the product's own path (posbench run), its records packed into $OUT/records.tar.gz;
#   2. tests/modeling/test_flex_gradients_cuda.py: FlexAttention's gradients against the float-mask path, on the GPU;
#   3. posbench bench on the GPU: training and evaluation speed, memory and MFU.
# Each step has its own time limit, so one that runs long leaves the others their time; what
# each printed is in $OUT/<step>.log. Run from the repository root:
#   OUT=/tmp/gpu-out scripts/gpu/check.sh
# GRIDS names the grids of step 1 (default grids/paper-gpu.yaml; grids/sinks-gpu.yaml is the
# other GPU grid), STEPS the steps to run (default "grid flex bench"), GRID_S, FLEX_S and BENCH_S
# their limits in seconds. A grid runs one seed at a time (a one-seed copy of it, which gives the
# same run ids), so a limit that cuts it short leaves every encoding at the seeds done so far.
# Wheels of the packages the machine lacks (pydantic, datasets, lm-eval, ...) are installed
# from .whl/ when it is there (the device tool's machines have PyTorch and Lightning).
source "$(dirname "$0")/setup.sh"
{ stamp environment; nvidia-smi; python3 -c "import torch, lightning, sys; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name()); print('lightning', lightning.__version__)"; nproc; } >"$OUT/env.log" 2>&1

STEPS=${STEPS:-grid flex bench}
step() { [[ " $STEPS " == *" $1 "* ]]; }

if step grid; then
  stamp grid >"$OUT/grid.log"
  deadline=$(( $(date +%s) + ${GRID_S:-320} ))
  seeded=$(mktemp -d)
  for grid in ${GRIDS:-grids/paper-gpu.yaml}; do
    name=$(basename "$grid" .yaml)
    for seed in $(python3 -c "import sys, yaml; print(*yaml.safe_load(open(sys.argv[1]))['seeds'])" "$grid"); do
      left=$(( deadline - $(date +%s) ))
      (( left > 0 )) || { echo "no time left for $name seed $seed" >>"$OUT/grid.log"; continue; }
      one="$seeded/$name-seed$seed.yaml"  # a grid's name must match its file's
      sed -e "s/^name: .*/name: $name-seed$seed/" -e "s/^seeds: .*/seeds: [$seed]/" "$grid" >"$one"
      stamp "$name seed $seed" >>"$OUT/grid.log"
      timeout "$left" python3 -m suite.cli.main --root . run "$one" --no-ingest --quiet --jobs 1 >>"$OUT/grid.log" 2>&1
      echo "exit $?" >>"$OUT/grid.log"
      pack records.tar.gz
    done
  done
fi

if step flex; then
  stamp flex >"$OUT/flex.log"
  timeout "${FLEX_S:-90}" python3 -m pytest -p no:cacheprovider -o addopts="" -s -q tests/modeling/test_flex_gradients_cuda.py >>"$OUT/flex.log" 2>&1
  echo "exit $?" >>"$OUT/flex.log"
fi

if step bench; then
  stamp bench >"$OUT/bench.log"
  timeout "${BENCH_S:-100}" python3 -m suite.cli.main --root . bench --device cuda --size gpt2-small --seq-len 1024 --batch 32 \
    --encodings nope,rope,alibi --steps 10 --warmup 3 --scales 1,4,16 >>"$OUT/bench.log" 2>&1
  echo "exit $?" >>"$OUT/bench.log"
  pack records.tar.gz
fi
stamp done >>"$OUT/env.log"
