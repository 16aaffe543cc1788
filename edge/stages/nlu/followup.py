"""Follow-up turns: asking back which item was meant, taking the answer, and yes/no.

The pipeline calls these after an :class:`Intent` came back with ``extra["candidates"]`` (ask
"M8 bolts or M8 washers?", then :func:`resolve_choice` on the answer, heard without a new wake
word) or when a record must be read back and confirmed (:func:`yes_no`).
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from edge.stages.names import name_key
from edge.stages.nlu.filler import has_cjk
from edge.stages.nlu.followup_zh import overreaches_zh
from edge.stages.nlu.grammar import Grammar
from edge.stages.nlu.lexicon import LETTER_NAMES, LOCATION_WORDS, singular
from edge.stages.nlu.numbers import normalize_numbers
from edge.stages.nlu.numbers_zh import normalize_numbers_zh
from edge.stages.nlu.said_counts import other_unit
from edge.stages.nlu.slots import CONTAINERS
from edge.stages.sizes import GARMENT_WORDS, GARMENT_ZH, Size, split_size, spoken_size

LANGUAGES = ("en", "zh")

_YES_EN = re.compile(
    r"\b(?:yes|yeah|yep|yup|yea|ya|aye|correct|right|sure|ok|okay|confirm|confirmed|affirmative|absolutely|"
    r"definitely|exactly|go ahead|do it|sounds good|of course|uh huh|please do|thats it)\b")
_NO_EN = re.compile(r"\b(?:no|nope|nah|cancel|wrong|incorrect|negative|dont|stop|abort|never ?mind|not)\b")
_NEGATED_YES_EN = re.compile(r"\b(?:not|isnt|dont|no)\s+(?:right|correct|it|that|sure|okay|ok)\b")
_YES_ZH_SURE = re.compile(r"没错|没问题|对对|是的|好的")
_NO_ZH = re.compile(r"不|取消|算了|错了|别|否")
_YES_ZH = re.compile(r"是|对|好|行|可以|确认|确定|ok|yes")  # not 嗯: a hesitation as often as an "mm-hm"
#: a reluctant or indifferent "OK" (好吧 "well, fine", 随便 "whatever"): no yes to write on; asked again
_GRUDGING_ZH = re.compile(r"好吧|行吧|也行|随便|都行|无所谓|凑合|算是吧|应该吧|可能吧|大概吧")
_GRUDGING_EN = re.compile(r"\b(?:whatever|if you say so|fine|alright|all right then)\b")
#: a yes said unsure ("yes I think so", "yeah probably"): no yes to write on, even beside a "yes"
_UNSURE_EN = re.compile(r"\b(?:i think so|think so|i guess|i suppose|probably|maybe|perhaps|i believe so|not sure|"
                        r"possibly|might be|i reckon|i dunno|dont know)\b")
_UNSURE_ZH = re.compile(r"应该吧|可能吧|大概吧|也许|估计|好像|不确定|不知道")
#: the whole answer asks the box to wait ("no wait", "hang on", 等一下): the question stays open, nothing is written
_HOLD_EN = re.compile(r"(?:(?:no|oh|um|uh|er|erm|sorry|just|ok|okay|hey|a|one|wait|hold|hang|on|moment|minute|sec|"
                      r"second|lemme|let|me|check|think|not|yet)\s*)+")
_HOLD_EN_WORD = re.compile(r"\b(?:wait|hold on|hang on|one moment|a moment|one sec|a sec|one second|a second|"
                           r"a minute|let me check|lemme check|let me think|not yet)\b")
_HOLD_ZH = re.compile(r"(?:不对|不|等一下|等一等|等等|等会儿?|稍等|慢着|先别|先等等?|让我想想|我想想|我看看|让我看看|嗯|呃|那个|哎|啊|一下)+")
_HOLD_ZH_WORD = re.compile(r"等一下|等一等|等等|等会|稍等|慢着|先别|想想|看看")


def holds(text: str, language: str = "en") -> str | None:
    """Whether an answer to the box's question neither answers nor cancels it: ``"hold"`` when the whole
    answer asks to wait ("no wait", "hang on", "wait a second", 等一下, "不对，等一下"), ``"grudging"``
    for a reluctant or indifferent "OK" said alone (好吧, 随便, "whatever", "fine") or a yes said unsure
    ("yes I think so", "yeah probably", 应该吧): the box asks again and writes nothing; else None.
    Raises nothing."""
    if has_cjk(text or ""):
        t = re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).lower())
        if t and _HOLD_ZH_WORD.search(t) and _HOLD_ZH.fullmatch(t):
            return "hold"
        if _UNSURE_ZH.search(t):
            return "grudging"
        return "grudging" if _GRUDGING_ZH.search(t) and not _YES_ZH_SURE.search(t) else None
    s = " ".join(_words(text))
    if s and _HOLD_EN_WORD.search(s) and _HOLD_EN.fullmatch(s + " "):
        return "hold"
    if _UNSURE_EN.search(s) and not re.search(r"\b(?:no|nope|not right|wrong|cancel)\b", s):
        return "grudging"
    return "grudging" if s and _GRUDGING_EN.search(s) and not re.search(r"\b(?:yes|yeah|yep|correct|no|nope)\b", s) \
        else None

# ordinal answers: "the first one", "number two", "the last one"; index into the candidates
_ORDINALS_EN = {"first": 0, "1st": 0, "former": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2,
                "fourth": 3, "4th": 3, "fifth": 4, "5th": 4, "last": -1, "latter": -1}
_NUMBER_EN = {"one": 0, "two": 1, "three": 2, "four": 3, "five": 4, "1": 0, "2": 1, "3": 2, "4": 3, "5": 4}
_ORDINAL_ZH = re.compile(r"第([一二三四五12345])个?|(最后|后面|后一)|(前面|前一|头一)")
_ZH_DIGIT = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "1": 0, "2": 1, "3": 2, "4": 3, "5": 4}
#: nouns that have no plural in a question ("white paint or copy paper?")
UNCOUNTABLE = frozenset("paint paper tape oil glue grease sand cement wire cable water fuel sealant "
                        "lubricant solder".split())


def _words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text or "").lower().replace("'", "").replace("\u2019", "")
    return re.sub(r"[^a-z0-9]+", " ", text).split()


def yes_no(text: str, language: str = "en") -> bool | None:
    """A spoken answer to a yes/no question → True (yes), False (no), or None (neither, or both).

    English yes: "yes", "yeah", "yep", "correct", "that's right", "sure", "okay", "go ahead" …;
    no: "no", "nope", "cancel", "wrong", "stop", "not right" …. Chinese (``language="zh"``, or any
    text with ideographs) yes: 是 / 对 / 好的 / 行 / 可以 / 确认 / 没错; no: 不是 / 不 / 不对 /
    取消 / 算了 / 错了. A negation wins over the word it negates ("that's not right" → False,
    "不对" → False). A hold or a reluctant "OK" (:func:`holds`: "no wait", 等一下, 好吧) is None. Raises ``ValueError`` for an unknown ``language``.
    """
    if language not in LANGUAGES:
        raise ValueError(f"language {language!r} is not supported; use one of {', '.join(LANGUAGES)}")
    if holds(text, language):  # "no wait", 等一下, 好吧: neither yes nor no (asked again)
        return None
    if has_cjk(text or ""):
        t = re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).lower())
        if _HOLD_ZH_WORD.search(t):  # "是，等一下": changed while said; asked again
            return None
        if _YES_ZH_SURE.search(t) and not re.search(r"不是|不对|不好|不行", t):
            return True
        if _NO_ZH.search(t):
            return False
        return True if _YES_ZH.search(t) else None
    s = " ".join(_words(text))
    if not s:
        return None
    if _NEGATED_YES_EN.search(s):
        return False
    if _HOLD_EN_WORD.search(s):  # "yes, wait", "no wait, yes": changed while said; asked again
        return None
    yes, no = bool(_YES_EN.search(s)), bool(_NO_EN.search(s))
    if yes == no:
        return None
    return yes


def _ordinal(text: str, n: int) -> int | None:
    """The candidate index an ordinal answer points at, or None."""
    if has_cjk(text or ""):
        m = _ORDINAL_ZH.search(text)
        if not m:
            return None
        if m.group(1):
            return _ZH_DIGIT[m.group(1)]
        return n - 1 if m.group(2) else 0
    ws = _words(text)
    for k, w in enumerate(ws):
        if w in _ORDINALS_EN:
            return _ORDINALS_EN[w] % n if _ORDINALS_EN[w] < 0 else _ORDINALS_EN[w]
        if w == "number" and k + 1 < len(ws) and ws[k + 1] in _NUMBER_EN:
            return _NUMBER_EN[ws[k + 1]]
    if ws and ws[-1] in ("one", "1") and len(ws) <= 2 and ws[0] in ("the", "one", "1"):
        return 0  # "the one" is not an answer, but "one" / "the 1" is: the first
    return None


def resolve_choice(text: str, candidates: Sequence) -> str | None:
    """The SKU of the candidate an answer to :func:`ask_back_text` picks, or None.

    ``text``: the answer as transcribed ("the bolts", "washers", "M8 washer please", "the first
    one", "number two", "the last one", "the one in bin twelve", "MUL 2" (a SKU), "螺栓", "第二个").
    ``candidates``: the items asked about, in the order they were read out (objects with ``sku``,
    ``item``, ``location``, ``aliases``, e.g. :class:`edge.stock.store.Item`). Names are matched as in
    the grammar path, but only against these items, so a word they do not share ("bolts") decides.
    None when the answer fits none or several of them. Raises nothing.
    """
    cands = list(candidates)
    if not cands:
        return None
    lang = "zh" if has_cjk(text or "") else "en"
    m = Grammar(cands, language=lang).resolve_item(text or "")
    if m.sku is not None:
        return m.sku
    k = _ordinal(text, len(cands))
    if k is not None and -len(cands) <= k < len(cands):
        return cands[k].sku
    return _by_sku(text, cands) or _thread_by_length(text, cands) or _by_number(text, cands)


#: words said around a SKU ("the SKU is MUL 2 please")
_SKU_FILLER = frozenset("the sku code number is its it that this one please".split())


def _by_sku(text: str, cands: list) -> str | None:
    """The candidate whose SKU the answer spells ("MUL 2", "mul-two", "the SKU is MUL-2"), compared
    without spaces and punctuation, or None."""
    words = [w for w in name_key(normalize_numbers(text or "")).split() if w not in _SKU_FILLER]
    said = "".join(words)
    hits = [c.sku for c in cands if said and re.sub(r"[\W_]+", "", name_key(c.sku)) == said]
    return hits[0] if len(hits) == 1 else None


def _by_number(text: str, cands: list) -> str | None:
    """The one candidate whose name holds the one number said ("forty six" → "hydraulic oil 46"),
    or None (no number, several numbers, or not exactly one name with it)."""
    said = re.findall(r"\d+(?:\.\d+)?", _spoken(text))
    if len(said) != 1:
        return None
    hits = [c for c in cands if said[0] in re.findall(r"\d+(?:\.\d+)?", c.item)]
    return hits[0].sku if len(hits) == 1 else None


def _thread_by_length(text: str, cands: list) -> str | None:
    """The one candidate a thread and length said as "ten by eighty" / "10 x 80" names (M10 x 80
    mm), or None."""
    m = re.search(r"\bm?\s*(\d+(?:\.\d+)?)\s*(?:by|x|times)\s*(\d+(?:\.\d+)?)\b", _spoken(text).lower())
    if not m:
        return None
    thread, length = f"M{_num(float(m.group(1)))}", float(m.group(2))
    hits = [c for c in cands if (z := split_size(c.item)[1]).thread == thread and z.mm[:1] == (length,)]
    return hits[0].sku if len(hits) == 1 else None


def _plural(name: str) -> str:
    """The plural of a name's head noun: its last lower-case word, so a code or proper name after it
    stays ("fuse 5 A" → "fuses 5 A", "gasket GSK026" → "gaskets GSK026", "hyllclips Älva" as is)."""
    words = name.split(" ")
    k = next((i for i in range(len(words) - 1, -1, -1) if words[i].isalpha() and words[i].islower()), None)
    if k is None:
        return name
    last = words[k]
    if last in UNCOUNTABLE or last.endswith("s"):
        return name
    if re.search(r"[^aeiou]y$", last):
        last = last[:-1] + "ies"
    elif re.search(r"(?:x|ch|sh|ss|z)$", last):
        last = last + "es"
    else:
        last = last + "s"
    return " ".join([*words[:k], last, *words[k + 1:]])


def _zh_name(item) -> str:
    alias = next((a for a in getattr(item, "aliases", ()) if has_cjk(a)), None)
    if alias:
        return alias
    family, size = _family_size(item.item)
    return f"{family}（{spoken_size(size, 'zh')}）" if size else item.item


def _family_size(name: str):
    """``(family, Size)`` of a sized name ("drill bit 6 mm" → "drill bit", 6 mm), else ``(name, Size())``."""
    family, size = split_size(name)
    if size and family and family != name and name_key(name).startswith(name_key(family)):
        return family, size
    return name, Size()  # "M8 bolt": the size leads, the name reads as it is


#: The most candidates one ask-back question reads out by name.
MAX_ASKED = 4


def ask_back_text(candidates: Sequence, language: str = "en") -> str:
    """The question that asks which of ``candidates`` was meant, short enough to speak.

    ``candidates``: items (``item``, ``aliases``) in the order to read them. English: plural names,
    ``"M8 bolts or M8 washers?"``, ``"M8 bolts, M8 washers or M8 nuts?"``; a sized name as its
    family and size, the size said once when they share it (``"drill bits, masonry drill bits or
    wood drill bits, 6 millimetre?"``); more than :data:`MAX_ASKED`: the families and a request for
    the size (``"Which hex bolt? Please say its size too."``). Chinese: the first Chinese alias (else
    the family with its size), ``"M8螺栓还是M8垫圈？"``. No candidates: ``"Which item?"`` /
    ``"哪一个？"``. Raises ``ValueError`` for an unknown ``language``.
    """
    if language not in LANGUAGES:
        raise ValueError(f"language {language!r} is not supported; use one of {', '.join(LANGUAGES)}")
    cands = list(candidates)
    split = [_family_size(c.item) for c in cands]
    families = list(dict.fromkeys(f for f, _z in split))
    if language == "zh":
        if not cands:
            return "哪一个？"
        if len(cands) > MAX_ASKED:
            if len(families) == 1:
                return f"哪一种{families[0]}？请说尺寸。"
            return "、".join(families[:MAX_ASKED - 1]) + "还是别的？请说名称和尺寸。"
        names = [_zh_name(c) for c in cands]
        return ("、".join(names[:-1]) + "还是" + names[-1] if len(names) > 1 else names[0]) + "？"
    if not cands:
        return "Which item?"
    if len(cands) > MAX_ASKED:
        if len(families) == 1:
            return f"Which {families[0]}? Please say its size too."
        shown = [_plural(f) for f in families[:MAX_ASKED]]
        tail = " or something else" if len(families) > MAX_ASKED else ""
        return f"{', '.join(shown[:-1]) + ' or ' + shown[-1] if len(shown) > 1 and not tail else ', '.join(shown)}" \
               f"{tail}? Please say the name and size."
    sizes = {spoken_size(z) for _f, z in split}
    if len(sizes) == 1 and "" not in sizes and len(families) == len(cands):
        names = [_plural(f) for f, _z in split]
        return _either(names) + f", {sizes.pop()}?"
    names = [f"{_plural(f)} {spoken_size(z)}" if z else _plural(f) for f, z in split]
    return _either(names) + "?"


def _either(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


# -- answers about places, variants and numbers -------------------------------------------------------

_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(\d+(?:\.\d+)?)(?![A-Za-z0-9_.])")  # "90号" holds 90
_LENGTH_UNIT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(mm|millimet(?:er|re)s?|mils?|cm|centimet(?:er|re)s?|"
                          r"m|met(?:er|re)s?|毫米|厘米|米)(?![a-z])")
_UNIT_MM = {"mm": 1.0, "mil": 1.0, "cm": 10.0, "m": 1000.0, "毫米": 1.0, "厘米": 10.0, "米": 1000.0}
_MOST = {"long": 1, "longest": 1, "longer": 1, "big": 1, "biggest": 1, "bigger": 1, "large": 1, "largest": 1,
         "larger": 1, "thick": 1, "thickest": 1, "short": -1, "shortest": -1, "shorter": -1, "small": -1,
         "smallest": -1, "smaller": -1, "thin": -1, "thinnest": -1, "little": -1}
_MOST_ZH = (("最长", 1), ("长", 1), ("最大", 1), ("大", 1), ("最短", -1), ("短", -1), ("最小", -1), ("小", -1))
_GARMENT_ORDER = ("XS", "S", "M", "L", "XL", "XXL")


# "six and a half" → 6.5 ("three quarters" has become "3 quarters" by then)
_FRACTION_WORDS = re.compile(r"\b(\d+) and (a half|one half|a quarter|one quarter|3 quarters)\b", re.IGNORECASE)
_FRACTION_VALUE = {"a half": 0.5, "one half": 0.5, "a quarter": 0.25, "one quarter": 0.25, "3 quarters": 0.75}


def _spoken(text: str) -> str:
    """``text`` with spoken numbers as digits, English or Chinese ("fifty", "五十" → "50")."""
    if has_cjk(text or ""):
        return normalize_numbers_zh(text)
    out = normalize_numbers(re.sub(r"\bpoint\b", ".", text or "")).replace(" . ", ".")
    return _FRACTION_WORDS.sub(lambda m: f"{int(m.group(1)) + _FRACTION_VALUE[m.group(2).lower()]:g}", out)


def _numbers(text: str) -> list[float]:
    return [float(n) for n in _NUMBER.findall(_spoken(text))]


def _readings(text: str) -> set[float]:
    """Every number an answer may mean: those said, and a digit then a two-digit number said as
    one ("one eighteen" → 118, "one twenty five" → 125, "two fifty" → 250), as places and sizes
    are read out."""
    toks = _spoken(text).split()
    out = set(_numbers(text))
    for a, b in zip(toks, toks[1:], strict=False):
        if re.fullmatch(r"[1-9]", a) and re.fullmatch(r"[1-9]\d", b):
            out.add(float(a + b))
    return out


def number_answer(text: str) -> int | float | None:
    """The one number an answer to "how many?" says ("five", "12", "2.5"), or None for none or
    several different ones ("three or four")."""
    got = set(_numbers(text))
    if len(got) != 1:
        return None
    (v,) = got
    return int(v) if v.is_integer() else v


def place_choice(text: str, places: Sequence[str]) -> str | None:
    """Which of ``places`` (as offered, e.g. ``("bin 12", "bin 90")``) an answer picks: the place
    named ("bin ninety"), its number alone ("twelve"), or an ordinal ("the second one"); None
    when it fits none or several."""
    places = list(places)
    if not places:
        return None
    said = name_key(_spoken(text))
    named = [p for p in places if name_key(p) and re.search(rf"(?<!\S){re.escape(name_key(p))}(?!\S)", said)]
    if len(named) == 1:
        return named[0]
    k = _said_ordinal(text, len(places))
    if k is not None:
        return places[k]
    for nums in (set(_numbers(text)), _readings(text)):
        by_number = [p for p in places if nums & {float(x) for x in _NUMBER.findall(p)}]
        if len(by_number) == 1:
            return by_number[0]
    kinds = [p for p in places if name_key(p).split()[:1] and re.search(
        rf"(?<!\S){re.escape(name_key(p).split()[0])}(?!\S)", said)]
    return kinds[0] if len(kinds) == 1 else None  # "the shelf": the one shelf offered


_ORDINAL_WORD = re.compile(r"\b(?:first|second|third|fourth|fifth|last|latter|former|1st|2nd|3rd|4th|5th|number)\b|第")


def _said_ordinal(text: str, n: int) -> int | None:
    """The index an ordinal word in ``text`` points at ("the second one", "第二个"), or None."""
    if not _ORDINAL_WORD.search((text or "").lower()):
        return None
    k = _ordinal(text, n)
    return k if k is not None and -n <= k < n else None


def variant_choices(items: Sequence) -> tuple[str, list[str], str]:
    """What tells ``items`` (one family, e.g. hex bolts of three lengths) apart, for the question:
    ``(attribute, one label per item, unit word)``; attribute ``thread`` (labels ``M10``…),
    ``millimetre`` (``30``, ``50``…; unit ``millimetre``), ``size`` (garment ``large``…), ``bearing``
    (designations ``6204``…), ``seal`` (``2RS``, ``ZZ``) or ``name`` (no size differs: the names)."""
    sizes = [split_size(i.item)[1] for i in items]
    if len({z.thread for z in sizes}) == len(sizes) and all(z.thread for z in sizes):
        return "thread", [z.thread for z in sizes], ""
    if len({z.mm for z in sizes}) == len(sizes) and all(z.mm for z in sizes):
        k = next(k for k in range(max(len(z.mm) for z in sizes)) if len({z.mm[k:k + 1] for z in sizes}) == len(sizes))
        return "millimetre", [_num(z.mm[k]) if k < len(z.mm) else "?" for z in sizes], "millimetre"
    if len({z.garment for z in sizes}) == len(sizes) and all(z.garment for z in sizes):
        return "size", [GARMENT_WORDS.get(z.garment, z.garment) for z in sizes], ""
    for attribute in ("bearing", "seal"):
        labels = [getattr(z, attribute) for z in sizes]
        if all(labels) and len(set(labels)) == len(labels):
            return attribute, labels, ""
    return "name", [i.item for i in items], ""


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _magnitude(item, attribute: str) -> float:
    z = split_size(item.item)[1]
    if attribute == "thread" and z.thread:
        return float(z.thread[1:])
    if attribute == "size" and z.garment in _GARMENT_ORDER:
        return float(_GARMENT_ORDER.index(z.garment))
    if attribute == "bearing" and z.bearing:
        return float(z.bearing)
    return z.mm[-1] if z.mm else 0.0


def by_size(items: Sequence) -> list:
    """``items`` of one family in the order their variant question reads them: smallest first (by
    thread, length or garment size, :func:`variant_choices`); as given when no size tells them apart."""
    items = list(items)
    attribute, _labels, _unit = variant_choices(items)
    return items if attribute == "name" else sorted(items, key=lambda i: _magnitude(i, attribute))


def variant_pick(text: str, items: Sequence) -> str | None:
    """The SKU an answer to a variant question (:func:`variant_choices`) picks among ``items``: a
    bare number ("fifty" → the 50 mm one), the size said another way ("5 centimetre"), a thread
    ("M twelve"), a garment size ("large", "大号"), "the long ones" / "the shortest" / "the
    biggest" (by that attribute), an ordinal ("the second one"), or a name. None when it fits
    none or several. Never guesses."""
    items = list(items)
    if not items:
        return None
    attribute, labels, _unit = variant_choices(items)
    k = _said_ordinal(text, len(items))
    if k is not None:
        return items[k].sku
    said = _spoken(text).lower()
    pick = _by_value(said, items, attribute, labels)
    if pick is not None:
        return pick
    pick = _sounds_like(said, items, labels) if attribute == "millimetre" else None
    if pick is not None:
        return pick
    direction = _extreme(said)
    if direction and attribute != "name":
        ranked = sorted(items, key=lambda i: _magnitude(i, attribute))
        if len({_magnitude(i, attribute) for i in items}) == len(items):
            return (ranked[-1] if direction > 0 else ranked[0]).sku
    return resolve_choice(text, items)


def _by_value(said: str, items: list, attribute: str, labels: list[str]) -> str | None:
    if attribute == "millimetre":
        mm = {float(n) * _UNIT_MM.get(_unit_key(u), 1.0) for n, u in _LENGTH_UNIT.findall(said)}
        mm = mm or {float(n) for n in _NUMBER.findall(said)}
        if not any(float(lab) in mm for lab in labels if lab != "?"):
            mm = _readings(said)
        hits = [i for i, lab in zip(items, labels, strict=True) if lab != "?" and float(lab) in mm]
    elif attribute == "thread":
        threads = {f"M{_num(float(n))}" for n in re.findall(r"\bm\s*(\d+(?:\.\d+)?)", said)}
        threads |= {f"M{_num(float(n))}" for n in _NUMBER.findall(said)}
        hits = [i for i, lab in zip(items, labels, strict=True) if lab in threads]
    elif attribute == "size":
        words = {w for w in GARMENT_WORDS.values() if re.search(rf"\b{w}\b", said)}
        words = {w for w in words if not any(w != o and w in o for o in words)}  # "extra large" over "large"
        words |= {GARMENT_WORDS[k] for k, zh in GARMENT_ZH.items() if zh in said}
        hits = [i for i, lab in zip(items, labels, strict=True) if lab in words]
    elif attribute in ("bearing", "seal"):  # "6204", "ZZ", "the 2RS ones", "two RS", "double Z"
        said_words = re.sub(r"\b2 (rs|z|rz)\b", r"2\1", said.replace("double z", "zz").replace("z z", "zz")).split()
        hits = [i for i, lab in zip(items, labels, strict=True) if lab.lower() in said_words]
    else:
        return None
    return hits[0].sku if len(hits) == 1 else None


_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_NOT_THE_SIZE = {"the", "ones", "one", "please", "millimetre", "millimetres", "millimeter", "millimeters", "mil",
                 "mils", "mm"}


def _say(n: int) -> str:
    """0–999 in English words ("125" → "one hundred twenty five")."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    return f"{_ONES[n // 100]} hundred" + ("" if n % 100 == 0 else " " + _say(n % 100))


def _sound_key(text: str) -> str:
    """A rough key of how words sound: consonants only, voiced as voiceless, doubles collapsed, so a
    mishearing of a number word keeps its key ("Eddie" and "eighty" → "t")."""
    k = re.sub(r"[^a-z]", "", text.lower()).replace("gh", "").replace("ph", "f").replace("th", "t")
    k = re.sub(r"[aeiouyhw]", "", k).translate(str.maketrans("dzvbgqc", "tsfpkkk"))
    return re.sub(r"(.)\1+", r"\1", k)


def _sounds_like(said: str, items: list, labels: list[str]) -> str | None:
    """The one whole-number size whose spoken words sound as the answer does, when the answer has
    no number in it (a short word heard for the number word: "Eddie" for "eighty"), else None."""
    words = [w for w in _words(said) if w not in _NOT_THE_SIZE]
    if not words or len(words) > 3 or any(c.isdigit() for c in "".join(words)):
        return None
    key = _sound_key("".join(words))
    hits = [i for i, lab in zip(items, labels, strict=True)
            if lab.isdigit() and int(lab) < 1000 and _sound_key(_say(int(lab))) == key]
    return hits[0].sku if len(hits) == 1 else None


def _unit_key(u: str) -> str:
    u = u.lower()
    if u in _UNIT_MM:
        return u
    return "mm" if u.startswith(("milli", "mil")) else "cm" if u.startswith("centi") else "m"


def _extreme(said: str) -> int:
    if has_cjk(said):
        return next((d for w, d in _MOST_ZH if w in said), 0)
    return next((_MOST[w] for w in _words(said) if w in _MOST), 0)


_OUT_WORDS = ("used", "use", "out", "took", "taken", "take", "gone", "went", "removed", "issued", "consumed", "signed out")
_IN_WORDS = ("received", "receive", "in", "added", "add", "delivered", "came in", "arrived", "put", "returned", "back",
             "restocked")
_OUT_EN = re.compile(rf"\b(?:{'|'.join(_OUT_WORDS)})\b")
_IN_EN = re.compile(rf"\b(?:{'|'.join(_IN_WORDS)})\b")


def direction_answer(text: str, language: str = "en") -> str | None:
    """``"out"`` or ``"in"`` for an answer to "used or received?" ("used", "we took them", "they
    came in", "received", "用了", "收到"), None for neither or both. Raises ``ValueError`` for an
    unknown ``language``."""
    if language not in LANGUAGES:
        raise ValueError(f"language {language!r} is not supported; use one of {', '.join(LANGUAGES)}")
    if has_cjk(text or ""):
        out, into = bool(re.search(r"用|拿|取|领", text)), bool(re.search(r"收|到货|放入|进", text))
    else:
        said = " ".join(_words(text))
        out, into = bool(_OUT_EN.search(said)), bool(_IN_EN.search(said))
    if out == into:
        return None
    return "out" if out else "in"


_CANCEL_EN = re.compile(r"^(?:oh |no |ah )*(?:never ?mind|forget (?:it|that)|cancel(?: that| it)?|leave it|skip it|"
                        r"nothing|none of them|stop)(?: then| please| thanks)?$")
_CANCEL_ZH = re.compile(r"^(?:算了|取消|不用了|没事|不要了)[吧了。！!]*$")


def is_cancel(text: str, language: str = "en") -> bool:
    """Whether an answer to the box's question drops the command ("never mind", "forget it",
    "cancel", "nothing", "算了", "取消"), said on its own (not "cancel the washers, the bolts")."""
    if has_cjk(text or ""):
        return _CANCEL_ZH.match(re.sub(r"\s+", "", text)) is not None
    return _CANCEL_EN.match(" ".join(_words(text))) is not None


#: words an answer may say around what it answers: fillers, hedges, thanks, pronouns, little words
_AROUND = frozenset("a an the of them those these it its they we i im ive id weve theyre you that thats this is was were "
                    "be been are there here so um uh er erm hmm mm ah oh well like ok okay please thanks thank cheers ta "
                    "sorry think say guess reckon would about around roughly approximately exactly just only all total "
                    "make it's and with for to from in at on out our my some yes yeah yep right sure actually "
                    "anyway today now earlier".split())
#: the words of a unit, by the item's unit (what a count of it may be said in)
_UNIT_SAID = {"pc": "pc pcs piece pieces unit units nos item items", "m": "m metre metres meter meters",
              "l": "l litre litres liter liters", "kg": "kg kilo kilos kilogram kilograms", "g": "g gram grams",
              "cm": "cm centimetre centimetres centimeter centimeters", "mm": "mm millimetre millimetres millimeter",
              "ml": "ml millilitre millilitres milliliter milliliters"}
_PCS = {"pcs": "pc", "pc": "pc", "piece": "pc", "pieces": "pc", "unit": "pc", "units": "pc", "ea": "pc"}
#: what an answer to a choice may say about the choice ("the long ones", "the second one", "number two")
_CHOICE_WORDS = frozenset("one ones first second third fourth fifth last other former latter number long longer longest "
                          "short shorter shortest big bigger biggest small smaller smallest large larger largest "
                          "medium extra double thick thin wide narrow mil mils mm millimetre millimetres millimeter "
                          "millimeters centimetre centimetres cm inch inches x by size".split())
#: the words of each direction, one by one ("came in" gives "came" and "in")
_WAY_WORDS = {"out": set(" ".join(_OUT_WORDS).split()), "in": set(" ".join(_IN_WORDS).split())}
#: what an answer to a read-back or to "used or received?" says to answer it
_ASKED_WORDS = {
    "confirm": set(re.findall(r"[a-z]+", _YES_EN.pattern))
    | set("no nope nah not dont wrong go ahead do it put move them there log new place".split()),
    "direction": _WAY_WORDS["out"] | _WAY_WORDS["in"] | {"got", "came", "arrived", "delivered"},
}


def _digits(text: str) -> set[float]:
    """Every digit run of ``text`` as said ("M10 x 80" holds 10 and 80, "MUL-2" holds 2)."""
    return {float(d) for d in re.findall(r"\d+(?:\.\d+)?", _spoken(text))}


def _unit_words(unit: str | None) -> set[str]:
    u = (unit or "").lower()
    u = _PCS.get(u, u)
    return set(_UNIT_SAID.get(u, f"{u} {u}s").split()) | {u}


def _other_place(pending, spoken: str) -> bool:
    """Whether the answer names a place that is not the one the question settled on: "yes from bin
    12" to "no fuses in bin 12 … Bin 30, then?" (bin 12 is in the command's words, but not its place)."""
    if pending.kind == "choose_place":
        return False
    toks = spoken.lower().split()
    named = {f"{w} {toks[i + 1]}" for i, w in enumerate(toks[:-1]) if w in LOCATION_WORDS}
    offered = [p for c in pending.candidates for p, _q in c.places()]
    held = {" ".join(_spoken(p).lower().split()) for p in (pending.intent.location, pending.intent.to_location,
                                                           *pending.places, *offered) if p}
    return any(n not in held for n in named)


def _allowed_words(pending, item) -> set[str]:
    """Every word an answer to ``pending`` (about ``item``, or None) may say without saying more
    than its answer."""
    intent = pending.intent
    said = [intent.text or "", intent.location or "", intent.to_location or "", *pending.places]
    if item is not None:
        said += [item.item, " ".join(item.aliases), " ".join(p for p, _q in item.places())]
    said += [f"{c.item} {' '.join(c.aliases)} {c.location} {c.sku}" for c in pending.candidates]
    out = set(_AROUND) | set(_words(" ".join(said))) | _unit_words(item.unit if item is not None else None)
    out |= {singular(w) for w in out}
    if pending.kind in ("choose_item", "choose_place"):  # letters: a SKU or a seal spelled out ("B R K 2", "double z")
        out |= (_CHOICE_WORDS | set(_words(" ".join(GARMENT_WORDS.values()))) | LOCATION_WORDS | _SKU_FILLER
                | set("abcdefghijklmnopqrstuvwxyz") | set(LETTER_NAMES))
    out |= _ASKED_WORDS.get(pending.kind, set())
    # the command's own direction said again ("we took six" after "we used a box"), never the other
    out |= _WAY_WORDS.get(intent.direction or "", set())
    return out


def _fits_a_choice(pending, numbers: list[float]) -> bool:
    """Whether one offered item or place holds every number said (a size in cm or m for mm too)."""
    options = [f"{c.sku} {c.item} {c.location}" for c in pending.candidates] or list(pending.places)
    if not options or not numbers:
        return True
    for o in options:
        held = _digits(o) | _readings(o)
        if all(any(round(n * f, 6) in held for f in (1, 10, 1000, 0.1)) for n in numbers):
            return True
    return False


def answer_overreaches(pending, text: str, store=None) -> bool:
    """Whether an answer to the box's question says more than its answer, so that taking it as
    the answer could write what was not meant (then nothing is written and the whole command is
    asked for again):

    - a word that is neither what the question asks for (yes/no, used/received, a count in the
      item's unit, an offered item, size or place, an ordinal) nor a word of the command or of what
      was offered, nor a filler: "yes, received" to a read-back, "30 washers" to "30, 40 or 50 mm
      bolts?", "received at shelf C", "sixteen M8 bolts" to "how many washers?";
    - a number other than the command's count and the numbers of what was offered ("yes, 3" to a
      read-back of 30, "received five" about 3), a count with its unit beside a choice ("large, 6
      pairs" about 5), two counts where one is asked, numbers no single offered option holds
      ("eight, no ten", "M10 30" for M8 bolts), an ordinal where a count is asked ("the third").

    ``pending``: the question (:class:`edge.stages.dialog.Pending`); ``store``: where the item is
    looked up (``get``). Mandarin: :func:`edge.stages.nlu.followup_zh.overreaches_zh`. Raises nothing."""
    if has_cjk(text or ""):
        return overreaches_zh(pending, text, store)
    if not text:
        return False
    intent = pending.intent
    # "Log 2?" to "a couple of" answered "three" or "no, three": a count, as to "how many?"
    counting = pending.kind == "quantity" or (pending.kind == "confirm" and bool(intent.extra.get("loose_count"))
                                              and yes_no(text) is not True)
    if pending.kind == "choose_item" and not pending.candidates:
        return False  # "which item?": any name of the inventory is the answer
    spoken = _spoken(text)
    if _other_place(pending, spoken):
        return True
    toks = spoken.split()
    # "the second one", "that one": a pronoun, not a count ("one eighteen" stays a number)
    bare = " ".join(t for i, t in enumerate(toks) if not (
        t == "1" and i > 0 and toks[i - 1].isalpha() and (i + 1 == len(toks) or not toks[i + 1][:1].isdigit())))
    asked = intent.parts[pending.part] if getattr(pending, "part", None) is not None and intent.parts else intent
    item = store.get(asked.sku) if store is not None and asked.sku else None  # a part's question: that part's item
    unit = _unit_words(item.unit if item is not None else None)
    allowed = _allowed_words(pending, item)
    words = [w for w in _words(bare) if not w.replace(".", "").isdigit()]
    strange = [w for w in words if w not in allowed and singular(w) not in allowed]
    content = [w for w in words if w not in _AROUND]
    # a choice said as one word alone is the choice or nothing: "Eddie" is how "eighty" was heard
    lone = pending.kind in ("choose_item", "choose_place") and len(content) == 1 and not _numbers(bare)
    if strange and not lone:
        return True
    said = _numbers(bare)
    if counting:  # one count, in the item's unit ("twenty boxes" to "how many pcs?" is not one; nor "3 gloves"
        # to "how many boxes?": the pieces again)
        return (len(said) > 1 or any(w in _ORDINALS_EN for w in _words(text))
                or any(singular(w) in CONTAINERS and w not in unit and singular(w) not in unit for w in words)
                or (item is not None and any(other_unit(text, n, (item.item, *item.aliases), item.unit) for n in said)))
    if pending.kind in ("choose_item", "choose_place"):
        counted = re.findall(r"(\d+(?:\.\d+)?)\s+(?:of\b|[a-z]+s\b)", bare)
        counts = [float(n) for n, w in zip(counted, re.findall(r"\d+(?:\.\d+)?\s+(\S+)", bare), strict=False)
                  if w == "of" or w in unit or singular(w) in CONTAINERS]
        if any(c != intent.quantity for c in counts):
            return True
        return not _fits_a_choice(pending, [n for n in said if n not in counts])
    ok = {float(intent.quantity)} if intent.quantity is not None else set()
    for o in [intent.text or "", intent.location or "", intent.to_location or "", *pending.places]:
        ok |= _readings(o) | _digits(o)
    if item is not None:
        ok |= _digits(item.item)
    extra = [n for n in said if n not in ok]
    return bool(extra) and not (_readings(bare) - set(said)) & ok