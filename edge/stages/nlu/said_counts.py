"""What an English utterance says as counts, checked against what was understood of it (a leaf
apart from the guards and the lexicon; nothing here looks at the store).

* :func:`counts_said` — the numbers of an utterance that are counts: not a place's ("bin 12"), not a
  size ("30 mm", "M8", "2 x 4"), not part of the item's name ("bearing 6204"), not one a
  self-correction replaced ("3, no wait, 4"). A log that accounts for fewer counts than were said
  ("we received 50 fuses and used 5", "we used 3 washers and 2") must not be written as heard.
* :func:`pairs_in_other_unit` — "a pair of gloves", "2 pairs of goggles" said of an item counted in
  another unit (boxes): the pairs are no count of it.
* :func:`other_unit` — a count said in another unit than the item's ("3 sheets of paper" counted in
  pallets, "50 ml of grease" in pcs, "3 fuse boxes" or "3 washer packs" in pcs: the unit after the name), or a bare count of an item counted in lots ("3 gloves" of boxes,
  "5 gloves" of pairs: the pieces, or the lots?): asked, never converted; :func:`other_unit_zh` the same for a
  Mandarin measure word (``三盒保险丝`` of fuses counted in pcs).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from edge.stages.nlu.filler import strip_leading_fillers
from edge.stages.nlu.guards import fractions, guard
from edge.stages.nlu.lexicon import normalize_text
from edge.stages.nlu.numbers import normalize_numbers
from edge.stages.nlu.slots import locations

__all__ = ["PAIR_UNITS", "PIECE_UNITS", "counts_said", "other_unit", "other_unit_zh", "pairs_in_other_unit"]

_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
#: a number followed by one of these is a size or a measure of the thing, not how many ("30 mm", "10 a")
_SIZE_AFTER = frozenset("mm cm a amp amps v volt volts w watt watts kw inch inches x by mil gauge bar psi nm ah mah "
                        "k ohm ohms pin pins way core".split())
#: a number after one of these is a size, a code or a time, not how many ("size 10", "number 4", "m 8")
_NOT_COUNT_BEFORE = frozenset("x by size number no m part code ref model type".split())
#: units an item counted in pairs has; a pair said of it is its count
PAIR_UNITS = frozenset({"pair", "pairs", "pr", "prs"})
#: units of items counted one by one: "a pair of fuses" is 2 of them
PIECE_UNITS = frozenset({"pcs", "pc", "piece", "pieces", "ea", "each", "unit", "units", "no", "nos"})
#: units that hold several of the thing: a count said with the item's name alone ("3 gloves" of gloves
#: counted in boxes) may be of the pieces inside, so it is asked; "5 gloves" of gloves in pairs too
#: (single gloves or pairs?)
LOT_UNITS = frozenset("box pack roll pallet can case carton bag tin bottle tub crate drum reel spool coil bucket pail "
                      "sachet tube jar cartridge ream set pair dozen kit".split())
_PAIR = re.compile(r"\bpairs?\b")
_ONE_PAIR = re.compile(r"\b(?:a|one) pair of\b")


def counts_said(text: str, names: Iterable[str] = ()) -> int:
    """How many counts the English utterance ``text`` says (see the module doc); ``names``: the names
    and aliases of the item(s) understood, whose numbers are part of the name. Raises nothing."""
    norm = fractions(normalize_text(strip_leading_fillers(text or "")))
    toks = guard(norm, text or "").text.split()
    locs = locations(toks)
    skip = set().union(*(s for _, s in locs)) if locs else set()
    in_names: list[str] = [t for name in names for t in normalize_text(name).split() if _NUMBER.match(t)]
    n = 0
    for i, t in enumerate(toks):
        if not _NUMBER.match(t) or i in skip:
            continue
        after = toks[i + 1] if i + 1 < len(toks) else ""
        before = toks[i - 1] if i else ""
        if after in _SIZE_AFTER or before in _NOT_COUNT_BEFORE:
            continue
        if t in in_names:  # "bearing 6204": the number is the name's, said once
            in_names.remove(t)
            continue
        n += 1
    return n


def pairs_in_other_unit(text: str, unit: str, quantity: float | None) -> bool:
    """Whether ``text`` counts in pairs an item counted in ``unit`` that is not pairs: "a pair of
    gloves" of gloves counted in boxes (never one box). "a pair of fuses" of an item counted in pieces
    is its 2 pieces (``quantity`` 2), no other unit. Raises nothing."""
    unit = (unit or "").lower()
    said = (text or "").lower()  # the normal form reads "a pair of gloves" as "1 gloves"
    if unit in PAIR_UNITS or not _PAIR.search(said):
        return False
    return not (unit in PIECE_UNITS and quantity == 2 and _ONE_PAIR.search(said))


#: Unit words said with a quantity, by the unit they mean.
_UNIT_WORDS = {"box": "box", "boxes": "box", "pack": "pack", "packs": "pack", "packet": "pack", "packets": "pack",
               "roll": "roll", "rolls": "roll", "carton": "carton", "cartons": "carton", "bag": "bag", "bags": "bag",
               "case": "case", "cases": "case", "can": "can", "cans": "can", "m": "m", "metre": "m", "metres": "m",
               "meter": "m", "meters": "m", "pcs": "pcs", "pieces": "pcs", "piece": "pcs", "tin": "can", "tins": "can",
               "pallet": "pallet", "pallets": "pallet", "crate": "crate", "crates": "crate", "tub": "tub", "tubs": "tub",
               "sheet": "sheet", "sheets": "sheet", "ml": "ml", "millilitre": "ml", "millilitres": "ml",
               "l": "l", "litre": "l", "litres": "l", "liter": "l", "liters": "l", "kg": "kg", "kilo": "kg",
               "kilos": "kg", "kilogram": "kg", "kilograms": "kg", "g": "g", "gram": "g", "grams": "g",
               "bottle": "bottle", "bottles": "bottle", "tube": "tube", "tubes": "tube", "jar": "jar", "jars": "jar",
               "drum": "drum", "drums": "drum", "reel": "reel", "reels": "reel", "spool": "spool", "spools": "spool",
               "set": "set", "sets": "set", "pair": "pair", "pairs": "pair", "bucket": "bucket", "buckets": "bucket",
               "sachet": "sachet", "sachets": "sachet", "cartridge": "cartridge", "cartridges": "cartridge",
               "pc": "pcs", "ream": "ream", "reams": "ream", "coil": "coil", "coils": "coil", "ft": "ft", "feet": "ft",
               "foot": "ft", "yard": "yd", "yards": "yd", "gallon": "gal", "gallons": "gal"}


def other_unit(text: str | None, q: int | float | None, names: Iterable[str], unit: str,
               part: bool = False) -> str | None:
    """The unit word said right after the count ``q`` in the transcript ``text`` ("2 boxes of o-rings",
    "a packet of M8 washers", "3 sheets of paper") when it is clearly not the item's ``unit`` (boxes
    of an item counted in pcs), else None; a word of the item's ``names`` ("set screws", "sanding
    sheets") is no unit. ``part``: the count is one part of several, so only a unit said before this
    item's name is its own. The unit is asked, never converted (no pack size is declared). Raises nothing."""
    if q is None:
        return None
    num = str(int(q)) if float(q).is_integer() else str(q)
    said_as = rf"(?:{re.escape(num)}|an?(?=\s+[a-z]+\s+of\b))" if q == 1 else re.escape(num)  # "a box of" is 1 box
    # "2 M twelve bolts": an "m" before a number is a thread, no metres; the last one said is kept
    # ("3 cans of degreaser, sorry, 3 litres")
    raw, text = text or "", normalize_numbers(text or "").lower()  # the normal form reads "a pair of" as 1
    spoken, names = list(names), {w for n in names for w in re.findall(r"[a-z]+", n.lower())}
    found = [m for m in re.finditer(rf"(?<![\w.]){said_as}\s+([a-z]+)\b(?!\s*\d)", text)
             if not {m.group(1), m.group(1).rstrip("s"), m.group(1) + "s"} & names]
    if part:  # "a roll of duct tape and a can of WD-40": the unit before this item's name
        found = [m for m in found if any(w in names for w in re.findall(r"[a-z]+", text[m.end():m.end() + 40])[:4])]
    codes = {w for n in spoken for w in re.findall(r"[a-z0-9]+", n.lower())}  # "m8" of "M8 nut"
    said = _UNIT_WORDS.get(found[-1].group(1)) if found else _UNIT_WORDS.get(_unit_after_name(text, num, codes) or "")
    mine = _UNIT_WORDS.get(unit.lower(), unit.lower())
    if said is None and found and found[-1].group(1) not in _NOT_A_UNIT and found[-1].group(1).rstrip("s") != mine \
            and re.match(r"\s+of\b", text[found[-1].end():]):
        return found[-1].group(1)  # "30 pounds of m8 nuts": a unit this table does not know is still no count of pcs
    if mine in PAIR_UNITS:
        mine = "pair"
    if said is None and mine in LOT_UNITS and _pieces(text, raw, num, q, names, {mine, unit.lower()}):
        return "piece"  # "3 gloves" of gloves counted in boxes: 3 boxes, or 3 gloves? (no pack size is declared)
    return said if said is not None and said != mine else None


