"""CPU per 80 ms frame of one wake-word model alone, as the box runs its default: microWakeWord
okay_nabu vs openWakeWord hey_mycroft, interleaved twice over the shared sessions played 3 times
(``time.process_time``, all threads). bench/wake_words.py reports the cost per model with four
models sharing an engine's front end; this is the cost of the default configuration.

    .venv/bin/python bench/wake_cost.py [--out bench/results/wake_cost.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from drivers.audio import wav_frames  # noqa: E402
from edge.stages.wake import WakeWord  # noqa: E402

SIDES = {"micro okay_nabu": [("okay_nabu", "micro", 0.7)], "openwakeword hey_mycroft": [("hey_mycroft", "openwakeword", 0.6)]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "wake_cost.json"))
    a = ap.parse_args(argv)
    sessions = sorted((REPO.parent / "shared" / "audio" / "sessions").glob("*.wav"))
    frames = [f for p in sessions for f in wav_frames(p, chunk=4000)] * 3
    runs: dict[str, list[float]] = {k: [] for k in SIDES}
    for _ in range(2):
        for label, spec in SIDES.items():
            ww = WakeWord(spec)
            ww.flush()
            t = time.process_time()
            for f in frames:
                ww.process(f)
            runs[label].append(round(1000 * (time.process_time() - t) / len(frames), 3))
    result = {"frames": len(frames), "ms_per_frame": runs, "median_ms_per_frame": {k: sorted(v)[len(v) // 2] for k, v in runs.items()}}
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
