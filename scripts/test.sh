#!/usr/bin/env bash
# Install everything, then the style gate (ruff, settings in pyproject.toml), then the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
# Two worker processes (EDGE_TEST_WORKERS), a test file's tests on one of them (its module fixtures
# are built once): most tests wait on servers, subprocesses and audio, so two share two cores well.
# The 30 slowest tests are listed at the end, so that a slow one shows in every CI log.
exec .venv/bin/python -m pytest -q -p no:cacheprovider -n "${EDGE_TEST_WORKERS:-2}" --dist loadfile --durations=30 "$@"
