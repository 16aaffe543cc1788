"""Live mode, end to end through a sound server: end of speech played in → first reply sample
played out, fixed trailing silence against semantic endpointing, in one run.

    .venv/bin/python bench/live_latency.py [--reps 2] [--configs fixed,semantic_30s,semantic] [--out bench/results/live_latency.json]

Quick look (~2 min here): ``--reps 1 --sessions 3 --configs semantic_30s,semantic --out /tmp/l.json``.

A private PulseAudio server (tests/pulse.py) with a null sink stands in for the sound card: the
session is played into the sink with ``paplay``, ``edge run`` (live, no ``--input``) captures the
sink's monitor and plays its reply into the same sink, and ``parec`` records the monitor the whole
time. Both moments are read from that one recording, so they share one clock and the sound
server's own buffering is counted as a listener would hear it:

- *end of speech*: where the session sits in the recording (cross-correlation with the played file)
  plus the session's own end of speech (its last 10 ms block above −40 dBFS);
- *first reply sample*: the first 10 ms block above −40 dBFS after that (the session is silent
  after its command, so anything loud there is the box's reply).

Sessions: the shared sessions with one command on the grammar path. Configurations (those of
bench/endpointing.py: the endpoint settings and ``asr.whisper`` of each) rotate per repetition, each
in its own ``edge run`` process.

Where the time goes: the loop's own steps come from each turn's ``turn_end`` latencies (the
speculation's decode, grammar and TTS during the silence; ``total_ms`` after the endpoint). The
sound path is measured apart in the same sound server, as the box opens its devices
(:class:`drivers.audio.capture.Capture` with ``audio.chunk_samples``, :class:`drivers.audio.playback.Playback`,
which opens one PortAudio stream per reply in the one process, no player process): a burst played
at a known moment, found in the captured 16 kHz frames (``sound_path.round_trip_ms``: playback start
and capture buffering, without the 80 ms frame the pipeline waits for). ``rest`` = latency − those:
the VAD lag, the frames until the endpoint, other decodes, the 80 ms frame, scheduling.
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

from bench.endpointing import CONFIGS  # noqa: E402
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
SPEC_KEYS = ("speculation_decode_ms", "speculation_nlu_ms", "speculation_tts_ms")


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


def config_yaml(mode: str, tmp: Path) -> str:
    """The ``edge run`` config of the configuration ``mode`` (flow-style YAML)."""
    endpoint, whisper = CONFIGS[mode]
    text = f"board: x86-dev\nstore: {{path: {tmp / (mode + '.db')}}}\n"
    text += "endpoint: {" + ", ".join(f"{k}: {v}" for k, v in endpoint.items()) + "}\n"
    if whisper:
        text += "asr: {whisper: {" + ", ".join(f"{k}: {v}" for k, v in whisper.items()) + "}}\n"
    return text


def run_mode(mode: str, env: dict, tmp: Path, reps: int, names: list[str]) -> list[dict]:
    cfg = tmp / f"{mode}.yaml"
    cfg.write_text(config_yaml(mode, tmp))
    proc, out_q, err_q = start_edge_run(cfg, env, tmp / f"out-{mode}")
    rows = []
    try:
        lines_until(err_q, lambda line: line.startswith("listening on"), timeout=180)
        for rep in range(reps):
            for name in names:
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
                end = next((e for e in events if e.get("type") == "turn_end"), None)
                row["latency"] = end.get("latency_ms", {}) if end else {}
                row["endpoint_silence_ms"] = ends[-1].get("silence_ms") if ends else None
                rows.append(row)
                wav.unlink()
                print(json.dumps(row), flush=True)
    finally:
        stop(proc, signal.SIGINT)
    return rows


def sound_path_probe(chunk_samples: int, bursts: int = 7) -> dict:
    """In the sound server of ``PULSE_SERVER`` (this process's environment): a capture and a playback
    opened as the box opens them; ``bursts`` bursts of noise played, each found in the captured
    frames. ``round_trip_ms``: the play call → the burst's first sample delivered in a frame (less
    the rest of that frame); ``frame_ms``: the play call → the frame holding it delivered."""
    import threading

    from drivers.audio.capture import Capture
    from drivers.audio.playback import Playback

    cap = Capture(frames_per_buffer=chunk_samples)
    frames: list[tuple[float, np.ndarray]] = []

    def pump():
        for f in cap.frames(timeout=5):
            frames.append((time.perf_counter(), f))

    threading.Thread(target=pump, daemon=True).start()
    rate = 22050  # espeak-ng's rate: what a reply is played at
    burst = np.zeros(int(0.4 * rate), np.int16)
    burst[: rate // 10] = (np.random.default_rng(1).standard_normal(rate // 10) * 8000).astype(np.int16)
    trips, framed = [], []
    try:
        with Playback() as player:
            time.sleep(1.0)
            for _ in range(bursts):
                n0 = len(frames)
                t0 = time.perf_counter()
                player.play(burst, rate)
                time.sleep(0.5)
                got = frames[n0:]
                x = np.concatenate([f for _, f in got])
                loud = np.flatnonzero(np.abs(x.astype(np.int32)) > 2000)
                if not len(loud):
                    continue
                k = int(loud[0]) // 1280
                trips.append(1000 * (got[k][0] - (1280 * (k + 1) - int(loud[0])) / RATE - t0))
                framed.append(1000 * (got[k][0] - t0))
                time.sleep(0.2)
    finally:
        cap.close()
    return {"chunk_samples": chunk_samples, "capture_rate": cap.rate, "bursts_found": len(trips),
            "round_trip_ms": [round(v, 1) for v in trips], "round_trip_median_ms": round(statistics.median(trips), 1) if trips else None,
            "frame_delivered_median_ms": round(statistics.median(framed), 1) if framed else None}


def sound_path(env: dict, chunks: tuple[int, ...] = (1024, 256)) -> dict:
    """:func:`sound_path_probe` in a child process per chunk size (PortAudio reads the sound
    server's address when it starts)."""
    out = {}
    for n in chunks:
        r = subprocess.run([sys.executable, __file__, "--probe-sound-path", str(n)], env=env, capture_output=True,
                           text=True, timeout=120)
        lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
        out[str(n)] = json.loads(lines[-1]) if lines else {"error": r.stderr[-400:]}
    return out


def mode_summary(rows: list[dict], mode: str, trip_ms: float | None) -> dict:
    mine = [r for r in rows if r["mode"] == mode]
    heard = [r for r in mine if r.get("reply_heard")]
    lat = [r["latency_ms"] for r in heard]
    out = {"sessions_played": len(mine), "turns": sum(r["turn"] for r in mine), "replies_heard": len(lat),
           "median_ms": round(statistics.median(lat), 1) if lat else None,
           "p90_ms": round(float(np.percentile(lat, 90)), 1) if lat else None}
    stages = {}
    for key in SPEC_KEYS + ("total_ms",):
        v = [r["latency"][key] for r in heard if key in r.get("latency", {})]
        stages[key.replace("total_ms", "after_endpoint_ms")] = round(statistics.median(v), 1) if v else None
    rest = [r["latency_ms"] - sum(r["latency"].get(k, 0.0) for k in SPEC_KEYS + ("total_ms",)) - (trip_ms or 0.0)
            for r in heard if r.get("latency")]
    stages["sound_path_round_trip_ms"] = trip_ms
    stages["rest_ms"] = round(statistics.median(rest), 1) if rest else None
    out["stages_median"] = stages
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--sessions", type=int, default=len(NAMES), help="the first N of the shared sessions")
    ap.add_argument("--configs", default="fixed,semantic_30s,semantic",
                    help="names of bench/endpointing.py's CONFIGS (not semantic_nocheck: no setting turns the recheck off)")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "live_latency.json")
    ap.add_argument("--probe-sound-path", type=int, metavar="CHUNK", help=argparse.SUPPRESS)  # the child of sound_path()
    args = ap.parse_args()
    if args.probe_sound_path:
        print(json.dumps(sound_path_probe(args.probe_sound_path)))
        return 0
    order = args.configs.split(",")
    if unknown := set(order) - {c for c, (_e, w) in CONFIGS.items() if "recheck" not in w}:
        ap.error(f"unknown configurations {sorted(unknown)}; known: {', '.join(CONFIGS)}")
    t0 = time.time()
    load_start = os.getloadavg()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="edge-live-bench-") as d, pulse_server(Path(d)) as env:
        env = dict(env, PYTHONUNBUFFERED="1")
        sound = sound_path(env)
        for rep in range(args.reps):
            for mode in order[rep % len(order):] + order[:rep % len(order)]:
                rows += run_mode(mode, env, Path(d), 1, NAMES[:args.sessions])
    trip = sound.get("1024", {}).get("round_trip_median_ms")
    summary = {mode: mode_summary(rows, mode, trip) for mode in order}
    if "fixed" in summary and summary["fixed"]["median_ms"]:
        for mode in order:
            if mode != "fixed" and summary[mode]["median_ms"]:
                summary[f"ratio_{mode}_vs_fixed"] = round(summary[mode]["median_ms"] / summary["fixed"]["median_ms"], 3)
    out = {"bench": "live_latency", "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "wall_s": round(time.time() - t0, 1), "method": __doc__.split("\n\n", 3)[3].strip(),
           "configs": {c: {"endpoint": CONFIGS[c][0], "whisper": CONFIGS[c][1]} for c in order},
           "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                       "loadavg_1_5_15_at_start": [round(x, 2) for x in load_start],
                       "loadavg_1_5_15_at_end": [round(x, 2) for x in os.getloadavg()]},
           "sound_path": sound, "summary": summary, "rows": rows}
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({"summary": summary, "sound_path": {k: v.get("round_trip_median_ms") for k, v in sound.items()},
                      "load": [out["machine"]["loadavg_1_5_15_at_start"], out["machine"]["loadavg_1_5_15_at_end"]]},
                     indent=1))
    plot(rows, order, args.out.with_suffix(".png"))
    return 0


def plot(rows: list[dict], order: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.7 * len(order)))
    data = [[r["latency_ms"] for r in rows if r["mode"] == m and r.get("reply_heard")] for m in order]
    ax.boxplot(data, orientation="horizontal")
    ax.set_yticks(range(1, len(order) + 1), order)
    ax.axvline(600, color="grey", ls="--", lw=1)
    ax.set_xlabel("end of speech played → first reply sample heard, ms (PulseAudio null sink)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
