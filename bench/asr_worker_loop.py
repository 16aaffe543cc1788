"""What the voice loop pays for its recognizer in a worker process (``asr.worker.loop: process``):
the shared sessions through one set of stages, the recognizer in this process and in an
:class:`edge.stages.asr.worker.AsrWorker`, turn by turn in alternation, in the same run.

    .venv/bin/python bench/asr_worker_loop.py [--reps 1] [--out bench/results/asr_worker_loop.json]

Measured per turn (the ``turn_end`` latencies, ms): ``endpoint_to_transcript_ms`` (the final
decode, or the speculation kept from the silence), ``total_ms`` (endpoint to reply audio); per
session the wall time of the whole run over the file (every frame's ``accept`` crosses the pipe in
process mode), the partial transcripts and whether the transcripts and intents are the same in both
modes. Medians over the turns, and each session's figures. The grammar path only (``llm.engine:
none``), the x86-dev board; ~1 min per rep here.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from edge.config import load_settings  # noqa: E402
from edge.loop.build import build_recognizer, build_stages, close_stages  # noqa: E402
from edge.loop.inventory import with_units  # noqa: E402
from edge.stages.asr import vocabulary  # noqa: E402
from edge.stock.store import Store  # noqa: E402
from tests.helpers import INVENTORY, SESSIONS, run_session  # noqa: E402

NAMES = ["query_m8_bolts", "log_gloves_received", "log_drill_bits_used", "log_washers_numbers"]


def one(stages, settings, asr, name: str, d: Path) -> dict:
    """One session with ``asr`` as the loop's recognizer, from a fresh store."""
    stages.asr = asr
    stages.store = Store(d / f"{name}-{time.monotonic_ns()}.db")
    stages.store.import_csv(INVENTORY)
    items = stages.store.items()
    asr.set_vocabulary(with_units(vocabulary(items), items))
    try:
        t0 = time.perf_counter()
        events = run_session(stages, settings, SESSIONS / f"{name}.wav", d)
        wall = 1000 * (time.perf_counter() - t0)
    finally:
        stages.store.close()
    ends = [e.latency_ms for e in events if e.type == "turn_end" and e.latency_ms]
    return {"wall_ms": wall, "turns": ends, "partials": sum(e.type == "partial" for e in events),
            "transcripts": [e.text for e in events if e.type == "transcript"],
            "intents": [(e.intent, e.slots.get("sku")) for e in events if e.type == "intent"]}


def median(rows: list[dict], key: str) -> float | None:
    vals = [t[key] for r in rows for t in r["turns"] if key in t]
    return round(statistics.median(vals), 1) if vals else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "asr_worker_loop.json"))
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        settings = load_settings(board="x86-dev", overrides={"store": {"path": str(d / "unused.db")},
                                                             "output_dir": str(d), "llm": {"engine": "none"}})
        boot = Store(d / "boot.db")
        boot.import_csv(INVENTORY)
        stages = build_stages(settings, boot)
        inline, worker = stages.asr, build_recognizer(settings, "process")
        runs: dict[str, list[dict]] = {"inline": [], "process": []}
        try:
            for name in NAMES:
                for _ in range(a.reps):  # alternating, so both modes see the same machine load
                    runs["inline"].append(one(stages, settings, inline, name, d))
                    runs["process"].append(one(stages, settings, worker, name, d))
            worker_calls, worker_recycles = worker.calls, worker.recycles
        finally:
            stages.asr = inline
            worker.close()
            close_stages(stages)
            boot.close()
    result = {
        "machine": f"{platform.machine()}, {platform.processor() or platform.node()}",
        "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "sessions": NAMES, "reps": a.reps,
        "worker_utterances": worker_calls, "worker_recycles": worker_recycles,
        "same_transcripts_and_intents": all(
            (i["transcripts"], i["intents"]) == (p["transcripts"], p["intents"])
            for i, p in zip(runs["inline"], runs["process"], strict=True)),
    }
    for mode, rows in runs.items():
        result[mode] = {"endpoint_to_transcript_ms": median(rows, "endpoint_to_transcript_ms"),
                        "total_ms": median(rows, "total_ms"),
                        "session_wall_ms": round(statistics.median(r["wall_ms"] for r in rows), 1),
                        "partials_per_session": round(statistics.mean(r["partials"] for r in rows), 2),
                        "per_session": [{"wall_ms": round(r["wall_ms"], 1), "turns": r["turns"]} for r in rows]}
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
