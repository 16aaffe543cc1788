"""Live mode, end to end through a sound server: end of speech played in → first reply sample
played out, fixed trailing silence against semantic endpointing, in one run.

    .venv/bin/python bench/live_latency.py [--reps 2] [--out bench/results/live_latency.json]

A private PulseAudio server (tests/pulse.py) with a null sink stands in for the sound card: the
session is played into the sink with ``paplay``, ``edge run`` (live, no ``--input``) captures the
sink's monitor and plays its reply into the same sink, and ``parec`` records the monitor the whole
time. Both moments are read from that one recording, so they share one clock and the sound
server's own buffering is counted as a listener would hear it:

- *end of speech*: where the session sits in the recording (cross-correlation with the played file)
  plus the session's own end of speech (its last 10 ms block above −40 dBFS);
- *first reply sample*: the first 10 ms block above −40 dBFS after that (the session is silent
  after its command, so anything loud there is the box's reply).

Sessions: the shared sessions with one command on the grammar path. Modes alternate per
repetition (semantic, fixed, fixed, semantic, …), each in its own ``edge run`` process.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from drivers.audio import read_wav  # noqa: E402
from drivers.audio.convert import FrameConverter  # noqa: E402
from tests.live import lines_until, start_edge_run, stop  # noqa: E402
from tests.pulse import MONITOR, pulse_server  # noqa: E402

SESSIONS = REPO.parent / "shared" / "audio" / "sessions"
NAMES = ["query_m8_bolts", "log_gloves_received", "log_drill_bits_used", "query_goggles_shelf",
         "log_washers_numbers"]
RATE = 16000
BLOCK = RATE // 100  # 10 ms
LOUD = 32768 * 10 ** (-40 / 20)


def mono16k(path: Path) -> np.ndarray:
    data, rate = read_wav(path)
    conv = FrameConverter(rate, data.shape[1] if data.ndim == 2 else 1)
    frames = conv.push(data) + conv.flush()
    return np.concatenate(frames).astype(np.float32)


def loud_blocks(x: np.ndarray) -> np.ndarray:
    n = len(x) // BLOCK
    rms = np.sqrt((x[:n * BLOCK].reshape(n, BLOCK) ** 2).mean(axis=1))
    return np.flatnonzero(rms > LOUD)


def offset_of(clip: np.ndarray, rec: np.ndarray) -> int:
    """Sample index of ``clip`` in ``rec`` (FFT cross-correlation of the first 3 s of the clip)."""
    probe = clip[: 3 * RATE]
    n = 1 << int(np.ceil(np.log2(len(rec) + len(probe))))
    corr = np.fft.irfft(np.fft.rfft(rec, n) * np.conj(np.fft.rfft(probe, n)), n)
    return int(np.argmax(corr[: len(rec)]))


def measure(rec: np.ndarray, clip: np.ndarray) -> dict:
    off = offset_of(clip, rec)
    end = off + (int(loud_blocks(clip)[-1]) + 1) * BLOCK
    after = loud_blocks(rec[end + 5 * BLOCK:])  # 50 ms guard: the last word's own decay
    if not len(after):
        return {"offset_ms": off / 16, "reply_heard": False}
    first = end + 5 * BLOCK + int(after[0]) * BLOCK
    return {"offset_ms": round(off / 16, 1), "reply_heard": True, "latency_ms": round((first - end) / 16, 1)}


def run_mode(mode: str, env: dict, tmp: Path, reps: int) -> list[dict]:
    cfg = tmp / f"{mode}.yaml"
    cfg.write_text(f"board: x86-dev\nstore: {{path: {tmp / (mode + '.db')}}}\nendpoint: {{mode: {mode}}}\n")
    proc, out_q, err_q = start_edge_run(cfg, env, tmp / f"out-{mode}")
    rows = []
    try:
        lines_until(err_q, lambda line: line.startswith("listening on"), timeout=180)
        for rep in range(reps):
            for name in NAMES:
                wav = tmp / f"rec-{mode}-{name}-{rep}.raw"
                with open(wav, "wb") as f:
                    rec = subprocess.Popen(["parec", f"--device={MONITOR}", "--raw", "--format=s16le",
                                            f"--rate={RATE}", "--channels=1", "--latency-msec=20"],
                                           env=env, stdout=f, stderr=subprocess.DEVNULL)
                    time.sleep(0.5)  # the recorder connected before anything is played
                    subprocess.run(["paplay", str(SESSIONS / f"{name}.wav")], env=env, check=True, timeout=60)
                    try:
                        seen = lines_until(out_q, lambda line: '"turn_end"' in line, timeout=120)
                        # back to listening once the reply has played out, then a quiet second
                        seen += lines_until(out_q, lambda line: '"state": "listening"' in line, timeout=60)
                    except AssertionError as e:  # no turn: counted, the run goes on
                        seen = [f'{{"type": "no_turn", "detail": {json.dumps(str(e)[:200])}}}']
                    events = [json.loads(line) for line in seen if line.startswith("{")]
                    time.sleep(1.0)
                    rec.send_signal(signal.SIGINT)
                    rec.wait(timeout=10)
                got = np.frombuffer(wav.read_bytes(), np.int16).astype(np.float32)
                row = {"mode": mode, "name": name, "rep": rep, **measure(got, mono16k(SESSIONS / f"{name}.wav"))}
                ends = [e for e in events if e.get("type") == "endpoint"]
                row["endpoint_reason"] = ends[-1].get("reason") if ends else None
                row["turn"] = not any(e.get("type") == "no_turn" for e in events)
                row["intent"] = next((e.get("intent") for e in events if e.get("type") == "intent"), None)
                rows.append(row)
                wav.unlink()
                print(json.dumps(row), flush=True)
    finally:
        stop(proc, signal.SIGINT)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "live_latency.json")
    args = ap.parse_args()
    t0 = time.time()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="edge-live-bench-") as d, pulse_server(Path(d)) as env:
        env = dict(env, PYTHONUNBUFFERED="1")
        order = ["semantic", "fixed"]
        for rep in range(args.reps):
            for mode in order if rep % 2 == 0 else order[::-1]:
                rows += run_mode(mode, env, Path(d), 1)
    summary = {}
    for mode in ("fixed", "semantic"):
        lat = [r["latency_ms"] for r in rows if r["mode"] == mode and r.get("reply_heard")]
        summary[mode] = {"sessions_played": sum(r["mode"] == mode for r in rows),
                         "turns": sum(r["mode"] == mode and r["turn"] for r in rows), "replies_heard": len(lat),
                         "median_ms": round(statistics.median(lat), 1) if lat else None,
                         "p90_ms": round(float(np.percentile(lat, 90)), 1) if lat else None}
    if summary["fixed"]["median_ms"] and summary["semantic"]["median_ms"]:
        summary["ratio_semantic_vs_fixed"] = round(summary["semantic"]["median_ms"] / summary["fixed"]["median_ms"], 3)
    out = {"bench": "live_latency", "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "wall_s": round(time.time() - t0, 1), "method": __doc__.split("\n\n", 2)[2].strip(),
           "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "loadavg_1_5_15_at_end": os.getloadavg()},
           "summary": summary, "rows": rows}
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    plot(rows, args.out.with_suffix(".png"))
    return 0


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    data = [[r["latency_ms"] for r in rows if r["mode"] == m and r.get("reply_heard")] for m in ("fixed", "semantic")]
    ax.boxplot(data, vert=False)
    ax.set_yticks([1, 2], ["fixed tail", "semantic"])
    ax.axvline(600, color="grey", ls="--", lw=1)
    ax.set_xlabel("end of speech played → first reply sample heard, ms (PulseAudio null sink)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
