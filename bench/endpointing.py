"""Fixed trailing silence against semantic endpointing, side by side in one run, with where the
time goes per turn.

    .venv/bin/python bench/endpointing.py [--count 40] [--configs fixed,semantic,...] [--out bench/results/endpointing.json]

Quick look (7 shared sessions + 8 of ours, two configurations, ~1.5 min here): ``--count 8 --configs
semantic_30s,semantic --out /tmp/e.json``.

Recordings: the shared sessions with one command, and ``--count`` of our own built like them
(0.5 s silence, the real "hey mycroft" clip, 0.4 s, the command spoken by espeak-ng, 2 s
silence): complete commands, commands with a pause of 300/600/900 ms after a dangling word
("… drill bits from | drawer four"), a trailing "please", quiet (−14 dB) and reverberant
(RT60 ≈ 0.4 s) versions. Both modes run every recording through the real stages of the x86-dev
board on the grammar path (wake word, Silero VAD, whisper tiny.en, grammar, SQLite, espeak-ng).

Configurations (:data:`CONFIGS`), side by side: ``fixed`` (the 700 ms tail, Whisper's 30 s
window: the box before semantic endpointing), ``semantic_30s`` (semantic endpointing in the 30 s
window, speculation at the second silent frame: the previous defaults), ``semantic_nocheck`` (the
defaults without the recheck: every windowed transcript kept) and ``semantic`` (the defaults:
``asr.whisper.window_s: 10``, a windowed transcript the grammar does not take as a whole command
decoded again in 30 s, ``endpoint.speculate_after_ms: 80``).

Perceived latency = true end of speech → reply audio ready. The true end is known for our
recordings (the last sample of the last spoken part, before any reverb tail); for the shared
sessions it is the last 10 ms block above −40 dBFS. The loop is replayed in real time on this
machine: frame *i* arrives at ``80·(i+1)`` ms of audio time, is processed once it has arrived and
the loop is free, and each ``feed`` takes the wall-clock time it takes here (so a decode during
the tail delays the frames behind it, as it would live). The reply is ready when the ``reply``
event is emitted (its WAV is written). A command is *cut* when its endpoint comes before its true
end of speech. Partial-decoding CPU is the process CPU time of whisper's partial re-decodes per
second of speech (wake word to true end).

Where the time goes (per turn, ms; the parts add up to the perceived latency): ``vad_lag`` (true
end → the first frame the endpointer counts as silence has arrived: the frame it ends in, then
Silero falling below ``vad_threshold − vad_release``; ``vad_lag_no_release`` is the same with the
plain threshold), ``other_decodes`` (decodes after that frame that are not the speculation's: a
partial re-decode, or a speculation in a pause inside the command, still running, which the frames
behind it wait for), ``silence_wait`` (the rest of that frame → the endpoint: the frames until the
speculation starts, then the rest of ``semantic_silence_ms`` or of the tail, and the loop's
per-frame work), ``spec_decode``, ``spec_nlu`` (grammar and the previewed store step),
``spec_tts`` (espeak-ng writes the WAV itself: synthesis and write are one step), and
``after_endpoint`` (the endpoint → the ``reply`` event: a final decode when the speculation did not
decode this audio, understanding, the store write, the reply's audio unless it was prepared).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from drivers.audio import SAMPLE_RATE, read_wav, wav_frames, write_wav  # noqa: E402
from drivers.audio.convert import FrameConverter  # noqa: E402
from edge.config import load_settings  # noqa: E402
from edge.loop.build import build_stages  # noqa: E402
from edge.loop.pipeline import Pipeline  # noqa: E402
from edge.stages.nlu.grammar import Grammar  # noqa: E402
from edge.stock.store import Store  # noqa: E402

SHARED = REPO.parent / "shared" / "audio"
SESSIONS = SHARED / "sessions"
WAKE_CLIP = SHARED / "real" / "hey_mycroft_test.wav"
SHARED_NAMES = ["query_m8_bolts", "log_gloves_received", "log_drill_bits_used", "query_goggles_shelf",
                "undo_last", "log_washers_numbers", "chitchat_joke"]
COMPLETE = ["how many M8 bolts are in bin twelve", "we used three drill bits from drawer four",
            "log twenty boxes of nitrile gloves received", "do we have any safety goggles on shelf B",
            "how many fuses do we have", "we took five cable ties", "add ten washers to bin two oh two three",
            "undo that"]
PAUSED = [("we used three drill bits from", "drawer four"), ("log twenty boxes of", "nitrile gloves received"),
          ("we took twelve boxes of", "nitrile gloves"), ("add one hundred and five", "washers to bin two oh two three"),
          ("how many M8 bolts are in", "bin twelve"), ("um", "how many fuses do we have")]
PAUSES_MS = (300, 600, 900)
#: name: (endpoint settings, whisper recognizer attributes) for one column of the comparison
CONFIGS = {
    "fixed": ({"mode": "fixed"}, {"window_s": 30.0}),
    "semantic_30s": ({"mode": "semantic", "speculate_after_ms": 160}, {"window_s": 30.0}),
    "semantic_nocheck": ({"mode": "semantic"}, {"recheck": lambda: None}),
    "semantic": ({"mode": "semantic"}, {}),
}
STAGES = ("vad_lag", "other_decodes", "silence_wait", "spec_decode", "spec_nlu", "spec_tts", "after_endpoint")


def to16k(samples: np.ndarray, rate: int) -> np.ndarray:
    conv = FrameConverter(rate, samples.shape[1] if samples.ndim == 2 else 1)
    frames = conv.push(samples) + conv.flush()
    return np.concatenate(frames) if frames else np.zeros(0, np.int16)


def speak(text: str) -> np.ndarray:
    """``text`` by espeak-ng (voice gmw/en, 150 wpm, as tests/synth.py), 16 kHz, its own leading
    and trailing silence trimmed so the end of speech is the array's end."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "s.wav"
        subprocess.run(["espeak-ng", "-v", "gmw/en", "-s", "150", "-w", str(out), "--", text],
                       check=True, capture_output=True, timeout=60)
        data, rate = read_wav(out)
    x = to16k(data, rate)
    loud = np.flatnonzero(np.abs(x.astype(np.int32)) > 300)
    return x[loud[0]:loud[-1] + 1] if len(loud) else x