def _unit_after_name(text: str, num: str, names: set[str]) -> str | None:
    """A unit word said right after the item's name that follows the count ("3 fuse boxes", "3 washer
    packs", "3 bolt cases"): boxes of fuses, or another thing; never pieces of the item as heard. None
    when no unit word follows the name."""
    toks = re.findall(r"[a-z0-9]+(?:\.\d+)?", text)
    for i, t in enumerate(toks):
        j = i + 1
        while t == num and j < len(toks) and j - i <= 4 and {toks[j], toks[j].rstrip("s"), toks[j] + "s"} & names:
            j += 1
        if j > i + 1 and j < len(toks) and toks[j] in _UNIT_WORDS:
            return toks[j]
    return None


def _pieces(text: str, raw: str, num: str, q: float, names: set[str], units: set[str]) -> bool:
    """Whether the count ``num`` is said right before the item's name with no word of its unit
    between ("3 gloves", "3 nitrile gloves M"; not "3 boxes of gloves", "gloves, 2 boxes")."""
    if q == 1 and re.search(r"\b(?:a|one) pair of\b", raw.lower()):
        return False  # the normal form reads "a pair of gloves" as "1 gloves" (pairs of boxes: pairs_in_other_unit)
    toks = re.findall(r"[a-z]+|\d+(?:\.\d+)?", text)  # "3 wd-40": the name's words apart
    said_as = {num, "a", "an", "one"} if q == 1 else {num}
    for i, t in enumerate(toks):
        if t not in said_as:
            continue
        window = toks[i + 1:i + 5]
        named = [j for j, w in enumerate(window) if w in names or w.rstrip("s") in names]
        # the unit may follow the name ("5 silicone sealant tubes")
        if named and not any(_UNIT_WORDS.get(w, w.rstrip("s")) in units for w in window[:named[-1] + 2]):
            return True
    return False


