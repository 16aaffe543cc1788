#!/usr/bin/env bash
# The arm64 rehearsal, without a board: an arm64 Debian 12 root file system under qemu-aarch64-static
# (scripts/arm64-rootfs.sh), the product's runtime dependencies resolved for each board image of
# board-configs/ and installed as aarch64 wheels, then `edge run --input examples/two_turns_log_then_undo.wav`
# (grammar only, no LLM; the same run on this machine is the reference) and `edge doctor --board rk3588-rock5b
# --json` run in it (scripts/arm64_check.py).
# Result: bench/results/arm64-check.json (or $1). Exit 1 when the demo's events or store are wrong.
# Cached in $EDGE_ARM64_CACHE (default ~/.cache/edge-arm64): the root file system, the wheels, the
# installed site-packages and the dependency resolution (reused for 7 days; EDGE_ARM64_REFRESH=1 redoes it).
# A second run is the emulated demo and doctor only: ~4 min of CPU, longer on a loaded machine.
# Not run by .ci/run (see the README's field deployment section): run it after changing dependencies,
# board configs or the loop, under `nice`, and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$PWD/.venv/bin/python}
OUT=${1:-bench/results/arm64-check.json}
T0=$(date +%s.%N)
ROOTFS=$(PYTHON=$PY bash scripts/arm64-rootfs.sh)
# cached when the root was finished before this run started
if [ "$(stat -c %Y "$ROOTFS/.edge-rootfs-ok")" -lt "${T0%.*}" ]; then export EDGE_ARM64_ROOTFS_CACHED=1; fi
EDGE_ARM64_ROOTFS_SECONDS=$(echo "$(date +%s.%N) - $T0" | bc)
export EDGE_ARM64_ROOTFS_SECONDS
exec "$PY" scripts/arm64_check.py "$ROOTFS" "$OUT"
