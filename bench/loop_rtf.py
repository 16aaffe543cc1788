"""Real-time factor of the whole loop over the shared sessions (processing time ÷ audio duration).

    .venv/bin/python bench/loop_rtf.py [--out bench/results/loop_rtf.json]

Runs every session of ../shared/audio/sessions through the real pipeline (models loaded once,
a fresh store per session), timing the wall clock and the process CPU time. RTF < 1 means faster
than real time. Figures are from one run on a shared, noisy machine: compare ratios, not absolutes.
"""
from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from drivers.audio import wav_frames  # noqa: E402
from edge.config import load_settings  # noqa: E402
from edge.service import build_stages, run_frames  # noqa: E402
from edge.store import Store  # noqa: E402

SESSIONS = REPO.parent / "shared" / "audio" / "sessions"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(REPO / "bench/results/loop_rtf.json"))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    settings = load_settings(board="x86-dev", overrides={"store": {"path": str(tmp / "x.db")}, "output_dir": str(tmp)})
    boot = Store(tmp / "boot.db")
    boot.import_csv(SESSIONS / "inventory.csv")
    t = time.perf_counter()
    stages = build_stages(settings, boot)
    load_s = time.perf_counter() - t
    rows = []
    for wav in sorted(SESSIONS.glob("*.wav")):
        frames = list(wav_frames(wav))
        audio_s = len(frames) * 0.08
        store = Store(tmp / f"{wav.stem}.db")
        store.import_csv(SESSIONS / "inventory.csv")
        stages.store = store
        stages.wake.flush()
        events = []
        w0, c0 = time.perf_counter(), time.process_time()
        run_frames(frames, stages, settings, tmp, events.append)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        rows.append({"session": wav.stem, "audio_s": round(audio_s, 3), "wall_s": round(wall, 3),
                     "cpu_s": round(cpu, 3), "rtf": round(wall / audio_s, 3),
                     "events": [e.type for e in events]})
        store.close()
    total_audio = sum(r["audio_s"] for r in rows)
    total_wall = sum(r["wall_s"] for r in rows)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    result = {
        "what": "edge loop real-time factor over the shared sessions (wall time / audio time)",
        "date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {platform.processor() or ''}".strip(", "),
        "cores": __import__("os").cpu_count(), "commit": commit, "model_load_s": round(load_s, 2),
        "asr": settings.asr.engine, "llm": settings.llm.model,
        "total_audio_s": round(total_audio, 2), "total_wall_s": round(total_wall, 2),
        "rtf_overall": round(total_wall / total_audio, 3), "sessions": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"RTF overall {result['rtf_overall']} ({total_wall:.1f} s for {total_audio:.1f} s of audio); "
          f"max per session {max(r['rtf'] for r in rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
