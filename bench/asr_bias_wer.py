"""Word error rate on the shared sessions with and without biasing recognition toward the
inventory (Whisper initial prompt built from item names, aliases, places and command words).

    .venv/bin/python bench/asr_bias_wer.py [--out bench/results/asr_bias_wer.json]

Each session's command is endpointed by the real wake word + VAD stages, then decoded twice by the
same Whisper model, side by side. WER by jiwer over all sessions (words normalised: lower case,
punctuation dropped, spoken numbers as digits on both sides, so "twelve" vs "12" is not an error).
"""
from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

import jiwer

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from drivers.audio import wav_frames  # noqa: E402
from edge.stages.asr import vocabulary  # noqa: E402
from edge.stages.asr.whisper import WhisperRecognizer  # noqa: E402
from edge.stages.nlu.numbers import normalize_numbers  # noqa: E402
from edge.stages.vad import Endpoint, Endpointer, SileroVad  # noqa: E402
from edge.stages.wake import WakeWord  # noqa: E402
from edge.stock.store import Store  # noqa: E402

SESSIONS = REPO.parent / "shared" / "audio" / "sessions"


def norm(text: str) -> str:
    t = normalize_numbers(text.lower().replace("-", " "))
    return " ".join(re.sub(r"[^\w\s]", " ", t).split())


def utterances(wav: Path, wake: WakeWord, vad: SileroVad) -> list:
    """The endpointed commands of a session, ``(n,)`` int16 each."""
    wake.flush()
    out, ep = [], None
    for f in wav_frames(wav):
        d = wake.process(f)
        if ep is None:
            if d:
                ep = Endpointer()
                vad.reset()
            continue
        st = ep.push(f, vad.probability(f))
        if st is Endpoint.END:
            out.append(ep.audio())
            ep = None
        elif st is Endpoint.NO_SPEECH:
            ep = None
    if ep is not None and ep.state is Endpoint.SPEECH:
        out.append(ep.audio())
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(REPO / "bench/results/asr_bias_wer.json"))
    args = ap.parse_args()
    expected = json.loads((SESSIONS / "expected.json").read_text())
    store = Store(Path("/tmp") / f"edge-wer-{time.time_ns()}.db")
    store.import_csv(SESSIONS / "inventory.csv")
    wake, vad = WakeWord([("hey_mycroft", 0.5)]), SileroVad()
    plain, biased = WhisperRecognizer("whisper-tiny-en"), WhisperRecognizer("whisper-tiny-en")
    biased.set_vocabulary(vocabulary(store.items()))
    refs, hyp_plain, hyp_biased, rows = [], [], [], []
    for name, exp in sorted(expected.items()):
        if name.startswith("_"):
            continue
        texts = exp.get("turns") or ([exp["text"]] if exp.get("text") else [])
        if not texts:
            continue
        utts = utterances(SESSIONS / f"{name}.wav", wake, vad)
        if len(utts) != len(texts):
            print(f"{name}: {len(utts)} utterances endpointed, {len(texts)} expected; skipped")
            continue
        for ref, audio in zip(texts, utts, strict=True):
            p, b = plain.transcribe(audio).text, biased.transcribe(audio).text
            refs.append(norm(ref)); hyp_plain.append(norm(p)); hyp_biased.append(norm(b))
            rows.append({"session": name, "reference": ref, "plain": p, "biased": b,
                         "wer_plain": round(jiwer.wer(norm(ref), norm(p)), 3),
                         "wer_biased": round(jiwer.wer(norm(ref), norm(b)), 3)})
    w_plain, w_biased = jiwer.wer(refs, hyp_plain), jiwer.wer(refs, hyp_biased)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    result = {"what": "Whisper tiny.en WER on the shared sessions, without vs with inventory biasing",
              "date": time.strftime("%Y-%m-%d"), "machine": platform.machine(), "commit": commit,
              "utterances": len(refs), "wer_plain": round(w_plain, 4), "wer_biased": round(w_biased, 4),
              "ratio_biased_to_plain": round(w_biased / w_plain, 3) if w_plain else None,
              "initial_prompt": biased.initial_prompt, "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"WER without biasing {w_plain:.3f}, with biasing {w_biased:.3f} over {len(refs)} utterances")
    return 0


if __name__ == "__main__":
    sys.exit(main())