def reverb(x: np.ndarray, rt60_s: float = 0.4, seed: int = 3) -> np.ndarray:
    """``x`` through an exponentially decaying noise impulse response (a room of RT60 ``rt60_s``)."""
    n = int(rt60_s * SAMPLE_RATE)
    rng = np.random.default_rng(seed)
    ir = rng.standard_normal(n) * np.exp(-6.9 * np.arange(n) / n)
    ir[0] = 1.0
    y = np.convolve(x.astype(np.float64), ir / np.sqrt(np.sum(ir ** 2)))
    return np.clip(y * (np.abs(x).max() / max(1.0, np.abs(y).max())), -32768, 32767).astype(np.int16)


def build_recordings(out: Path, count: int) -> list[dict]:
    """Our recordings: ``{"name", "path", "kind", "text", "true_end_ms", "speech_start_ms"}``."""
    wake = to16k(*read_wav(WAKE_CLIP))

    def sil(s: float) -> np.ndarray:
        return np.zeros(int(s * SAMPLE_RATE), np.int16)

    specs: list[tuple[str, str, list, float, bool]] = []  # name, kind, parts, gain, reverb
    for i, t in enumerate(COMPLETE):
        specs.append((f"complete_{i}", "complete", [t], 1.0, False))
    for i, (a, b) in enumerate(PAUSED):
        for p in PAUSES_MS:
            specs.append((f"pause{p}_{i}", "pause", [a, p / 1000, b], 1.0, False))
    for i, t in enumerate(COMPLETE[:5]):
        specs.append((f"please_{i}", "please", [t + " please"], 1.0, False))
    for i, t in enumerate(COMPLETE[:5]):
        specs.append((f"quiet_{i}", "quiet", [t], 0.2, False))
    for i, t in enumerate(COMPLETE[2:6]):
        specs.append((f"reverb_{i}", "reverb", [t], 1.0, True))
    rows = []
    for name, kind, parts, gain, rev in specs[:count]:
        head = [sil(0.5), wake, sil(0.4)]
        start = sum(len(h) for h in head)
        body = [sil(p) if isinstance(p, float) else speak(p) for p in parts]
        speech = np.concatenate(body)
        end = start + len(speech)
        speech = (speech.astype(np.float64) * gain).astype(np.int16)
        if rev:
            speech = reverb(speech)
        audio = np.concatenate(head + [speech, sil(2.0)])
        path = write_wav(out / f"{name}.wav", audio, SAMPLE_RATE)
        rows.append({"name": name, "path": str(path), "kind": kind,
                     "text": " ".join(p for p in parts if isinstance(p, str)),
                     "speech_start_ms": 1000 * start / SAMPLE_RATE, "true_end_ms": 1000 * end / SAMPLE_RATE})
    return rows


