"""C16 long-run memory of the speech recognizer: N calls on a 5 s clip one at a time, then the same N
from 4 concurrent callers, through one :class:`edge.stages.asr.worker.AsrWorker` (one model instance,
calls serialized).

    .venv/bin/python bench/asr_memory.py [--calls 5000] [--warmup 50] [--concurrency 4]
                                         [--out bench/results/asr_memory.json]

Measured: the worker's ``VmRSS`` after every call; growth per call after warm-up, as the rise of the
lowest RSS of the first tenth to the lowest of the last tenth of the calls ÷ the calls between them
(the decoder's working memory swings by megabytes from call to call, so single readings say nothing);
wall time of the sequential and the concurrent phase and their ratio. Pass: growth < 1 KiB per call,
concurrent ÷ sequential within 1.05, no recycle (the governor's :class:`MemoryWatch` saw nothing).
The full 5,000 calls take ~30-60 min on two cores; ``--calls 50`` is a quick look.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from drivers.audio import read_wav  # noqa: E402
from drivers.audio.convert import FrameConverter  # noqa: E402
from edge.config import load_settings  # noqa: E402
from edge.stages.asr.worker import AsrWorker  # noqa: E402

CLIP = REPO.parent / "shared" / "audio" / "sessions" / "query_m8_bolts.wav"


def clip_5s() -> np.ndarray:
    data, rate = read_wav(CLIP)
    conv = FrameConverter(rate, data.shape[1])
    x = np.concatenate(conv.push(data) + conv.flush())
    return np.resize(x, 5 * 16000)


def growth_per_call(rss: list[int]) -> float:
    tenth = max(1, len(rss) // 10)
    return (min(rss[-tenth:]) - min(rss[:tenth])) / max(1, len(rss) - tenth)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "asr_memory.json"))
    a = ap.parse_args(argv)
    audio = clip_5s()
    w = AsrWorker(load_settings(board="x86-dev").asr)
    try:
        for _ in range(min(a.warmup, a.calls)):
            w.transcribe(audio)
        seq_rss: list[int] = []
        t0 = time.perf_counter()
        for _ in range(a.calls):
            w.transcribe(audio)
            seq_rss.append(w.rss_bytes() or 0)
        seq_s = time.perf_counter() - t0
        con_rss: list[int] = []
        lock = threading.Lock()
        per = a.calls // a.concurrency

        def caller():
            for _ in range(per):
                w.transcribe(audio)
                with lock:
                    con_rss.append(w.rss_bytes() or 0)

        threads = [threading.Thread(target=caller) for _ in range(a.concurrency)]
        t1 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        con_s = (time.perf_counter() - t1) * a.calls / max(1, per * a.concurrency)
        result = {
            "machine": f"{platform.machine()}, {platform.processor() or platform.node()}",
            "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "calls": a.calls, "warmup": a.warmup, "concurrency": a.concurrency, "clip_s": 5.0,
            "sequential_s": round(seq_s, 2), "concurrent_s": round(con_s, 2),
            "concurrent_over_sequential": round(con_s / seq_s, 3),
            "growth_bytes_per_call_sequential": round(growth_per_call(seq_rss), 1),
            "growth_bytes_per_call_all": round(growth_per_call(seq_rss + con_rss), 1),
            "rss_mib_first": round(seq_rss[0] / 2**20, 1), "rss_mib_last": round((con_rss or seq_rss)[-1] / 2**20, 1),
            "recycles": w.recycles, "reasons": w.reasons,
        }
    finally:
        w.close()
    result["pass"] = (result["growth_bytes_per_call_all"] < 1024 and result["concurrent_over_sequential"] <= 1.05
                      and result["recycles"] == 0)
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
