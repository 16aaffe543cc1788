"""The shape of one evaluation case (``bench/eval/nlu.jsonl``), and a shorthand to write them.

A case, one JSON object a line:

- ``id``: unique; ``text``: the first utterance (unique in the set); ``kind``: what it probes
  (:data:`KINDS`); ``paraphrase``: true for a phrasing that no ordinary command template lists;
- ``before``: utterances said first, as earlier turns of the same session (e.g. the log an
  ``undo`` takes back); their records are part of ``expect.records``;
- ``answers``: what the user says to the box's question(s), in order (fed only while it asks);
- ``confidence``: the transcript confidence given to the understanding (a doubtful recognition);
- ``expect``: ``intent`` (of the first utterance, one of ``edge.stages.nlu.types.INTENTS``);
  ``records``: every record the session must have written by the end, as
  ``{sku, delta, place, kind}`` with ``kind`` ``log`` | ``transfer`` | ``count`` | ``undo``
  (a transfer is two rows, out of one place and into the other; a count's ``delta`` is the
  counted quantity minus what the place held); ``[]`` when nothing may be written;
  ``asks``: true — the box must ask a question (before any answer), false — it must not,
  absent — either; ``reply_contains``: words every one of which some reply must contain
  (case-insensitive; thousands separators ignored).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

KINDS = ("template-like", "paraphrase", "hesitation", "correction", "unknown", "fraction", "oh", "negation",
         "multi", "unicode", "variant", "place", "range", "already_done", "readback", "undo", "cancel", "other")
RECORD_KINDS = ("log", "transfer", "count", "undo")


def rec(sku: str, delta: float, place: str, kind: str = "log") -> dict:
    return {"sku": sku, "delta": delta, "place": place, "kind": kind}


def case(kind: str, intent: str, text: str, records=(), *, p: bool = False, asks: bool | None = None,
         answers=(), reply=(), before=(), confidence: float | None = None) -> dict:
    """One case (see module doc). ``records``: ``(sku, delta, place[, kind])`` tuples; ``p``: paraphrase."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")
    out: dict = {"text": text, "kind": kind, "paraphrase": p}
    if before:
        out["before"] = list(before)
    if answers:
        out["answers"] = list(answers)
    if confidence is not None:
        out["confidence"] = confidence
    expect: dict = {"intent": intent, "records": [rec(*r) for r in records]}
    if asks is not None:
        expect["asks"] = asks
    if reply:
        expect["reply_contains"] = list(reply)
    out["expect"] = expect
    return out


def numbered(cases: list[dict], prefix: str = "") -> list[dict]:
    """``cases`` with ids ``<prefix><kind>-NNN``, numbered per kind in order."""
    counters: dict[str, int] = defaultdict(int)
    out = []
    for x in cases:
        counters[x["kind"]] += 1
        out.append({"id": f"{prefix}{x['kind']}-{counters[x['kind']]:03d}", **x})
    return out


def write_or_check(cases: list[dict], out: Path, description: str) -> int:
    """The generators' command line: write ``cases`` to ``out`` as JSON lines, or with ``--check``
    exit 1 when ``out`` differs from what would be written."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--check", action="store_true", help=f"exit 1 if {out.name} differs from what would be written")
    args = ap.parse_args()
    text = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in cases)
    if args.check:
        same = out.exists() and out.read_text(encoding="utf-8") == text
        print(f"{out}: {'up to date' if same else 'differs'}", file=sys.stderr)
        return 0 if same else 1
    out.write_text(text, encoding="utf-8")
    para = sum(x["paraphrase"] for x in cases)
    print(f"wrote {out}: {len(cases)} cases, {para} paraphrases ({para / len(cases):.0%})", file=sys.stderr)
    return 0