def shared_recordings() -> list[dict]:
    expected = json.loads((SESSIONS / "expected.json").read_text())
    rows = []
    for name in SHARED_NAMES:
        path = SESSIONS / f"{name}.wav"
        data, rate = read_wav(path)
        x = to16k(data, rate).astype(np.float64)
        block = SAMPLE_RATE // 100
        rms = np.sqrt(np.mean(x[: len(x) // block * block].reshape(-1, block) ** 2, axis=1))
        loud = np.flatnonzero(rms > 32768 * 10 ** (-40 / 20))
        rows.append({"name": name, "path": str(path), "kind": "shared", "text": expected[name]["text"],
                     "speech_start_ms": None, "true_end_ms": float(10.0 * (loud[-1] + 1))})
    return rows


def replay(stages, settings, config: str, wav: str, out: Path) -> dict:
    """One recording through a pipeline in replayed real time (see the module doc), in the
    configuration ``config`` of :data:`CONFIGS`; the VAD's probability per frame is kept."""
    endpoint_update, asr_update = CONFIGS[config]
    endpoint = settings.endpoint.model_copy(update=endpoint_update)
    asr = stages.asr
    asr_before = {k: getattr(asr, k) for k in asr_update}
    for k, v in asr_update.items():
        setattr(asr, k, v)
    events: list = []
    clock = {"start": 0.0, "t0": 0.0}
    probs: list[tuple[int, float]] = []  # (t_ms of the frame, speech probability)
    decodes: list[tuple[float, float]] = []  # (start, end) on the replay clock of every whisper decode

    def now() -> float:
        return clock["start"] + 1000 * (time.perf_counter() - clock["t0"])

    p = Pipeline(stages, endpoint, out, lambda e: events.append((e, now())), guard_ms=settings.wake.guard_ms)
    vad = stages.vad
    probability, transcribe = vad.probability, asr.transcribe

    def kept(frame):
        pr = probability(frame)
        probs.append((p.t_ms, pr))
        return pr

    def timed(audio, refine=True, full=False):  # partials, speculations and rechecks call it too
        t0 = now()
        try:
            return transcribe(audio, refine=refine, full=full)
        finally:
            decodes.append((t0, now()))

    vad.probability, asr.transcribe = kept, timed
    p.language = settings.language
    stages.wake.flush()
    free = 0.0
    partial0, spec0, nspec0, fb0 = asr.partial_cpu_ms, asr.speculation_cpu_ms, asr.speculations, asr.window_fallbacks
    rc0 = asr.rechecks
    cpu0 = time.process_time()
    try:
        for i, frame in enumerate(wav_frames(wav)):
            clock["start"] = max(80.0 * (i + 1), free)
            clock["t0"] = time.perf_counter()
            p.feed(frame)
            free = clock["start"] + 1000 * (time.perf_counter() - clock["t0"])
        clock["start"], clock["t0"] = free, time.perf_counter()
        p.finish()
    finally:
        del vad.probability, asr.transcribe
        for k, v in asr_before.items():
            setattr(asr, k, v)
    return {"events": events, "partial_cpu_ms": asr.partial_cpu_ms - partial0, "cpu_ms": 1000 * (time.process_time() - cpu0),
            "speculation_cpu_ms": asr.speculation_cpu_ms - spec0, "speculations": asr.speculations - nspec0,
            "window_fallbacks": asr.window_fallbacks - fb0, "rechecks": asr.rechecks - rc0, "probs": probs, "decodes": decodes, "endpoint": endpoint}


def intent_of(e) -> list:
    return [e.intent, e.slots.get("sku"), e.slots.get("quantity"), e.slots.get("direction")]


def first_silent_frame_ms(probs: list[tuple[int, float]], after_ms: float, below: float) -> int | None:
    """Audio time (= arrival) of the first frame ending after ``after_ms`` whose probability is below ``below``."""
    return next((t for t, pr in probs if t > after_ms and pr < below), None)


def breakdown(rec: dict, res: dict, first: dict) -> dict:
    """The per-stage ms of one turn (module doc), from its endpoint, reply and turn_end events."""
    if not {"endpoint", "reply", "turn_end"} <= set(first):
        return {}
    (ep, ep_at), (_reply, reply_at) = first["endpoint"], first["reply"]
    if ep.reason in ("max_length", "stream_end"):
        return {}
    lat = first["turn_end"][0].latency_ms
    silent_at = ep.t_ms - ep.silence_ms + 80  # the first frame the endpointer counted as silence arrived
    spec = {k: lat.get(f"speculation_{k}_ms", 0.0) for k in ("decode", "nlu", "tts")}
    e = res["endpoint"]
    plain = first_silent_frame_ms(res["probs"], rec["true_end_ms"], e.vad_threshold)
    # decode time between that frame and the endpoint; the speculation's own decode is the last one
    busy = sum(max(0.0, min(b, ep_at) - max(a, silent_at)) for a, b in res["decodes"])
    other = max(0.0, busy - spec["decode"])
    out = {"vad_lag": silent_at - rec["true_end_ms"], "other_decodes": other,
           "silence_wait": ep_at - silent_at - sum(spec.values()) - other,
           "spec_decode": spec["decode"], "spec_nlu": spec["nlu"], "spec_tts": spec["tts"],
           "after_endpoint": reply_at - ep_at,
           "vad_lag_no_release": plain - rec["true_end_ms"] if plain is not None else None,
           "final_decode": lat.get("endpoint_to_transcript_ms"), "final_nlu": lat.get("transcript_to_intent_ms"),
           "final_store_reply": lat.get("intent_to_reply_audio_ms")}
    return {k: round(v, 1) if v is not None else None for k, v in out.items()}


def measure(rec: dict, res: dict, grammar: Grammar) -> dict:
    ev = res["events"]
    first = {}
    for e, at in ev:
        first.setdefault(e.type, (e, at))
    row = {"name": rec["name"], "kind": rec["kind"], "text": rec["text"], "true_end_ms": rec["true_end_ms"]}
    if "endpoint" in first:
        e, _ = first["endpoint"]
        row.update(endpoint_reason=e.reason, endpoint_t_ms=e.t_ms, cut=bool(e.t_ms < rec["true_end_ms"]))
    if "reply" in first:
        row["reply_ready_ms"] = round(first["reply"][1], 1)
        row["perceived_latency_ms"] = round(first["reply"][1] - rec["true_end_ms"], 1)
    row["stages_ms"] = breakdown(rec, res, first)
    row["window_fallbacks"] = res["window_fallbacks"]
    row["rechecks"] = res["rechecks"]
    row["transcripts"] = [e.text for e, _ in ev if e.type == "transcript"]
    row["partials"] = len([e for e, _ in ev if e.type == "partial"])
    row["intent"] = intent_of(first["intent"][0]) if "intent" in first else None
    want = grammar.parse(rec["text"])
    row["expected_intent"] = [want.intent, want.sku, want.quantity, want.direction] if want else None
    row["grammar_path"] = want is not None
    wake = first.get("wake")
    speech_ms = rec["true_end_ms"] - (rec["speech_start_ms"] or (wake[0].t_ms if wake else 0))
    row["speech_ms"] = round(speech_ms, 1)
    row["partial_cpu_ms"] = round(res["partial_cpu_ms"], 1)
    row["speculations"] = res["speculations"]
    row["speculation_cpu_ms"] = round(res["speculation_cpu_ms"], 1)
    row["cpu_ms"] = round(res["cpu_ms"], 1)
    return row


def stage_figures(rows: list[dict]) -> dict:
    """Per stage: median and mean ms over the grammar-path turns with a reply that were not cut (the
    means add up to their mean perceived latency; the medians need not add up to its median)."""
    turns = [r for r in rows if r["grammar_path"] and r.get("stages_ms") and not r.get("cut")]
    out = {"turns": len(turns)}
    for stat, f in (("median_ms", statistics.median), ("mean_ms", statistics.mean)):
        out[stat] = {k: round(f(v), 1) for k in STAGES + ("vad_lag_no_release", "final_decode", "final_nlu",
                                                           "final_store_reply")
                     if (v := [r["stages_ms"][k] for r in turns if r["stages_ms"].get(k) is not None])}
    lat = [r["perceived_latency_ms"] for r in turns]
    out["mean_perceived_latency_ms"] = round(statistics.mean(lat), 1) if lat else None
    return out


def summary(rows: list[dict]) -> dict:
    lat = [r["perceived_latency_ms"] for r in rows if r["grammar_path"] and "perceived_latency_ms" in r]
    speech_s = sum(r["speech_ms"] for r in rows) / 1000
    return {
        "stages": stage_figures(rows),
        "window_fallbacks": sum(r["window_fallbacks"] for r in rows),
        "rechecks": sum(r["rechecks"] for r in rows),
        "recordings": len(rows),
        "grammar_path_with_reply": len(lat),
        "median_perceived_latency_ms": round(statistics.median(lat), 1) if lat else None,
        "p90_perceived_latency_ms": round(float(np.percentile(lat, 90)), 1) if lat else None,
        "commands_cut": sum(bool(r.get("cut")) for r in rows),
        "cut_at_pause_le_900ms": sum(bool(r.get("cut")) for r in rows if r["kind"] == "pause"),
        "intent_as_expected": sum(r["intent"] == r["expected_intent"] for r in rows if r["grammar_path"]),
        "partial_cpu_ms_per_s_speech": round(sum(r["partial_cpu_ms"] for r in rows) / speech_s, 1) if speech_s else None,
        "speculation_cpu_ms_per_s_speech": round(sum(r["speculation_cpu_ms"] for r in rows) / speech_s, 1)
        if speech_s else None,
        "speculations_per_recording": round(statistics.mean(r["speculations"] for r in rows), 2),
        "cpu_ms_per_recording": round(statistics.mean(r["cpu_ms"] for r in rows), 1),
        "endpoint_reasons": {k: sum(r.get("endpoint_reason") == k for r in rows)
                             for k in ("complete", "incomplete", "vad_tail", "max_length", "stream_end")},
        "median_by_kind_ms": {k: round(statistics.median(v), 1) for k in sorted({r["kind"] for r in rows})
                              if (v := [r["perceived_latency_ms"] for r in rows
                                        if r["kind"] == k and r["grammar_path"] and "perceived_latency_ms" in r])},
    }


COLORS = {"fixed": "tab:gray", "semantic_30s": "tab:orange", "semantic_nocheck": "tab:purple",
          "semantic": "tab:blue"}
STAGE_COLORS = ("tab:purple", "tab:pink", "tab:gray", "tab:red", "tab:olive", "tab:cyan", "tab:brown")


def plot(result: dict, path: Path) -> None:
    """Left: perceived latency per recording kind and configuration (medians as bars); right: the
    mean per-stage breakdown per configuration, stacked (it adds up to the mean latency)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = list(result["rows"])
    kinds = sorted({r["kind"] for r in result["rows"][configs[0]]})
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(14, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    w = 0.8 / len(configs)
    for j, cfg in enumerate(configs):
        for k, kind in enumerate(kinds):
            v = [r["perceived_latency_ms"] for r in result["rows"][cfg]
                 if r["kind"] == kind and r["grammar_path"] and "perceived_latency_ms" in r]
            x = k - 0.4 + (j + 0.5) * w
            ax.scatter([x] * len(v), v, s=10, alpha=0.6, color=COLORS.get(cfg, "black"), label=cfg if k == 0 else None)
            if v:
                ax.hlines(statistics.median(v), x - w / 2, x + w / 2, color="black", lw=2)
    ax.axhline(450, color="tab:green", ls="--", lw=1, label="target 450 ms")
    ax.set_xticks(range(len(kinds)), kinds)
    ax.set_ylabel("true end of speech → reply audio ready, ms")
    s = result["summary"]
    ax.set_title("grammar path, medians: " + ", ".join(f"{c} {s[c]['median_perceived_latency_ms']:.0f}" for c in configs),
                 fontsize=9)
    ax.legend(loc="upper right", fontsize=8)
    bottom = np.zeros(len(configs))
    for st, color in zip(STAGES, STAGE_COLORS, strict=True):
        v = np.array([s[c]["stages"]["mean_ms"].get(st, 0.0) for c in configs])
        bx.bar(range(len(configs)), v, bottom=bottom, color=color, label=st)
        bottom += v
    bx.axhline(450, color="tab:green", ls="--", lw=1)
    bx.set_xticks(range(len(configs)), configs, rotation=12, fontsize=8)
    bx.set_ylabel("mean ms per turn (grammar path)")
    bx.set_title(f"where the time goes; load average {result['machine']['loadavg_1_5_15_at_start'][0]:.1f} → "
                 f"{result['machine']['loadavg_1_5_15_at_end'][0]:.1f}", fontsize=9)
    bx.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=40, help="recordings of our own (up to 40)")
    ap.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated names of CONFIGS")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "endpointing.json"))
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="an endpoint setting for every configuration, e.g. partial_cpu_fraction=0.1")
    args = ap.parse_args()
    configs = args.configs.split(",")
    if unknown := set(configs) - set(CONFIGS):
        ap.error(f"unknown configurations {sorted(unknown)}; known: {', '.join(CONFIGS)}")
    work = Path(tempfile.mkdtemp(prefix="endpointing-"))
    endpoint = {k: float(v) if "." in v else int(v) for k, v in (kv.split("=", 1) for kv in args.set)}
    settings = load_settings(board="x86-dev", overrides={"store": {"path": str(work / "boot.db")}, "endpoint": endpoint,
                                                         "output_dir": str(work), "llm": {"engine": "none"}})
    boot = Store(work / "boot.db")
    boot.import_csv(SESSIONS / "inventory.csv")
    grammar = Grammar(boot.items())
    stages = build_stages(settings, boot)
    recs = shared_recordings() + build_recordings(work, args.count)
    rows: dict[str, list] = {c: [] for c in configs}
    load_start = [round(x, 2) for x in os.getloadavg()]
    t_start = time.perf_counter()
    try:
        for n, rec in enumerate(recs):
            for cfg in configs[n % len(configs):] + configs[:n % len(configs)]:  # the order rotates
                d = work / f"{rec['name']}-{cfg}"
                d.mkdir()
                stages.store = Store(d / "edge.db")
                stages.store.import_csv(SESSIONS / "inventory.csv")
                try:
                    rows[cfg].append(measure(rec, replay(stages, settings, cfg, rec["path"], d), grammar))
                finally:
                    stages.store.close()
    finally:
        stages.tts.close()
    base = configs[0]
    same = {c: f"{sum(a['intent'] == b['intent'] for a, b in zip(rows[base], rows[c], strict=True) if a['kind'] == 'shared')}"
               f"/{sum(a['kind'] == 'shared' for a in rows[base])}" for c in configs[1:]}
    result = {
        "bench": "endpointing", "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "loadavg_1_5_15_at_start": load_start,
                    "loadavg_1_5_15_at_end": [round(x, 2) for x in os.getloadavg()]},
        "wall_s": round(time.perf_counter() - t_start, 1),
        "settings": settings.endpoint.model_dump(),
        "asr": settings.asr.whisper.model_dump(),
        "configs": {c: {"endpoint": CONFIGS[c][0], "whisper": {k: v if k != "recheck" else "off"
                                                                  for k, v in CONFIGS[c][1].items()}} for c in configs},
        "method": __doc__[__doc__.index("Recordings:"):].strip(),
        f"shared_sessions_identical_intents_vs_{base}": same,
        f"all_recordings_identical_intents_vs_{base}": {
            c: f"{sum(a['intent'] == b['intent'] for a, b in zip(rows[base], rows[c], strict=True))}/{len(rows[base])}"
            for c in configs[1:]},
        "summary": {c: summary(rows[c]) for c in configs},
        "rows": rows,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    plot(result, out.with_suffix(".png"))
    brief = {c: {k: v for k, v in sm.items() if k in ("median_perceived_latency_ms", "p90_perceived_latency_ms",
                                                       "commands_cut", "intent_as_expected", "window_fallbacks", "rechecks")}
             | {"stages_median_ms": sm["stages"]["median_ms"], "stages_mean_ms": sm["stages"]["mean_ms"]}
             for c, sm in result["summary"].items()}
    print(json.dumps({"summary": brief, "identical_intents": same, "load": [load_start, result["machine"]["loadavg_1_5_15_at_end"]],
                      "wall_s": result["wall_s"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
