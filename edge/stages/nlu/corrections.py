"""Self-corrections in a heard command (English, normalized text): "A, no, B" → the command with B in
place of the part of A it corrects.

The part after the marker (:data:`MARKERS`: "no wait", "I mean", "make that", "correction",
"sorry", a comma-set "no", a comma-set "actually" or "well" right before a count, …) replaces the span of the same kind before it:

* a count: "we used 3, no wait, 4 drill bits" → "we used 4 drill bits"; "four o-rings 12 mm,
  correction, five" → five o-rings (a bare number corrects the count, a number with a unit the size);
  "three cans of degreaser, sorry, three litres" → 3 litres (a count with its container or measure);
* a place with its preposition: "from drawer 4, no, from bin 118"; "to bin 61, no, to bin 62"; a
  bare number after a place's number is that place's only when no count was said before it ("move
  10 … to bin 300, no, 12" is left unresolved: place or count is asked);
* a size: "M8 nuts, no, M10 nuts"; "large nitrile gloves, no, medium"; "40 mil hose clamps,
  correction, the 20 mil ones";

the words of B that repeat those after the corrected span ("M10 *nuts*") are dropped, the rest is
kept after A. A correction whose later part fits no span of A ("four, no, of the M8 nuts") is left
as said: the marker stays and the guards refuse the command (``correction``).

A correction said on its own in the turn after the command is :mod:`edge.stages.nlu.amend`'s. A leaf
apart from the lexicon's word lists.
"""
from __future__ import annotations

import re

from edge.stages.nlu.lexicon import LOCATION_WORDS, NOT_ITEM

#: markers of a self-correction; a bare "no" counts only when the transcript sets it off with a comma
MARKERS = ("no wait", "wait no", "no sorry", "sorry no", "i mean", "i meant", "make that", "make it", "or rather",
           "scratch that", "strike that", "let me correct that", "correction", "sorry", "oops", "actually", "well", "no")
#: markers that correct only a count said right after them and set off by a comma ("5 fuses, actually 4",
#: "5 fuses, well 4"); elsewhere they are words ("there are actually only 40", "well, we used 3")
_SOFT = (["actually"], ["well"])
_SOFT_RAW = re.compile(r",\s*(?:actually|well)\b", re.IGNORECASE)
_MARKER = re.compile(r"(?:^| )(?P<m>(?:(?:" + "|".join(MARKERS) + r") ?)+)(?= |$)")
#: ("5 no. M8 nuts": "no." after a number is the count's unit, "numbers", no correction)
_WEAK_NO = re.compile(r"(?:[,;.!?-]\s*no\b|(?<!\d )(?<!\d)\bno\s*[,;.!?-])", re.IGNORECASE)
_NUM = re.compile(r"^\d+(?:\.\d+)?$")
_THREAD = re.compile(r"^m\d+(?:\.\d+)?$")
_UNITS = frozenset({"mm", "cm", "m", "millimetre", "millimetres", "metre", "metres", "inch", "a", "amp", "amps",
                    "v", "volt", "volts", "w", "watt", "watts"})
_GARMENT = frozenset({"extra", "small", "medium", "large", "xs", "xl", "xxl", "xxxl", "double", "triple"})
#: a count's container or measure ("3 cans", "3 litres"): the count and its word are corrected together
_AMOUNT_WORDS = frozenset("can cans tin tins litre litres liter liters l box boxes pack packs packet packets bag bags "
                          "roll rolls bottle bottles pair pairs set sets kilo kilos kg".split())
_PREPS = frozenset({"from", "to", "into", "onto", "in", "on", "at", "out"})


def _kind(toks: list[str], i: int) -> str:
    t = toks[i]
    if _NUM.match(t):
        if i + 1 < len(toks) and toks[i + 1] in _UNITS:
            return "size"
        if i > 0 and toks[i - 1] in LOCATION_WORDS | {"number", "no"}:
            return "placenum"
        if i + 1 < len(toks) and toks[i + 1] in _AMOUNT_WORDS:
            return "amount"
        return "count"
    if _THREAD.match(t):
        return "thread"
    if t in _GARMENT:
        return "garment"
    if t in _PREPS:
        return "prep"
    if t in LOCATION_WORDS:
        return "place"
    return "word"


def _run(toks: list[str], i: int, kind: str) -> int:
    """The end of the span of ``kind`` starting at ``toks[i]``."""
    if kind in ("size", "amount"):
        return i + 2
    if kind == "garment":
        j = i
        while j < len(toks) and toks[j] in _GARMENT:
            j += 1
        return j
    if kind in ("prep", "place"):
        j = i + (kind == "prep")
        if j < len(toks) and toks[j] == "out" and j + 1 < len(toks) and toks[j + 1] == "of":
            j += 2
        if j < len(toks) and toks[j] == "the":
            j += 1
        if j < len(toks) and toks[j] in LOCATION_WORDS:
            return min(j + 2, len(toks))
        return i
    return i + 1


