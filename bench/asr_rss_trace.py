"""C16, the long run one call at a time: the resident memory of the speech recognizer worker after
every call on the 5 s clip of bench/asr_memory.py, with recycling off (the raw curve the governor's
:class:`edge.governor.memwatch.MemoryWatch` judges), written as it goes so a long run can be read
while it runs or after it was stopped.

    .venv/bin/python bench/asr_rss_trace.py [--calls 1500] [--trace bench/cache/asr_rss_trace.txt]
                                            [--out bench/results/asr_rss_trace.json]

Reported: growth per call after a 50-call warm-up (lowest RSS of the first tenth of the calls after
it to the lowest of the last tenth ÷ the calls between, as bench/asr_memory.py), lowest and highest
RSS after warm-up (MiB), and whether the default MemoryWatch would have recycled the worker (and at
which call) on this curve. Pass: growth < 1 KiB per call and no recycle.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.asr_memory import clip_5s  # noqa: E402
from edge.config import load_settings  # noqa: E402
from edge.governor.memwatch import MIB, MemoryWatch  # noqa: E402
from edge.stages.asr.worker import AsrWorker, watch_from_settings  # noqa: E402

WARMUP = 50


def summary(rss: list[int], settings) -> dict:
    after = rss[WARMUP:]
    tenth = max(1, len(after) // 10)
    growth = (min(after[-tenth:]) - min(after[:tenth])) / max(1, len(after) - tenth)
    watch = watch_from_settings(settings)  # the product's rule, replayed on the curve
    recycled_at = next((i for i, r in enumerate(rss) if watch.observe(r) is not None), None)
    return {"calls": len(rss), "warmup": WARMUP, "growth_bytes_per_call": round(growth, 1),
            "rss_mib_min_after_warmup": round(min(after) / MIB, 3), "rss_mib_max_after_warmup": round(max(after) / MIB, 3),
            "default_watch_recycles_at_call": recycled_at,
            "pass": growth < 1024 and recycled_at is None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1500)
    ap.add_argument("--trace", default=str(REPO / "bench" / "cache" / "asr_rss_trace.txt"))
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "asr_rss_trace.json"))
    ap.add_argument("--from-trace", action="store_true", help="summarise an existing --trace file, no calls")
    a = ap.parse_args(argv)
    settings = load_settings(board="x86-dev").asr
    trace = Path(a.trace)
    if not a.from_trace:
        trace.parent.mkdir(parents=True, exist_ok=True)
        audio = clip_5s()
        w = AsrWorker(settings, watch=MemoryWatch(slope_bytes_per_call=float("inf")))  # never recycles
        try:
            with trace.open("w") as f:
                for i in range(a.calls):
                    w.transcribe(audio)
                    print(i, w.rss_bytes(), file=f, flush=True)
        finally:
            w.close()
    rss = [int(line.split()[1]) for line in trace.read_text().splitlines() if line.strip()]
    result = {"bench": "asr_rss_trace", "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "machine": f"{platform.machine()}, {platform.processor() or platform.node()}", "clip_s": 5.0,
              "model": settings.whisper.model, **summary(rss, settings)}
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
