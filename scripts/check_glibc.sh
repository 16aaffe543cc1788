#!/usr/bin/env bash
# Before pip: the default wake-word engine, pymicro-wakeword 2.5.0 (pinned in pyproject.toml), has
# wheels for glibc >= 2.35 only (manylinux_2_35, x86_64 and aarch64, CPython 3.11-3.13). On an older
# system an unpinned install falls back silently to pymicro-wakeword 1.0.0, which needs TensorFlow;
# the pinned one fails with pip's "no matching distribution". This says why, and what to do, first.
# Usage: scripts/check_glibc.sh [PYTHON]; exit 1 when the wheels cannot install here.
set -euo pipefail
PY=${1:-python3}
NEED=2.35
say() { printf '[setup] %s\n' "$*" >&2; }
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}') || have=""
if [ -z "$have" ]; then
  say "ERROR: this system's C library is not glibc (getconf GNU_LIBC_VERSION gave nothing);"
  say "  pymicro-wakeword==2.5.0, the default wake-word engine, ships manylinux_2_35 wheels only (glibc >= $NEED)."
  say "  Use a glibc-based board image (Debian 12, Ubuntu 22.04 or newer)."
  exit 1
fi
if [ "$(printf '%s\n%s\n' "$NEED" "$have" | sort -V | head -n1)" != "$NEED" ]; then
  say "ERROR: glibc $have is older than $NEED: pymicro-wakeword==2.5.0, the default wake-word engine, ships"
  say "  manylinux_2_35 wheels only, and the older pymicro-wakeword 1.0.0 that pip would otherwise pick needs TensorFlow."
  say "  Fix: flash a newer board image (Debian 12 'bookworm' has glibc 2.36, Ubuntu 22.04 has 2.35), then run setup again."
  exit 1
fi
pyv=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
case "$pyv" in
  3.11|3.12|3.13) ;;
  *) say "ERROR: Python $pyv: pymicro-wakeword==2.5.0 has wheels for CPython 3.11-3.13 only; set PYTHON=python3.11 (or 3.12, 3.13)"
     exit 1 ;;
esac
