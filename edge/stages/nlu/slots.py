"""The deterministic resolvers that fill an intent's slots from the words heard (English).

Whatever picked the intent — a template (:mod:`edge.stages.nlu.templates`), the paraphrase matcher or
a test — the slots come from here: places (:func:`edge.stages.nlu.lexicon.find_location`), the
count (the first number that is not a place, a size or part of the item's name; a decimal only for
a unit in :data:`DECIMAL_UNITS`), the item (:class:`edge.stages.nlu.resolve.ItemIndex`: SKU,
candidates, missing or unknown variant, unknown item) and several parts ("3 drill bits and 2 fuses").
The refusals the guards found (:mod:`edge.stages.nlu.guards`) are kept on the result; nothing here
writes.
"""
from __future__ import annotations

import re
from dataclasses import replace
from decimal import Decimal

from edge.stages.nlu.guards import Guarded
from edge.stages.nlu.lexicon import (
    IN_WORDS,
    LOCATION_WORDS,
    NOT_ITEM,
    OUT_WORDS,
    location_at,
    normalize_location,
    singular,
)
from edge.stages.nlu.resolve import Found, ItemIndex
from edge.stages.nlu.schema import QUANTITY_MAX
from edge.stages.nlu.types import Intent

#: units whose counts may be decimals ("2.5 m of cable"); every other unit is counted whole
DECIMAL_UNITS = frozenset({"m", "kg", "g", "l", "ml"})
#: intents that would write a record
WRITES = frozenset({"log_record", "transfer", "stock_count"})
#: a count's container: "a box of …" is one box
CONTAINERS = frozenset("box pack packet can pair bag roll set piece tin pallet carton case unit pc tube bottle jar drum "
                       "spool reel coil tub bucket pail sachet crate cartridge sheet "
                       # a measure said with "a" is one of it: "a litre of acetone", "a metre of cable"
                       "litre liter metre meter kilo kilogram gram".split())
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
_PARTS = re.compile(r" (?:and then|and|plus|also|as well as|then) (?=(?:\d+(?:\.\d+)? |an? )\S)")
#: a part that says its own direction: "we used 3 fuses *and received* 2 drill bits"
_DIRECTED_PART = re.compile(r" (?:and|plus|also|but)(?: then| also)?(?: (?:we|i|they|he|she)(?: have| also)?)? "
                            r"(?=(?:%s) (?:\d+(?:\.\d+)? |an? )\S)" % "|".join(sorted(IN_WORDS | OUT_WORDS)))
#: a stock query whose item is unknown needs one of these, else the text is the LLM's
STOCK_CUE = re.compile(r"\b(?:do we (?:still )?have|have we (?:still )?got|are there|is there|in stock|on hand|"
                       r"left|remaining|stock of|we got|got any|have any|where (?:is|are|do we keep)|wheres|"
                       r"do we (?:stock|carry|keep|hold|sell)|where (?:do|does) (?:the )?\w+)\b")

#: a stock question about the sizes of a family ("what sizes of socket do we carry"): the answer lists them
VARIANTS_ASKED = re.compile(r"\b(?:what|which) (?:sizes?|lengths?|diameters?|threads?|grades?|kinds?|types?)\b")


def locations(toks: list[str]) -> list[tuple[str, set[int]]]:
    """Every place in ``toks`` (normalized) with the token indices it covers, in order."""
    out, k = [], 0
    while k < len(toks):
        loc = location_at(toks, k)
        if loc:
            out.append((loc[0], set(range(k, loc[1]))))
            k = loc[1]
        else:
            k += 1
    return out


def place(text: str | None) -> str | None:
    """A place slot's text in normal form (``"bin 12"``, ``"shelf B"``), or the words as said when
    they are no "place word + number" (``"the back room"``); None for no text."""
    text = (text or "").strip()
    if not text:
        return None
    words = text.split()
    if words and words[0] == "the":
        text = " ".join(words[1:])
    return normalize_location(text) or text


def _clean_place(text: str | None) -> str | None:
    """:func:`place` of a slot, or None when the slot holds more than one place ("bin 118 from
    drawer 4": the words decide then)."""
    got = place(text)
    if got is None or normalize_location(got) is not None:
        return got
    return None if locations(got.split()) else got


def _number(tok: str) -> int | float:
    v = float(tok)
    return int(v) if v.is_integer() else v


#: what a purpose phrase starts with after "for": "for the bearings", "for cleaning the parts"
_PURPOSE_OPENERS = frozenset("the a an my our his her their this that".split())
#: words that end a purpose phrase: a place or the next part of the command follows
_PURPOSE_END = frozenset("from out off in into at to and plus".split())


