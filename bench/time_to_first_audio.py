"""Time to first audio: speaking the first sentence while the answer is still generated, against
synthesizing the whole answer after generation (same model, same prompt, side by side).

    .venv/bin/python bench/time_to_first_audio.py [--reps 5] [--out bench/results/time_to_first_audio.json]

Per repetition (order alternated, the KV cache cleared before each run so both decode the prompt):

``whole``   generate the whole answer (SmolLM2-135M Q4_1, greedy, up to 64 tokens), then synthesize
            it with pyttsx3/espeak-ng into one WAV: first audio = that WAV written;
``stream``  the same generation through :class:`edge.stages.tts.stream.StreamingSpeaker`: first audio =
            the first sentence's WAV written (synthesized on the worker thread while tokens come).

Times are from the start of generation, ms (perf_counter); no playback (no sound card here), so
"first audio" is when playback could start. Reports medians and stream/whole, and how many of the
answer's streamed pieces (≈ tokens) came before the first sentence could be cut: the share of the
generation the listener no longer waits for, independent of the machine's load.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from edge.llm.base import GenerationRequest, generate  # noqa: E402
from edge.llm.llamacpp import LlamaCppEngine  # noqa: E402
from edge.stages.sentences import split_sentences  # noqa: E402
from edge.stages.tts.engine import Pyttsx3Tts  # noqa: E402
from edge.stages.tts.stream import StreamingSpeaker  # noqa: E402

MODEL = "smollm2-135m-instruct-q4_1"
PROMPT = "Tell me about hammers."


def run_whole(engine, tts, req, out: Path) -> dict:
    engine.llm.reset()
    t0 = time.perf_counter()
    text, stats = generate(engine, req)
    t_gen = time.perf_counter()
    tts.synthesize(text.strip(), out / "whole.wav")
    t_wav = time.perf_counter()
    return {"first_audio_ms": 1000 * (t_wav - t0), "generation_ms": 1000 * (t_gen - t0),
            "synthesis_ms": 1000 * (t_wav - t_gen), "text": text}


def run_stream(engine, tts, req, out: Path) -> dict:
    engine.llm.reset()
    speaker = StreamingSpeaker(tts, out)
    t0 = time.perf_counter()
    r = speaker.speak(engine.stream(req), turn="bench")
    t_end = time.perf_counter()
    first = r.first("wav", 0)
    gen_done = r.first("generation_done")
    cut = r.first("sentence", 0)
    pieces = [e for e in r.events if e.kind == "token"]
    return {"first_audio_ms": 1000 * (first.t - t0), "generation_ms": 1000 * (gen_done.t - t0),
            "pieces_before_first_sentence": sum(e.seq < cut.seq for e in pieces), "pieces": len(pieces),
            "all_audio_ms": 1000 * (t_end - t0), "first_sentence": r.sentences[0], "sentences": len(r.sentences),
            "first_wav_before_generation_done": first.seq < gen_done.seq, "text": r.text}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "time_to_first_audio.json"))
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    engine = LlamaCppEngine(MODEL, n_ctx=1024, threads=2)
    tts = Pyttsx3Tts()
    req = GenerationRequest([{"role": "user", "content": PROMPT}], max_tokens=64, temperature=0.0)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        out = Path(d)
        run_whole(engine, tts, req, out)  # warm-up: page in the weights, start espeak
        for r in range(args.reps):
            pair = [("whole", run_whole), ("stream", run_stream)]
            if r % 2:
                pair.reverse()
            row = {name: fn(engine, tts, req, out) for name, fn in pair}
            rows.append(row)
            print({k: round(v["first_audio_ms"]) for k, v in row.items()}, flush=True)
    whole = statistics.median(x["whole"]["first_audio_ms"] for x in rows)
    stream = statistics.median(x["stream"]["first_audio_ms"] for x in rows)
    sample = rows[-1]
    result = {
        "what": "time to first audio: first sentence synthesized while generating vs the whole answer after",
        "model": MODEL, "prompt": PROMPT, "max_tokens": 64, "tts": "pyttsx3 2.99 / espeak-ng", "reps": args.reps,
        "median_first_audio_ms": {"whole": round(whole, 1), "stream": round(stream, 1)},
        "ratio_stream_vs_whole": round(stream / whole, 3),
        "median_generation_ms": round(statistics.median(x["whole"]["generation_ms"] for x in rows), 1),
        "median_whole_synthesis_ms": round(statistics.median(x["whole"]["synthesis_ms"] for x in rows), 1),
        "answer": sample["whole"]["text"].strip(), "sentences": sample["stream"]["sentences"],
        "first_sentence": sample["stream"]["first_sentence"],
        "first_wav_before_generation_done": all(x["stream"]["first_wav_before_generation_done"] for x in rows),
        "pieces_before_first_sentence": sample["stream"]["pieces_before_first_sentence"],
        "pieces_total": sample["stream"]["pieces"],
        "rows": [{k: {kk: (round(vv, 1) if isinstance(vv, float) else vv) for kk, vv in v.items() if kk != "text"}
                  for k, v in x.items()} for x in rows],
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                    "loadavg_before": [round(x, 2) for x in load_before],
                    "loadavg_after": [round(x, 2) for x in os.getloadavg()]},
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    assert split_sentences(result["answer"]), "empty answer"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({k: result[k] for k in ("median_first_audio_ms", "ratio_stream_vs_whole", "sentences")}))
    engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
