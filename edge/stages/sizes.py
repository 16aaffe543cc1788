"""Sizes and variants written in item names: ``hex bolt M12 x 80 mm`` → family ``hex bolt``, thread
``M12``, 80 mm; ``drill bit 6 mm`` → ``drill bit``, 6 mm; ``nitrile gloves L`` → ``nitrile gloves``,
garment size L; ``bearing 6205 2RS`` → ``bearing``, designation 6205, seal 2RS.

A leaf: the store (to keep an item's family and size), the understanding (to resolve "M10 bolts
eighty millimetre" by attribute) and the replies ("241 hex bolts, 12 millimetre") read the same
parse. Only written forms are parsed here; spoken sizes ("six mil", "the long ones") are the
understanding's job.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

#: Garment and glove sizes as written in names, and how each is spoken.
GARMENT_WORDS = {"XS": "extra small", "S": "small", "M": "medium", "L": "large", "XL": "extra large",
                 "XXL": "double extra large"}
GARMENT_ZH = {"XS": "特小号", "S": "小号", "M": "中号", "L": "大号", "XL": "加大号", "XXL": "特大号"}
_WORD_TO_GARMENT = {v: k for k, v in GARMENT_WORDS.items()}
#: Written units of length, and their factor to millimetres.
UNIT_MM = {"mm": 1.0, "cm": 10.0, "m": 1000.0}

_THREAD = re.compile(r"(?<![\w.])M(\d+(?:\.\d+)?)(?=$|[^\w.]|[x×]\d)", re.IGNORECASE)
_BY_LENGTH = re.compile(r"\s*[x×]\s*(\d+(?:\.\d+)?)\s*(mm|cm|m)?(?![\w.])", re.IGNORECASE)
_LENGTH = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(mm|cm|m)(?![\w.])", re.IGNORECASE)
#: a current rating as written ("fuse 13 A", "circuit breaker 10A"): upper-case A only, so an
#: article "a" in a name is no size
_AMP = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:A|amps?)(?![\w.])")
#: the seal or shield suffix of a rolling bearing ("2RS": rubber seals, "ZZ": metal shields)
SEALS = ("2RS1", "2RSH", "2RSR", "2RS", "2RZ", "RS1", "RS", "ZZ", "2Z", "Z", "LLU", "DDU", "LLB")
#: a bearing designation as written: the basic number (3–5 digits) and its suffix ("6205 2RS", "608-ZZ",
#: "6304ZZ"); a bare number is one only in a name that says "bearing"
_BEARING = re.compile(rf"(?<![\w.])(\d{{3,5}})(?:[\s-]?({'|'.join(SEALS)}))?(?![\w.])", re.IGNORECASE)
_BEARING_WORD = re.compile(r"\bbearings?\b", re.IGNORECASE)
_GARMENT = re.compile(r"(?:(?<=\s)|^)(?:size\s+)?(XXL|XL|XS|S|M|L|extra large|extra small|small|medium|large)\s*$",
                      re.IGNORECASE)


@dataclass(frozen=True)
class Size:
    """The variant attributes of one item.

    ``thread``: metric thread as written upper-case (``"M12"``) or None. ``mm``: the lengths or
    diameters written in the name, in millimetres, in the order written (``(80.0,)``; for
    ``M12 x 80`` the 80 is a length). ``garment``: ``XS`` … ``XXL`` or None. ``text``: the size part
    of the name as written (``"M12 x 80 mm"``), empty when the name has no size. ``amp``: a current
    rating in amperes (``fuse 13 A`` → 13.0) or None. ``bearing``: a bearing's basic designation
    (``"6205"``) and ``seal`` its suffix upper-case (``"2RS"``, ``"ZZ"``), or None.
    """

    thread: str | None = None
    mm: tuple[float, ...] = ()
    garment: str | None = None
    text: str = ""
    amp: float | None = None
    bearing: str | None = None
    seal: str | None = None

    def __bool__(self) -> bool:
        return bool(self.thread or self.mm or self.garment or self.amp or self.bearing)

    def attributes(self) -> dict[str, object]:
        """The attributes set, by name: ``thread``, ``millimetre`` (the first mm value), ``size``,
        ``amp``, ``bearing``, ``seal``."""
        out: dict[str, object] = {}
        if self.thread:
            out["thread"] = self.thread
        if self.mm:
            out["millimetre"] = self.mm[0]
        if self.garment:
            out["size"] = self.garment
        if self.amp is not None:
            out["amp"] = self.amp
        if self.bearing:
            out["bearing"] = self.bearing
        if self.seal:
            out["seal"] = self.seal
        return out


def split_size(name: str) -> tuple[str, Size]:
    """``(family, size)`` of an item name: the name without its size words (spaces collapsed) and
    the :class:`Size` found. A name without a size gives ``(name, Size())``."""
    spans: list[tuple[int, int]] = []
    thread = None
    mm: list[float] = []
    m = _THREAD.search(name)
    if m:
        thread = f"M{_num(m.group(1))}"
        spans.append(m.span())
        by = _BY_LENGTH.match(name, m.end())
        if by:
            mm.append(float(by.group(1)) * UNIT_MM[(by.group(2) or "mm").lower()])
            spans.append((m.end(), m.end() + by.end() - by.start()))
    for m in _LENGTH.finditer(name):
        if any(a <= m.start() < b for a, b in spans):
            continue
        mm.append(float(m.group(1)) * UNIT_MM[m.group(2).lower()])
        spans.append(m.span())
    amp = None
    for m in _AMP.finditer(name):
        if amp is None and not any(a <= m.start() < b for a, b in spans):
            amp = float(m.group(1))
            spans.append(m.span())
    bearing = seal = None
    for m in _BEARING.finditer(name):
        if not any(a <= m.start() < b for a, b in spans) and (m.group(2) or _BEARING_WORD.search(name)):
            bearing, seal = m.group(1), (m.group(2) or "").upper() or None
            spans.append(m.span())
            break
    garment = None
    rest = _cut(name, spans)
    g = _GARMENT.search(rest)
    # a lone "M" after a family word is a garment size only when no thread was found
    if g and not (thread and g.group(1).upper() == "M"):
        word = g.group(1)
        garment = _WORD_TO_GARMENT.get(word.lower(), word.upper())
        rest = rest[:g.start()]
    family = " ".join(rest.replace(" x ", " ").split()).strip(" ,-") or name.strip()
    text, last = "", None
    for a, b in sorted(spans):
        text += name[a:b] if last == a else " " + name[a:b].strip()
        last = b
    text = " ".join(text.split())
    if garment:
        text = (text + " " + garment).strip()
    return family, Size(thread, tuple(mm), garment, text, amp, bearing, seal)


def spoken_size(size: Size, language: str = "en") -> str:
    """The size as said in a reply: ``"M12, 80 millimetre"``, ``"6 millimetre"``, ``"large"``;
    Mandarin ``"M12，80毫米"``, ``"大号"``. Empty for no size."""
    parts: list[str] = []
    if size.thread:
        parts.append(size.thread)
    for v in size.mm:
        parts.append(f"{_num(v)}毫米" if language == "zh" else f"{_num(v)} millimetre")
    if size.amp is not None:
        parts.append(f"{_num(size.amp)}安" if language == "zh" else f"{_num(size.amp)} amp")
    if size.bearing:
        parts.append(f"{size.bearing} {size.seal}" if size.seal else size.bearing)
    if size.garment:
        parts.append(GARMENT_ZH.get(size.garment, size.garment) if language == "zh"
                     else GARMENT_WORDS.get(size.garment, size.garment))
    return ("，" if language == "zh" else ", ").join(parts)


def _num(value: str | float) -> str:
    f = float(value)
    return str(int(f)) if f.is_integer() else f"{f:g}"


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    out, last = [], 0
    for a, b in sorted(spans):
        out.append(text[last:a])
        last = b
    out.append(text[last:])
    return " ".join("".join(out).split())
