"""Real-time factor of the whole loop over the shared sessions (processing time ÷ audio duration).

    .venv/bin/python bench/loop_rtf.py [--out bench/results/loop_rtf.json] [--sessions DIR]

Folded into ``edge bench`` (edge/ops/bench/, issue 8), which measures this and every stage of the
loop alongside the LLM figures; this script runs only its voice-loop part
(:func:`edge.ops.bench.loop.measure_loop`: models loaded once, a fresh store per session, wall clock and
process CPU time per session) and keeps writing ``bench/results/loop_rtf.json`` in its old form.
RTF < 1 means faster than real time. Figures are from one run on a shared, noisy machine:
compare ratios, not absolutes.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from edge.config import load_settings  # noqa: E402
from edge.ops.bench.defaults import DEFAULT_SESSIONS  # noqa: E402
from edge.ops.bench.loop import measure_loop  # noqa: E402
from edge.ops.bench.machine import git_commit  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(REPO / "bench/results/loop_rtf.json"))
    ap.add_argument("--sessions", default=str(DEFAULT_SESSIONS))
    args = ap.parse_args()
    settings = load_settings(board="x86-dev")
    loop = measure_loop(settings, Path(args.sessions), llm_turns=0)
    result = {
        "what": "edge loop real-time factor over the shared sessions (wall time / audio time); "
                "see edge bench for the per-stage figures",
        "date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {platform.processor() or ''}".strip(", "),
        "cores": os.cpu_count(), "commit": (git_commit()["commit"] or "")[:7], "model_load_s": loop["model_load_s"],
        "asr": loop["asr"], "llm": loop["llm"],
        "total_audio_s": loop["total_audio_s"], "total_wall_s": loop["total_wall_s"],
        "rtf_overall": loop["rtf_overall"], "sessions": loop["sessions"],
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"RTF overall {result['rtf_overall']} ({result['total_wall_s']:.1f} s for {result['total_audio_s']:.1f} s "
          f"of audio); max per session {max(r['rtf'] for r in loop['sessions'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