def _corrected(a: list[str], b: list[str], kind: str) -> int | None:
    """Where in ``a`` the span of ``kind`` that ``b`` corrects starts (the last one), or None: none
    is there, or the last count is part of a name ("3 cans of WD 40, sorry, 4": 40 is the name's)
    while an earlier count stands before it — which one is meant is asked, never guessed."""
    for i in range(len(a) - 1, -1, -1):
        k = _kind(a, i)
        if kind == "prep" and k == "prep" and a[i] == b[0] and _run(a, i, k) > i:
            return i
        if (kind == "place" and k == "place") or (kind in ("size", "thread") and k == kind):
            return i
        if kind in ("count", "amount") and k in ("count", "amount"):  # "3 cans …, sorry, 3 litres"; "2 boxes, no, 3"
            named = i > 0 and a[i - 1].isalpha() and a[i - 1] not in NOT_ITEM
            return None if named and any(_kind(a, j) in ("count", "amount") for j in range(i)) else i
        if kind == "garment" and k == "garment" and (i == 0 or a[i - 1] not in _GARMENT):
            return i
    return None


def _apply(a: list[str], b: list[str]) -> list[str] | None:
    """``a`` corrected by ``b``, or None when ``b`` fits no span of ``a``."""
    if not a or not b:
        return None
    if len(b) > 1 and b[0] in ("the", "those", "these") and _kind(b, 1) in ("size", "thread", "garment"):
        b = b[1:]  # "…, correction, the 20 mil ones": the size
    kind = _kind(b, 0)
    if kind == "count" and _kind(a, len(a) - 1) == "placenum":
        if any(_kind(a, j) in ("count", "amount") for j in range(len(a))):
            return None  # "move 10 … to bin 300, no, 12": the place or the count? asked, not guessed
        return a[:-1] + b[:1] + b[1:]  # "fuses from drawer 4, no, 5": the place
    if kind == "word":
        return None
    b_end = _run(b, 0, kind)
    if b_end <= 0:
        return None
    if kind == "size" and _NUM.match(a[-1]) and not any(_kind(a, j) == "size" for j in range(len(a))):
        return a[:-1] + b[:b_end] + b[b_end:]  # "cutting discs 115, I mean 125 mm"
    i = _corrected(a, b, kind)
    if i is None:
        return None
    a_end = i + 1 if kind == "count" else _run(a, i, _kind(a, i))
    rest, after = b[b_end:], a[a_end:]
    if rest[:1] in (["one"], ["ones"]):
        rest = rest[1:]
    j = 0
    while j < len(rest) and j < len(after) and rest[j] == after[j]:  # "M10 *nuts*" repeats A's words
        j += 1
    return a[:i] + b[:b_end] + after + rest[j:]


def resolve_corrections(text: str, raw: str = "") -> tuple[str, list[str], bool]:
    """``text`` (normalized) with each self-correction applied, notes (``"correction A → B"``) for
    ``--explain``, and whether a correction was left unresolved (its marker is kept). ``raw``: the
    transcript as heard (a bare "no" is a marker only when set off by a comma there). Raises nothing."""
    weak_no = bool(_WEAK_NO.search(raw or ""))
    soft = bool(_SOFT_RAW.search(raw or ""))
    notes: list[str] = []
    for _ in range(3):
        hit = None
        for m in _MARKER.finditer(text):
            words = m.group("m").split()
            if words == ["no"] and not weak_no:
                continue
            before = text[:m.start("m")].split()
            after = text[m.end("m"):].split()
            if words in _SOFT and not (soft and after and _NUM.match(after[0])
                                       and all(w in before for w in after[1:])):
                continue  # "there are actually only 40", "well 3 really": no correction on its own
            if before and before[-1] in LOCATION_WORDS | {"number"}:
                continue
            if not before and words[0] in ("scratch", "strike"):
                continue  # "scratch that" on its own: a cancel, no correction
            hit = m
            break
        if hit is None:
            break
        a, b = text[:hit.start("m")].split(), text[hit.end("m"):].split()
        fixed = _apply(a, b)
        if fixed is None:
            return text, notes, True
        notes.append(f"correction {' '.join(a[-3:])} → {' '.join(b[:3])}")
        text = " ".join(fixed)
    return text, notes, False