def purpose_span(toks: list[str], skip: set[int]) -> set[int]:
    """The token indices of what an item is for ("3 washers *for the gearbox*", "a tub of grease *for
    the bearings*", "acetone *for cleaning the parts*"), up to a place or "from"/"and": said after a
    word that may name the item, it is never the item nor its count. Empty when nothing before "for"
    could name an item ("we used 3 for the M8 bolts")."""
    for i, t in enumerate(toks):
        if t != "for" or i + 1 >= len(toks) or i in skip:
            continue
        nxt = toks[i + 1]
        if nxt not in _PURPOSE_OPENERS and not (nxt.endswith("ing") and len(nxt) > 4):
            continue
        if not any(j not in skip and any(c.isalpha() for c in toks[j]) and singular(toks[j]) not in NOT_ITEM
                   for j in range(i)):
            continue
        end = i + 1
        while end < len(toks) and end not in skip and toks[end] not in _PURPOSE_END:
            end += 1
        return set(range(i, end))
    return set()


#: words before an item's name that say which item, never how many ("the spanner", "this set")
POINTERS = frozenset("the this that these those my our his her their".split())


def _before_name(toks: list[str], span: frozenset[int]) -> int:
    """The index of the word before the item's name, past a pointer after "of" ("a roll of *the*
    tape": the count is the roll's); -1 for none."""
    k = min(span) - 1 if span else -1
    if k >= 2 and toks[k] in POINTERS and toks[k - 1] == "of":
        k -= 1
    return k


def quantity(toks: list[str], skip: set[int], span: frozenset[int], item_known: bool) -> int | float | None:
    """The first number outside ``skip`` (places, sizes) and ``span`` (the item's name); 1 for
    ``a``/``an`` right before a known item's name; None when no count was said ("the spanner": an
    article or pointer names the item, it is no count), or when "a" before the name and a number
    after it both say one ("a breaker on line two")."""
    nums = [i for i, t in enumerate(toks) if _NUMBER.match(t) and i not in skip and i not in span]
    k = _before_name(toks, span)
    contained = k >= 1 and toks[k] == "of" and singular(toks[k - 1]) in CONTAINERS
    if contained:  # "a box of gloves"
        k -= 2
    elif span and min(span) + 1 < len(toks) and singular(toks[min(span)]) in CONTAINERS and toks[min(span) + 1] == "of":
        contained = True  # an unknown item's words start with the container: "a *tub of grease*"
    # "a tub of grease" is one, whatever grease is; a bare "a" before unknown words is no count
    one = span and (item_known or contained) and k >= 0 and toks[k] in ("a", "an")
    if nums:
        if one and nums[0] > max(span):
            return None  # "a circuit breaker on line two": one, or two? asked, never the later number
        return _number(toks[nums[0]])
    # "the spanner", "this set" say which item, never how many: no count, so a log asks
    return 1 if one else None


def pointed_at(toks: list[str], span: frozenset[int]) -> bool:
    """Whether one item's name (token indices ``span``, said in the singular) follows an article or
    pointer ("had *the* spanner", "*the* tub of grease"): the command then names no count, and asks it."""
    if not span or max(span) >= len(toks):
        return False
    last = toks[max(span)]
    if singular(last) != last or last.isdigit():
        return False  # "we consumed the fuses": no count and no one thing named, not a log
    k = _before_name(toks, span)
    if k >= 1 and toks[k] == "of" and singular(toks[k - 1]) in CONTAINERS:
        k -= 2
    return k >= 0 and toks[k] in POINTERS


def quantity_refusal(q: int | float | None, units: set[str], guarded: Guarded | None) -> str | None:
    """Why the count ``q`` must not be written: the guards' refusal first, then ``fraction`` (a
    decimal for items counted whole), ``implausible`` (over :data:`QUANTITY_MAX`)."""
    if guarded is not None and guarded.refusal:
        return guarded.refusal
    if q is None:
        return None
    if isinstance(q, float) and not (units & DECIMAL_UNITS):
        return "fraction"
    if abs(q) > QUANTITY_MAX:
        return "implausible"
    return None


_SIZE_AFTER = frozenset({"mm", "cm", "m", "a", "amp", "x", "by", "v", "w", "l", "kg", "g", "ml", "metre", "litre"})


