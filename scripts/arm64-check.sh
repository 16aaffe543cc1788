#!/usr/bin/env bash
# The arm64 rehearsal, without a board: an arm64 Debian 12 root file system under qemu-aarch64-static
# (scripts/arm64-rootfs.sh), the product's runtime dependencies resolved for each board image of
# board-configs/ and installed as aarch64 wheels, then `edge run --input examples/two_turns_log_then_undo.wav`
# (grammar only, no LLM) and `edge doctor --board rk3588-rock5b --json` run in it (scripts/arm64_check.py).
# Result: bench/results/arm64-check.json (or $1). Exit 1 when the demo's events or store are wrong.
# Cached in $EDGE_ARM64_CACHE (default ~/.cache/edge-arm64): the first run takes a few minutes
# (root file system, wheels), a second run mostly the emulated demo.
# Not run by .ci/run: the emulated demo alone takes minutes of a CI budget the test suite already uses;
# run it after changing dependencies or board configs and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$PWD/.venv/bin/python}
OUT=${1:-bench/results/arm64-check.json}
ROOTFS=$(PYTHON=$PY bash scripts/arm64-rootfs.sh)
exec "$PY" scripts/arm64_check.py "$ROOTFS" "$OUT"
