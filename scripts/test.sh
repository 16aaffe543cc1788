#!/usr/bin/env bash
# Install everything, then the style gate (ruff, settings in pyproject.toml), then the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