#: words of an amount said before "of" ("2 litres of degreaser", "a can of WD-40"): such an amount after
#: an earlier count starts another part, even where a number ends the name before it ("WD-40")
_AMOUNT_WORDS = frozenset("litre litres liter liters metre metres meter meters kilo kilos kg box boxes pack packs "
                          "packet packets roll rolls bag bags can cans tin tins tube tubes bottle bottles sheet "
                          "sheets pair pairs set sets reel reels drum drums".split())


def _is_amount(toks: list[str], i: int) -> bool:
    """``toks[i]`` starts an amount with "of": a number or "a"/"an", an amount word, "of"."""
    return ((toks[i] in ("a", "an") or bool(_NUMBER.match(toks[i]))) and i + 2 < len(toks)
            and toks[i + 1] in _AMOUNT_WORDS and toks[i + 2] == "of")


#: "3 x 8 mm drill bits": a count, "x", then a size
_TIMES = re.compile(r"^(\d+) x (?=\d+(?:\.\d+)? (?:mm|cm|m|a|v|w)\b)")
#: a count in a smaller unit of the same dimension, said with "of": "200 cm of …", "500 ml of …"
_MEASURE_OF = re.compile(r"^(\d+(?:\.\d+)?) (mm|cm|ml|g) of ")
#: the smaller unit → (the inventory's unit, how many of the smaller make one)
_SCALE = {"mm": ("m", 1000), "cm": ("m", 100), "ml": ("l", 1000), "g": ("kg", 1000)}


def converted(value: str, unit: str) -> tuple[float, str]:
    """``value`` (digits as said) of the smaller ``unit`` in the inventory's unit, exactly
    (decimal arithmetic: "150" cm → 1.5 m, never 1.4999…). Raises KeyError for a unit not in
    :data:`_SCALE`."""
    target, per = _SCALE[unit]
    return float(Decimal(value) / per), target


def counted_pieces(text: str, keep: frozenset[int] | set[int] = frozenset()) -> list[str]:
    """``text`` cut before each count after the first ("4 m8 nuts 4 m8 washers": the comma between
    them is gone): a number that follows an item word and is followed by one, not by a unit, and is
    not one of the token indices ``keep`` (a number inside the item's name); or an amount with "of"
    (``2 litres of``, ``a can of``) after an earlier count ("a can of wd 40 2 litres of degreaser")."""
    toks = text.split()
    cuts, seen = [0], False
    for i, t in enumerate(toks):
        amount = _is_amount(toks, i)
        if amount and seen and i not in keep:
            cuts.append(i)
        if amount:
            seen = True
            continue
        if not _NUMBER.match(t):
            continue
        before, after = (toks[i - 1] if i else ""), (toks[i + 1] if i + 1 < len(toks) else "")
        if (seen and i not in keep and before.isalpha() and before not in LOCATION_WORDS and before not in _SIZE_AFTER | {"x", "by"}
                and after[:1].isalpha() and after not in _SIZE_AFTER and after not in NOT_ITEM):
            cuts.append(i)
        seen = True
    return [" ".join(toks[a:b]) for a, b in zip(cuts, [*cuts[1:], len(toks)], strict=True)]


def piece_direction(text: str) -> str | None:
    """The direction a part's own words say ("received 2 fuses" → ``in``), None for none or both."""
    words = set(text.split())
    out, into = bool(words & OUT_WORDS), bool(words & IN_WORDS)
    return "out" if out and not into else "in" if into and not out else None


