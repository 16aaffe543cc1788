"""Memory the governor's admission must know: the voice pipeline without an LLM, and how far the real
RSS of a loaded llama.cpp model exceeds the estimate (weights + KV cache).

    .venv/bin/python bench/governor_overhead.py [--out bench/results/governor_overhead.json]

Two child processes, so that one measurement does not inherit the other's pages:

1. ``pipeline``: build the stages of the x86-dev board with ``llm.engine: none`` (4 openWakeWord
   models, Silero VAD, whisper tiny.en int8, pyttsx3/espeak-ng, SQLite), run two shared sessions;
   VmRSS and VmHWM (peak) from /proc/self/status after each step.
2. ``llm``: load SmolLM2-135M (the real GGUF) at n_ctx 2048 and 8192, generate 8 tokens; RSS grown
   by each load vs :func:`edge.governor.admission.estimate` (weights + KV cache, no overhead).

``PIPELINE_OVERHEAD_MIB`` in edge/governor/admission.py = peak of (1) + the largest excess of (2), rounded up.
"""
from __future__ import annotations

import argparse
import gc
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SESSIONS = REPO.parent / "shared" / "audio" / "sessions"


def status_mib() -> dict:
    out = {}
    for line in open("/proc/self/status"):
        if line.startswith(("VmRSS", "VmHWM")):
            k, v = line.split(":")
            out[k] = round(int(v.split()[0]) / 1024, 1)
    return out


# The children import the product inside their function: each process measures the memory of
# only what it imports (the pipeline without an LLM, or the LLM alone).
def child_pipeline() -> dict:
    sys.path.insert(0, str(REPO))
    from drivers.audio import wav_frames
    from edge.config import load_settings
    from edge.loop.build import build_stages, run_frames
    from edge.stock.store import Store

    res = {"start": status_mib()}
    d = Path(tempfile.mkdtemp())
    s = load_settings(board="x86-dev", overrides={"store": {"path": str(d / "x.db")}, "output_dir": str(d),
                                                  "llm": {"engine": "none"}})
    store = Store(d / "e.db")
    store.import_csv(SESSIONS / "inventory.csv")
    stages = build_stages(s, store)
    res["after_build_stages"] = status_mib()
    for i, name in enumerate(("query_m8_bolts", "log_washers_numbers")):
        stages.wake.flush()
        run_frames(wav_frames(SESSIONS / f"{name}.wav", chunk=4000), stages, s, d, lambda e: None)
        res[f"after_turn_{i + 1}"] = status_mib()
    return res


def child_llm() -> dict:
    sys.path.insert(0, str(REPO))
    from edge.governor.admission import estimate
    from edge.llm.base import GenerationRequest, generate
    from edge.llm.llamacpp import LlamaCppEngine

    res = {}
    for n_ctx in (2048, 8192):
        gc.collect()
        before = status_mib()["VmRSS"]
        est = estimate("smollm2-135m-instruct-q4_1", n_ctx, overhead_mib=0)
        e = LlamaCppEngine("smollm2-135m-instruct-q4_1", n_ctx=n_ctx, threads=1)
        generate(e, GenerationRequest([{"role": "user", "content": "Say hi"}], max_tokens=8))
        grown = status_mib()["VmRSS"] - before
        res[str(n_ctx)] = {"rss_grown_mib": round(grown, 1), "estimate_mib": round(est.total_bytes / 2**20, 1),
                           "excess_mib": round(grown - est.total_bytes / 2**20, 1)}
        e.close()
        del e
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "governor_overhead.json"))
    ap.add_argument("--child", choices=["pipeline", "llm"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child_pipeline() if args.child == "pipeline" else child_llm()))
        return 0
    out = {"machine": f"{platform.machine()}, {platform.python_version()}", "unit": "MiB"}
    for kind in ("pipeline", "llm"):
        r = subprocess.run([sys.executable, __file__, "--child", kind], capture_output=True, text=True, check=True)
        out[kind] = json.loads(r.stdout.strip().splitlines()[-1])
    peak = max(v["VmHWM"] for v in out["pipeline"].values())
    excess = max(v["excess_mib"] for v in out["llm"].values())
    out["pipeline_peak_mib"] = peak
    out["llm_excess_max_mib"] = excess
    out["suggested_overhead_mib"] = round(peak + excess, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
