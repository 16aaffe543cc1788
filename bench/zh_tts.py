"""Which voice speaks the Mandarin replies: espeak-ng's Mandarin (``cmn``, through pyttsx3 as the
box runs it) against Kokoro-82M with misaki's Mandarin phonemes (:mod:`edge.stages.tts.kokoro_zh`),
side by side in one run.

    .venv/bin/python bench/zh_tts.py [--out bench/results/zh_tts.json]

Replies: the box's own Mandarin answers (:func:`edge.stages.dialog.act` with ``language zh`` on the
inventory of tests/recordings/zh/), cleaned as the speech engine gets them
(:func:`edge.stages.tts.clean.for_speech`, numbers as Chinese words). Each is synthesized by both
engines, resampled to 16 kHz and transcribed by the multilingual Whisper base (``language="zh"``, the
Simplified-Chinese head only: no inventory words, a stranger's ear). Reported per engine:

- **round-trip CER**: character edits between the reply and the transcript / reply characters,
  both normalized as in bench/eval_zh_voice.py (numbers as digits, punctuation removed);
- **time to first audio**: wall-clock ms to synthesize the reply's first sentence (what the
  speaker waits for; replies are spoken sentence by sentence), median and max, and the real-time
  factor of whole replies.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.eval_zh_voice import INVENTORY, cer  # noqa: E402

OUT = REPO / "bench" / "results" / "zh_tts.json"
COMMANDS = ["十二号箱有多少个M8螺栓", "收到二十盒丁腈手套", "用了三个M8螺栓", "撤销上一条", "不要登记三个钻头",
            "用了三个链轮", "白漆还有几罐", "液压油还有几桶", "用了两卷绝缘胶带", "用了三四个钻头",
            "B号架有多少护目镜", "入库一百零五个垫圈"]


def replies() -> list[str]:
    from edge.stages import dialog
    from edge.stages.nlu.understand import Understanding
    from edge.stock.store import Store

    out = []
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "e.db") as s:
        s.import_csv(INVENTORY)
        und = Understanding(s.items(), None, language="zh")
        for t in COMMANDS:
            out.append(dialog.act(und.understand(t, llm=False), s, t, "t1", language="zh").text)
    return out


def first_sentence(text: str) -> str:
    parts = re.split(r"(?<=[。！？])", text)
    return next((p for p in parts if p.strip()), text)


def espeak_engine():
    from drivers.audio import read_wav
    from edge.stages.tts.engine import Pyttsx3Tts

    tts = Pyttsx3Tts("zh")
    tmp = Path(tempfile.mkdtemp())

    def say(text: str) -> tuple[np.ndarray, int]:
        p = tts.synthesize(text, tmp / "r.wav")
        data, rate = read_wav(p)
        return data[:, 0], rate
    return say


def kokoro_engine(voice: str):
    from edge.stages.tts.kokoro_zh import KokoroZh

    tts = KokoroZh(threads=2)
    return lambda text: tts.synthesize(text, voice=voice)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--voice", default="jf_nezumi", help="Kokoro voice pack")
    args = ap.parse_args()
    import soxr

    from edge.stages.asr.whisper import WhisperRecognizer
    from edge.stages.tts.clean import for_speech

    texts = [for_speech(t, "zh") for t in replies()]
    rec = WhisperRecognizer("whisper-base", language="zh", window_s=10)
    engines = {"espeak-ng cmn (pyttsx3)": espeak_engine(), f"kokoro-82m zh ({args.voice})": kokoro_engine(args.voice)}
    import os
    result = {"replies": texts, "engines": {}, "loadavg_1_5_15_at_start": [round(x, 2) for x in os.getloadavg()]}
    for name, say in engines.items():
        say("你好。")  # warm-up: the first call loads the engine
        rows, edits, chars, ttfa, rtf = [], 0, 0, [], []
        for text in texts:
            t0 = time.perf_counter()
            say(first_sentence(text))
            ttfa.append(1000 * (time.perf_counter() - t0))
            t0 = time.perf_counter()
            audio, rate = say(text)
            took = time.perf_counter() - t0
            rtf.append(took / (len(audio) / rate))
            pcm = (np.clip(soxr.resample(np.asarray(audio, np.float32), rate, 16000), -1, 1) * 32767).astype(np.int16)
            heard = rec.transcribe(np.concatenate([pcm, np.zeros(8000, np.int16)])).text
            e, n = cer(text, heard)
            edits, chars = edits + e, chars + n
            rows.append({"said": text, "heard": heard, "cer": round(e / n, 3)})
            print(f"{name}: {text} -> {heard}", flush=True)
        result["engines"][name] = {"cer": round(edits / chars, 4), "ttfa_ms_median": round(statistics.median(ttfa)),
                                   "ttfa_ms_max": round(max(ttfa)), "rtf_median": round(statistics.median(rtf), 3),
                                   "rows": rows}
    result["loadavg_1_5_15_at_end"] = [round(x, 2) for x in os.getloadavg()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: {kk: vv for kk, vv in v.items() if kk != "rows"} for k, v in result["engines"].items()},
                     ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
