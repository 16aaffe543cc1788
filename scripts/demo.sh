#!/usr/bin/env bash
# Install everything, then run the voice loop over the bundled example session (a wake word, "log
# twenty boxes of nitrile gloves received", a second wake word, "undo that") on the default models.
# Events are printed as JSON lines; reply WAVs and events.jsonl go to out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
rm -f out/demo/edge.db
exec .venv/bin/edge run --input examples/two_turns_log_then_undo.wav \
  --config examples/demo.yaml --inventory examples/inventory.csv --output-dir out/demo --json "$@"