class SlotFiller:
    """Fills slots against one inventory's :class:`ItemIndex`."""

    def __init__(self, index: ItemIndex):
        self.index = index

    def item(self, toks: list[str], skip: set[int], location: str | None, strict: bool = True) -> Found:
        return self.index.find([singular(t) for t in toks], skip, location, strict)

    def _kind_of_place(self, toks: list[str], sku: str) -> str | None:
        """The one place of the kind said ("from the shelf") where ``sku`` is kept, else None."""
        for k in range(len(toks) - 2):
            if toks[k] in ("from", "on", "off", "in", "out") and toks[k + 1] == "the" and toks[k + 2] in LOCATION_WORDS:
                word = toks[k + 2]
                here = [p for p, skus in self.index.by_location.items() if sku in skus and p.split()[0] == word]
                return here[0] if len(here) == 1 else None
        return None

    def _units(self, found: Found) -> set[str]:
        skus = [found.match.sku] if found.match.sku else list(found.match.candidates)
        return {self.index.by_sku[s].unit.lower() for s in skus if s in self.index.by_sku}

    def with_item(self, intent: Intent, found: Found, toks: list[str]) -> Intent:
        """``intent`` with the item facts of ``found`` (and the older ``extra`` keys)."""
        m = found.match
        extra = dict(intent.extra)
        unknown = None
        if m.candidates:
            extra["candidates"] = list(m.candidates)
        elif m.sku is None and m.tokens:
            unknown = " ".join(toks[i] for i in sorted(m.tokens))
            extra["unknown_item"] = unknown
        explain = {**intent.explain, "item_via": m.via}
        return replace(intent, sku=m.sku, candidates=tuple(m.candidates), variant_missing=found.variant_missing,
                       heard_variant=found.heard_variant, unknown=unknown, extra=extra, explain=explain)

    def counted(self, name: str, text: str, guarded: Guarded | None, base: Intent,
                location: str | None = None) -> Intent | None:
        """One command with a count and an item (``log_record``, ``transfer``, ``stock_count``) from
        the slot ``text``: None when it names neither a count nor an item. "3 x 8 mm drill bits" is
        3 of the 8 mm ones when no item's name says "3 x 8"; a log of "200 cm of flex cable" of an item
        counted in metres is 2 m (:func:`converted`: exact, within one dimension; ``extra["converted"]``
        holds the words said, and the dialog reads it back before writing; any other unit is asked)."""
        m = _TIMES.match(text)
        if m is not None:
            got = self._counted(name, f"{m.group(1)} {text[m.end():]}", guarded, base, location)
            if got is not None and got.sku and "x" not in self.index.by_sku[got.sku].item.lower().split():
                return got
        m = _MEASURE_OF.match(text) if name == "log_record" else None
        if m is not None:
            value, unit = converted(m.group(1), m.group(2))
            got = self._counted(name, f"{value:g} {unit} of {text[m.end():]}", guarded, base, location)
            units = {self.index.by_sku[c].unit.lower() for c in ((got.sku,) if got and got.sku else
                                                                   (got.candidates if got else ()))}
            if units == {unit}:  # the item (or every item it may be) is counted in that unit
                return replace(got, extra={**got.extra, "converted": f"{m.group(1)} {m.group(2)}"},
                               explain={**got.explain, "converted": f"{m.group(1)} {m.group(2)} → {value:g} {unit}"})
        return self._counted(name, text, guarded, base, location)

    def _counted(self, name: str, text: str, guarded: Guarded | None, base: Intent,
                 location: str | None = None) -> Intent | None:
        toks = text.split()
        locs = locations(toks)
        skip = set().union(*(s for _, s in locs)) if locs else set()
        if location is None and locs:
            location = locs[0][0]
        skip |= purpose_span(toks, skip)  # "a tub of grease for the bearings": the grease, not the bearings
        found = self.item(toks, skip, location)
        m = found.match
        size_skip = skip | set(m.tokens)
        q = quantity(toks, size_skip, m.tokens, item_known=m.sku is not None or bool(m.candidates))
        # a range, a vague count or a negation without a count is still the command (asked or refused)
        unsure = guarded is not None and (guarded.range is not None or guarded.vague
                                          or guarded.refusal in ("negated", "already_done", "future", "hypothetical"))
        # "we received the paper": a known item said with "the" is the command, its count is asked
        unsure = unsure or (q is None and m.sku is not None and pointed_at(toks, m.tokens))
        if guarded is not None and (guarded.range is not None or guarded.vague):
            q = None  # "about 3", "3 or was it 4": no number of it is written
        if q is None and not unsure:
            return None
        if m.sku is None and not m.candidates and not m.tokens:
            return None
        if q is not None and guarded is not None and guarded.negative:
            q = -q
        if location is None and m.sku is not None:
            location = self._kind_of_place(toks, m.sku)
        refusal = quantity_refusal(q, self._units(found), guarded)
        intent = replace(base, intent=name, quantity=q, location=location, refusal=refusal)
        if guarded is not None and guarded.range is not None:
            intent = replace(intent, extra={**intent.extra, "range": list(guarded.range)})
        return self.with_item(intent, found, toks)

    def _counted_pieces(self, text: str, guarded: Guarded | None, base: Intent) -> list[str]:
        """``text`` cut before each later count (:func:`counted_pieces`) when every piece then names
        a known item ("4 m8 nuts 4 m8 washers"); else whole ("bearing 6000 zz", "v belt spb 1700")."""
        toks = text.split()
        locs = locations(toks)
        skip = set().union(*(s for _, s in locs)) if locs else set()
        pieces = counted_pieces(text, keep=self.item(toks, skip, None).match.tokens)  # "bearing 6000 zz" is one name
        if len(pieces) < 2:
            return [text]
        if sum(_is_amount(toks, i) for i in range(len(toks))) >= 2:
            return pieces  # two amounts with "of" are two parts: one no item fits is asked, never merged
        got = [self.counted("log_record", p, guarded, base) for p in pieces]
        return pieces if all(p is not None and (p.sku or p.candidates) for p in got) else [text]

    def log_record(self, text: str, guarded: Guarded | None, base: Intent) -> Intent | None:
        """A log (several parts when the slot says "3 drill bits and 2 fuses"); a part that says its own
        direction ("… and received 2 fuses") has it, and so do the parts after it that say none
        (``extra["direction_said"]``)."""
        pieces = [q for d in _DIRECTED_PART.split(text) for p in _PARTS.split(d) if p.strip()
                  for q in self._counted_pieces(p, guarded, base)]
        if len(pieces) >= 2 and not (guarded is not None and guarded.range is not None):
            parts = [self.counted("log_record", p, guarded, base) for p in pieces]
            if all(p is not None for p in parts):
                refusal = next((p.refusal for p in parts if p.refusal), None)
                said = None  # "… and received 2 drill bits and 1 washer": the washer was received too
                for i, piece in enumerate(pieces):
                    said = piece_direction(piece) or said
                    if said is not None:
                        parts[i] = replace(parts[i], direction=said, extra={**parts[i].extra, "direction_said": True})
                loc = parts[-1].location  # a place said at the end ("… from drawer 4") is every part's;
                for i, p in enumerate(parts):  # one said inside a part is that part's alone
                    if p.location is None and loc is not None:
                        parts[i] = replace(p, location=loc)
                return replace(base, intent="log_record", parts=tuple(parts), refusal=refusal,
                               explain={**base.explain, "parts": len(parts)})
        return self.counted("log_record", text, guarded, base)

    def query(self, text: str, full: str, base: Intent) -> Intent | None:
        """A stock question: the item (or a place alone) the slot names."""
        toks = text.split()
        if toks and _NUMBER.match(toks[0]):  # a question has no count: "380 cable ties" are the 380 ones
            toks = ["the", *toks]
        locs = locations(toks)
        skip = set().union(*(s for _, s in locs)) if locs else set()
        location = locs[0][0] if locs else None
        found = self.item(toks, skip | purpose_span(toks, skip), location, strict=False)  # a question writes nothing
        m = found.match
        if m.sku is None and not m.candidates:
            if not m.tokens or not STOCK_CUE.search(full):
                return None
        got = self.with_item(replace(base, intent="query_stock", location=location), found, toks)
        if VARIANTS_ASKED.search(full) and len(got.candidates) > 1:
            got = replace(got, extra={**got.extra, "variants_asked": True})
        return got

    def place_contents(self, slot: str | None, text: str, base: Intent) -> Intent | None:
        """What is stored at a place; None for a place where nothing is stocked (not a command)."""
        location = place(slot)
        if location is None:
            locs = locations(text.split())
            location = locs[0][0] if locs else None
        if location is None or location not in self.index.by_location:
            return None
        return replace(base, intent="place_contents", location=location)

    def transfer(self, slots: dict, text: str, guarded: Guarded | None, base: Intent) -> Intent | None:
        """A move from one place to another; places from the slots or, without them, the words
        after ``from`` and ``to``. A template's ``to_location`` alone is enough (``location`` None:
        where from is asked); the words alone need both."""
        src, dst = _clean_place(slots.get("location")), _clean_place(slots.get("to_location"))
        item_text = slots.get("item") or text
        head, sep, tail = item_text.rpartition(" from ")
        if src is None and sep and normalize_location(tail):  # "move 3 … from shelf a" + "to {to_location}"
            src, item_text = normalize_location(tail), head
        if src is None or dst is None:
            toks = text.split()
            for loc, idx in locations(toks):
                before = toks[min(idx) - 1] if min(idx) > 0 else ""
                if before in ("from", "of", "off") and src is None:  # "from", "out of", "off"
                    src = loc
                elif before in ("to", "into", "onto", "in", "on") and dst is None:
                    dst = loc
            item_text = " ".join(t for i, t in enumerate(toks)
                                 if not any(i in s for _, s in locations(toks)) and t not in LOCATION_WORDS)
        # "move 8 drill bits to bin 118": a template that names only where to; the dialog asks from where
        if dst is None or (src is None and not slots.get("to_location")):
            return None
        got = self.counted("transfer", item_text, guarded, replace(base, to_location=dst), location=src)
        return replace(got, location=src, to_location=dst) if got is not None else None
