# Sourced by the GPU scripts (check.sh, ladder_rung.sh) from the repository root: the output folder,
# the wheels of the packages a lent machine lacks (installed from .whl/ when it is there; its
# image has PyTorch and Lightning), this checkout on the path, and the helpers both use.
set -u
OUT=${OUT:?set OUT to the folder the logs and records go to}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TQDM_DISABLE=1
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "installing .whl/ failed"; exit 1; }
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }
pack() {  # $1: the archive in $OUT; the records so far, never the checkpoints (what comes back even if a later step is cut short)
  tar czf "$OUT/$1" --exclude='results/checkpoints' --exclude='results/hpc' --exclude='results/claims' \
    --exclude='results/lmeval' results 2>/dev/null
}