#: words said between a count and "of" that are no unit ("3 of the fuses", "2 more of them")
_NOT_A_UNIT = frozenset("of more other out each all both either neither".split())


#: Mandarin measure words that name a unit (the general classifiers 个, 只, 支, 根 … fit any item)
#: (箱 is a case or carton, which holds boxes: never the item's 盒)
_MEASURE_UNITS_ZH = {"盒": "box", "箱": "case", "包": "pack", "卷": "roll", "罐": "can", "桶": "drum", "瓶": "bottle",
                     "袋": "bag", "套": "set", "对": "pair", "双": "pair", "副": "pair", "米": "m", "升": "l",
                     "斤": "jin", "公斤": "kg", "千克": "kg", "克": "g", "托": "pallet", "张": "sheet", "打": "dozen",
                     # lots of several (五批钻头, 三捆扎带): never as many pieces
                     "捆": "bundle", "批": "batch", "组": "set", "串": "string", "盘": "reel", "板": "card",
                     "排": "row", "堆": "heap", "车": "load", "提": "carrier"}
_COUNT_MEASURE_ZH = re.compile(r"(\d+(?:\.\d+)?)\s*(公斤|千克|[盒箱包卷罐桶瓶袋套对双副米升斤克托张捆批组串盘板排堆车提])")
#: a count said with a piece classifier or none ("三个手套", "三手套")
_COUNT_PIECES_ZH = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([个只支根片条件颗枚]?)(?=[^\d\s号])")


def other_unit_zh(norm: str, q: int | float | None, unit: str) -> str | None:
    """The measure word said right after the count ``q`` in the Mandarin ``norm`` (numerals as
    digits: :class:`edge.stages.nlu.accounting.Utterance`'s) when it names another unit than the
    item's ``unit`` (``三盒保险丝`` of fuses counted in pcs), else None. Raises nothing."""
    if q is None:
        return None
    mine = _UNIT_WORDS.get((unit or "").lower(), (unit or "").lower())
    mine = "pair" if mine in PAIR_UNITS else "case" if mine == "carton" else mine
    for m in _COUNT_MEASURE_ZH.finditer(norm or ""):
        if float(m.group(1)) == float(q):
            said = _MEASURE_UNITS_ZH[m.group(2)]
            return m.group(2) if said != mine else None
    if mine in LOT_UNITS:  # "三个手套" of gloves counted in boxes: the pieces, or the boxes? asked
        for m in _COUNT_PIECES_ZH.finditer(norm or ""):
            if float(m.group(1)) == float(q):
                return m.group(2) or "个"
    return None
