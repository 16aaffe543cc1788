"""What else an utterance says beside the change, found on the one :class:`Utterance` the
understanding made (its ``raw``, ``norm`` and ``tokens``; no further normal form is made here).

Each check returns ``(kind, words)`` or None; :func:`edge.stages.nlu.accounting.unexplained` turns a
hit into the refusal ``unexplained`` (the dialog writes nothing and says which words). English:

- ``time``: a past time said with the change ("yesterday", "last week", "two days ago", "on
  Monday", "in November"): a record carries the time it is written, so it would be written at the wrong time;
  "today", "this morning", "earlier", "just now" are the time of writing, well enough;
- ``not_count``: the number is no count: a share ("30 percent of the fuses", "30% …"), an
  ordinal ("the 3rd fuse", "the third fuse": the normal form reads both as 3, so the raw words are
  looked at), a label ("fuse number 3", "fuse #3", "fuse 3" with the singular name);
- ``someone``: another person's change beside the speaker's ("I used 3 fuses and he used 2
  washers") or in a clause about the item ("the fuses that John took");
- ``size``: a size said that the understood item does not have ("3 10A fuses" where the item is
  a plain "fuse", "3 10 amp fuses" where it is the 5 A one): which one is asked, never the size dropped.

- :func:`state_said`: what is there, not a change ("there are 40 fuses", "we've got 40", "40 fuses
  are on the shelf"): never a receipt;
- :func:`present_tense`: a change said in the present tense ("we use 3 fuses"): typed, it is read
  back (a habit, or done?); heard speech logs, as the recognizer drops the "d" of "we used".

Mandarin (:func:`zh_leftover`): a size (``六毫米``, ``10安``), an ordinal (``第三个``), a hedge
(``可能``, ``好像``, ``大概``, ``应该``, ``…吧``, ``三个多``), a correction marker without a number after it
(``不是，是垫圈``), taken "back" (``拿了三个保险丝回来``: in or out?), a second item with no count
(``三个保险丝和垫圈``), and a past day (``昨天``, ``上周``).
:func:`zh_not_a_change` gives the reason when a Mandarin sentence with a count that no parse took is
not a change that happened (``每天用三个`` how often, ``明天要用`` still to come, ``借给二号站三个`` a loan,
``点了三个`` counted or ordered?): the box says it did not log. :func:`other_thing_zh` (``保险丝盒``: the
item's name glued to another noun) and :func:`not_ours_zh` (borrowed or lent, ``借了``, ``借给二号站``: no
use, no receipt; someone else's stock, ``老李的``, ``隔壁车间的``; all but the count, ``除了三个都用了``; what
is left, ``只剩三个``) are checked on every Mandarin write, whatever the guards asked.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from edge.stages.nlu.numbers_zh import MEASURE_WORDS

_NUM = r"\d+(?:\.\d+)?"
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
#: a month said ("in November", "on December 5"): which year's, and is it today? a record carries the time it is written
_MONTHS = "january|february|march|april|june|july|august|september|october|november|december"
#: a past time other than the time of writing
_PAST = re.compile(
    rf"\b(?:yesterday|the day before|the other day|over the weekend|last (?:night|week|month|year|shift|weekend|time|"
    rf"{_WEEKDAYS})|(?:{_NUM}|a|an|a few|few|several|a couple of|couple of) (?:days?|weeks?|months?|years?|hours?|"
    rf"nights?|shifts?) ago|on (?:{_WEEKDAYS})|earlier this (?:week|month|year)|this past (?:week|month|{_WEEKDAYS})|"
    rf"(?:in|on|during|back in|early|late|last|since) (?:the )?(?:{_MONTHS})|(?:{_MONTHS}) {_NUM}(?:st|nd|rd|th)?|"
    rf"(?:in|during|back in|early|late|last|since) may)\b")  # (not the "may" of "we may have used")
#: a share of the stock said with its number ("30 percent of the fuses"); the raw "%" too
_SHARE = re.compile(rf"\b{_NUM} (?:percent|per cent|pc of|pct)\b")
_SHARE_RAW = re.compile(r"\d+(?:\.\d+)?\s*%")
#: ordinals as said (the normal form reads "3rd" and "third" as 3); "a third of" is a fraction, "a second" a time
_ORDINAL_RAW = re.compile(
    r"\b(?:\d+(?:st|nd|rd|th)|(?<!\ba )(?<!\bone )(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    r"eleventh|twelfth|twentieth))\b(?! of\b)", re.IGNORECASE)
_ORDINAL_VALUE = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
                  "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "twentieth": 20}
#: a label before the number ("fuse number 3", "#3"); after a place word it is the place's ("bin number 30")
_LABEL = re.compile(rf"(?:^|\s)(\w+ )?(?:number|num) ({_NUM})\b")
_LABEL_RAW = re.compile(r"#\s*(\d+)")
_PLACE_WORDS = frozenset("bin shelf drawer rack cabinet cupboard locker box aisle bay row slot room".split())
#: words that end in "s" without being plural, and the words a number after them is no label of
_NOT_A_NAME = frozenset("used use took take received got logged log record put took grabbed of the a an and from to "
                        "in on at into out off with for by bin shelf drawer rack is are was were".split())
#: measures said after a count ("degreaser 2 litres": a count in litres, no label)
_MEASURES = frozenset("m metre metres meter meters l litre litres liter liters ml kg kilo kilos g gram grams box boxes "
                      "pack packs pcs piece pieces roll rolls can cans pair pairs set sets bag bags".split())
#: another person said as the one who changed the stock (the speaker's "I"/"we" are not)
_THIRD = r"(?:he|she|they|someone|somebody|the other guy|his mate|her mate)"
_VERBS = (r"(?:used|took|taken|received|grabbed|got|gave|returned|brought|had|signed out|booked out|took out|"
          r"pulled|borrowed|nicked|handed out)")
_SUBJECT_VERB = re.compile(rf"\b(\w+) (?:also |just |then |already )?{_VERBS}\b")
_RELATIVE = re.compile(rf"\b(?:that|which|who|whom) (?!i |we )(\w+) (?:\w+ )?{_VERBS}\b")
_NOT_ANOTHER = frozenset("i we us me ive weve and then also just already have has had was were is are been be did do does "
                         "who that which not never all both nt s ve d ll so but or plus was recently finally".split())
_NAME_RAW = re.compile(rf"(?<=[a-z,;] )([A-Z][a-z]+) (?:also |just |then |already )?{_VERBS}\b")
#: size units by what they measure, in the normal form ("10a" glued, "10 amp", "6 mm")
_SIZE_FAMILY = {"mm": "mm", "cm": "cm", "a": "a", "amp": "a", "amps": "a", "ampere": "a", "amperes": "a", "v": "v",
                "volt": "v", "volts": "v", "w": "w", "watt": "w", "watts": "w", "kw": "kw", "inch": "in",
                "inches": "in", "bar": "bar", "psi": "psi", "ah": "ah", "mah": "mah"}
_GLUED_SIZE = re.compile(r"^(\d+(?:\.\d+)?)(a|amp|amps|v|w|kw|mm|cm|ah|mah)$")


#: the speaker unsure that it happened ("I think we used 3 fuses"): said again when sure
_HEDGE = re.compile(r"\b(?:(?:i|we) (?:think|thought|guess|believe|reckon|suppose|assume|imagine)|not sure|pretty sure|"
                    r"if i remember(?: right(?:ly)?)?|iirc|may have|might have|must have|"
                    # "looks like we used …", "I'm fairly sure …", "as far as I know …": what it seems, not what was seen
                    r"(?:fairly|quite|reasonably|almost|nearly|mostly) (?:sure|certain)|(?:looks|looked|seems|seemed|"
                    r"sounds|appears) (?:like|as if|as though)|(?:it )?(?:seems|seemed|appears|appeared)(?: that)?(?= (?:i|we|they|\d))|"
                    r"unless im (?:wrong|mistaken)|if im not (?:wrong|mistaken)|correct me if|as far as (?:i|we) (?:know|can tell|remember)|"
                    r"to (?:my|our) knowledge|afaik|presumably|i gather)\b")


#: said as a habit, a wish, a doubt, a request to be told or a plan, not as a change that happened
#: a bare "we use 6 M8 bolts" is left to log: speech recognition drops the "d" of "we used" (the
#: site sessions' recordings are transcribed so), so only a habit word makes it a habit
_NOT_DONE = re.compile(r"\b(?:we|i|they|you) (?:usually|normally|always|often|typically|generally|mostly) "
                       r"(?:use|take|go through|receive)\b|\bused to (?:use|take|need|get|receive|have)\b|"
                       r"\b(?:i|we) wish\b|\bif only\b|\bi doubt\b|\bwhether\b|\btell me if\b|\blets\b|\blet us\b|"
                       r"\b(?:delivery|shipment|order|parcel|package|consignment)\b.*\b(?:late|delayed|overdue|missing|"
                       r"expected|due|pending|on (?:its|the) way|not (?:here|arrived|come|in)|hasnt|has not|didnt|did not|"
                       r"never)\b")
#: stock sent back to whoever supplied it leaves the store: "returned" alone reads as stock coming back
_BACK_TO_SUPPLIER = re.compile(r"\b(?:returned|return|returning|sent back|send back|shipped back|took back)\b.*"
                               r"\b(?:to|for) (?:the |our |a )?(?:supplier|vendor|manufacturer|seller|wholesaler|"
                               r"distributor|shop|store|dealer|factory)s?\b")


#: words that make the number no plain count of this change: a share ("a third of"), people ("3 of us"),
#: per person ("each"), an approximation ("almost 3"), "instead of", the stock's end ("the last 3") or
#: a total that may hold changes already logged ("in total", "so far")
_NOT_PLAIN = (("not_count", re.compile(r"\b(?:a|one|two|three|\d+) (?:third|quarter|fifth|tenth)s? of\b(?! an?\b)|"
                                       # "three quarters of a litre" is an amount; "a litre and a half of" one too
                                       r"(?<!\band a )(?<!\band one )\bhalf of\b|"
                                       r"\ba \d+ of\b(?! an?\b)|"  # "a third of" as normalized ("a 3 of")
                                       r"\b(?:\d+|all|each|both|some|two|three|four|five) of us\b|\b(?:each|apiece)\b|"
                                       r"\bper (?:person|head)\b")),
              ("hedge", re.compile(r"\b(?:almost|nearly|roughly|approximately|about|around|close to|just under|just over|"
                                   r"or so|give or take|at least|at most|more or less|or more|or less)\b")),
              ("correction", re.compile(r"\binstead of\b|\brather than\b")),
              ("last", re.compile(r"\bthe (?:last|final|remaining) \d+\b")),
              ("total", re.compile(r"\b(?:in total|total|altogether|all together|in all|so far|all day|all week)\b")))


#: what is there, not what changed ("there are 40 fuses", "we've got 40 fuses", "40 fuses left"): a count
#: or a question, never a receipt; "we got 40 fuses" (past) and "we have used 3" are changes
_CHANGE_AFTER = r"(?!\s+(?:been |just |already |now |also )*(?:used|taken|took|received|had|got|gotten|given|brought|" \
                r"moved|put|added|logged|returned|booked|signed|handed|grabbed|pulled)\b)"
_STATE = re.compile(r"\b(?:there (?:are|is|were|re|s)|theres|therere|theyre|(?:we|i) (?:still |only )*(?:have|ve)(?: got)?|"
                    r"weve(?: got)?|ive(?: got)?|(?:we|i) still got|"
                    r"(?:we|i) (?:can )?(?:see|count))\b" + _CHANGE_AFTER +
                    r"|\b\d+(?:\.\d+)? (?:\w+ ){0,4}?(?:left|remaining|in stock|on hand|still there)\b"
                    r"|\b\d+(?:\.\d+)? (?:\w+ ){0,4}?(?:are|is|sit|sitting) (?:still |just )?(?:on|in|at|there|sitting|"
                    r"lying|here)\b|\b(?:bin|shelf|drawer|rack|box|cupboard|it|that) (?:\w+ )?(?:has|holds|contains) \d")
#: a change verb said beside the words of a state ("we used 3 fuses, 40 left" is a change and a state)
_CHANGE_VERB = re.compile(r"\b(?:used|took|taken|received|got in|came in|arrived|delivered|grabbed|gave out|handed out|"
                          r"logged)\b")


def state_said(norm: str) -> str | None:
    """The words that say what is there rather than a change ("there are 40 fuses", "we've got 40
    fuses", "40 fuses left"), when no change verb is said beside them, else None. English, normalized."""
    m = _STATE.search(norm)
    return m.group(0) if m and not _CHANGE_VERB.search(norm) else None


#: a change said in the present tense ("we use 3 fuses"): a habit or what happened? Speech recognition
#: drops the "d" of "we used" (the site recordings are transcribed so), so heard speech logs as before;
#: typed, it is read back (:func:`present_tense`)
_PRESENT = re.compile(r"\b(?:we|i|they) (?:just |also |then )?(?:use|take|receive|grab|get)\b(?! to\b)")


def present_tense(norm: str) -> str | None:
    """The words of a change said in the present tense ("we use", "I take"), or None. English, normalized."""
    m = _PRESENT.search(norm)
    return m.group(0) if m else None


def not_plain(norm: str) -> tuple[str, str] | None:
    """``(kind, words)`` when a word makes the number no plain count of one change (see
    :data:`_NOT_PLAIN`), else None. English, normalized text (numbers as digits)."""
    for kind, pattern in _NOT_PLAIN:
        m = pattern.search(norm)
        if m:
            return kind, m.group(0)
    return None


def not_done(norm: str) -> tuple[str, str] | None:
    """A change said as a habit, wish, doubt or one still to come ("we use 3 fuses", "we used to
    use", "I wish we had used", "the delivery of 10 fuses is late"): ``("not_done", words)``; stock
    returned to a supplier (the parse reads "returned" as in): ``("direction_back", words)``; else None."""
    m = _BACK_TO_SUPPLIER.search(norm)
    if m:
        return "direction_back", m.group(0)
    m = _NOT_DONE.search(norm)
    return ("not_done", m.group(0)) if m else None


def hedge(norm: str) -> str | None:
    """The words of a hedge on the change itself, or None."""
    m = _HEDGE.search(norm)
    return m.group(0) if m else None


def past_time(norm: str) -> str | None:
    """The words of a past time in the normalized text, or None."""
    m = _PAST.search(norm)
    return m.group(0) if m else None


def not_count(raw: str, norm: str, tokens: tuple[str, ...], quantities: set[float],
              names: Iterable[str], labels: bool = True) -> str | None:
    """The words that make the understood count (one of ``quantities``) no count: a share, an
    ordinal, a label (see module doc); ``names``: the understood item's names and aliases;
    ``labels``: look for "fuse 3" (a log; a stock count says "degreaser 22 litres"). None when the
    count stands as a count."""
    m = _SHARE.search(norm) or _SHARE_RAW.search(raw)
    if m:
        return m.group(0)
    for m in _ORDINAL_RAW.finditer(raw):
        word = m.group(0).lower()
        value = _ORDINAL_VALUE.get(word) or int(re.match(r"\d+", word).group(0))
        if float(value) in quantities:
            return m.group(0)
    for m in _LABEL.finditer(norm):
        if (m.group(1) or "").strip() not in _PLACE_WORDS and float(m.group(2)) in quantities:
            return m.group(0).strip()
    m = _LABEL_RAW.search(raw)
    if m and float(m.group(1)) in quantities:
        return m.group(0)
    words = {w for n in names for w in re.findall(r"[a-z0-9]+", n.lower())} if labels else set()
    for i, t in enumerate(tokens[1:], 1):
        prev = tokens[i - 1]
        if (re.fullmatch(_NUM, t) and float(t) in quantities and float(t) != 1 and prev in words
                and not prev.endswith("s") and prev not in _NOT_A_NAME and prev.isalpha()
                and prev not in _SIZE_FAMILY and prev not in _MEASURES
                and not (i + 1 < len(tokens) and (tokens[i + 1] in _SIZE_FAMILY.keys() | _MEASURES
                                                  or re.fullmatch(_NUM, tokens[i + 1])))
                and not any(re.fullmatch(_NUM, x) and float(x) in quantities for x in tokens[:i - 1])):
            return f"{prev} {t}"  # "fuse 3": the singular name and a number is a label; "fuses 3" is left alone
    return None


def someone_else(raw: str, norm: str) -> str | None:
    """Another person's change said with the speaker's, or in a clause about the item (see module
    doc): the words, or None. A sentence that is all about another person ("Dave used 3 fuses") is
    the hearsay guard's."""
    m = _RELATIVE.search(norm)
    if m and m.group(1) not in ("i", "we"):
        return m.group(0)
    subjects = [s.group(1) for s in _SUBJECT_VERB.finditer(norm)]
    # "he", "John", "the apprentice": whoever is not the speaker nor a word that only joins or times the verb
    third = [s for s in subjects if re.fullmatch(_THIRD, s) or s not in _NOT_ANOTHER]
    named = [n.group(0) for n in _NAME_RAW.finditer(raw)]
    if (third or named) and len(subjects) >= 2:
        return named[0] if named else next(m.group(0) for m in _SUBJECT_VERB.finditer(norm) if m.group(1) in third)
    return None


def sizes_said(tokens: tuple[str, ...]) -> list[tuple[float, str, str]]:
    """The sizes in normalized tokens: ``(value, family, words)`` for "10 amp", "10a", "6 mm"; a
    lone "a" after a number ("3 a day") is left out."""
    out = []
    for i, t in enumerate(tokens):
        g = _GLUED_SIZE.match(t)
        if g:
            out.append((float(g.group(1)), _SIZE_FAMILY[g.group(2)], t))
        elif re.fullmatch(_NUM, t) and i + 1 < len(tokens) and tokens[i + 1] in _SIZE_FAMILY and len(tokens[i + 1]) > 1:
            # a lone letter after a number is no size here ("3 a day", "33 v belts"): glued ("10a") or spelled only
            out.append((float(t), _SIZE_FAMILY[tokens[i + 1]], f"{t} {tokens[i + 1]}"))
    return out


def size_not_had(tokens: tuple[str, ...], names_tokens: list[tuple[str, ...]], count: str | None = None) -> str | None:
    """A size said (:func:`sizes_said`) that none of the item's names (normalized tokens, one tuple
    a name) carries: the words, or None. ``count``: the words of a count said in a smaller unit
    ("200 cm", converted to the item's metres), which are no size."""
    had = set()
    for toks in names_tokens:
        for value, family, _ in sizes_said(toks):
            had.add((value, family))
        for i, t in enumerate(toks):  # "fuse 10 a": the "a" of a name is a size there
            if re.fullmatch(_NUM, t) and i + 1 < len(toks) and toks[i + 1] == "a":
                had.add((float(t), "a"))
    for value, family, words in sizes_said(tokens):
        if (value, family) not in had and words != count and not (family == "cm" and (value * 10, "mm") in had):
            return words
    return None


_THREAD_LENGTH = re.compile(r"(?<![A-Za-z\d])[Mm]\s?(\d+)\s*(?:[xX×*-]|by)\s*(\d+)(?![\d.])")
_GARMENT = {"small": "s", "medium": "m", "large": "l", "x-large": "xl", "xlarge": "xl"}
_GARMENT_CODES = frozenset({"s", "m", "l", "xl"})
_THREAD = re.compile(r"(?<![A-Za-z\d])[Mm]\s?(\d+(?:\.\d+)?)(?![\d.])")


def thread_not_had(raw: str, names: list[str], sku: str | None) -> str | None:
    """A metric thread said ("M10", "m6") that the item's names and SKU do not carry when they carry
    another ("M8 bolt", "WSH-M8"): the words, or None. English or Mandarin (``用了三个M10螺栓``)."""
    had = {float(m.group(1)) for n in [*names, sku or ""] for m in _THREAD.finditer(n)}
    for m in _THREAD.finditer(raw or "") if had else ():
        if float(m.group(1)) not in had:
            return m.group(0)
    # "M8 x 40" of "BLT-M8-30": the length said is not the item's
    lengths = {float(m.group(2)) for n in [*names, sku or ""] for m in _THREAD_LENGTH.finditer(n)}
    for m in _THREAD_LENGTH.finditer(raw or "") if lengths else ():
        if float(m.group(2)) not in lengths:
            return m.group(0)
    return _garment_not_had(raw, names, sku)


def _garment_not_had(raw: str, names: list[str], sku: str | None) -> str | None:
    """A garment size said ("small gloves") that the item's names or SKU ending ("GLV-NIT-L") contradict."""
    had = {_GARMENT[w] for n in names for w in re.findall(r"[a-z-]+", re.sub(r"\b(?:extra|x)[\s-]+large\b", "x-large", n.lower()))
           if w in _GARMENT}
    end = (sku or "").rsplit("-", 1)[-1].lower() if sku and "-" in sku else ""
    if end in _GARMENT_CODES:
        had.add(end)
    if not had:
        return None
    said = re.sub(r"\b(?:extra|x)[\s-]+large\b", "x-large", (raw or "").lower())
    for w in re.findall(r"[a-z-]+", said):
        if w in _GARMENT and _GARMENT[w] not in had:
            return w
    return None


# -- Mandarin ------------------------------------------------------------------------------------

_SIZE_ZH = re.compile(r"(\d+(?:\.\d+)?)\s*(毫米|厘米|公分|mm|cm|安培?|伏|瓦|寸|英寸)")
#: an ordinal, a share or a label (第三个, 百分之三十, 三号保险丝; 三号箱 is a place)
_ORDINAL_ZH = re.compile(r"第\s*\d+|百分之\s*\d+|\d+\s*%|\d+\s*成|\d+号(?!\s*(?:料箱|箱子|箱|抽屉|货架|架子|架))")
_HEDGE_ZH = re.compile(r"可能|大概|也许|或许|好像|似乎|估计|差不多|大约|左右|应该|说不定|\d+来[个盒箱包只]|\d+多[个盒箱包只]|"
                       r"\d+[个盒箱包只]多|几|吧[。！!？?\s]*$")
#: taken with "back" (拿了三个保险丝回来: fetched from the store, or brought back to it?): in or out is not said
_TOOK_BACK_ZH = re.compile(r"(?:拿|领|取|带|搬)[^，,。]{0,8}?回(?:来|去)?")
#: a noun glued after an item's name that makes it another thing (保险丝盒 a fuse box, 钻头套 a drill bit case)
_OTHER_THING_ZH = re.compile(r"子?(?:[盒箱座架套夹枪钳器机孔管袋壳柜板罩盖扣钉线槽]|带(?![走回来去上过到着]))(?![\u4e00-\u9fff]*号)")
_COUNT_BEFORE_ZH = re.compile(rf"\d+\s*[{MEASURE_WORDS}]?$")
#: borrowed or lent (借了, 借给, 借用, 借来, 外借): the stock will come back or was never ours
_LOAN_ZH = re.compile(r"(?<!凭)借(?!口|助|鉴)(?:了|给|用|来|到|走|出|入|进)?")
#: someone else's stock: a person's (老李的, 小王的, 他的, 别人的) or another site's (二号站的, 隔壁车间的)
_OWNER_ZH = re.compile(r"(?:[老小](?![旧的式款型号])[\u4e00-\u9fff]|(?:[^\W\d_了的用拿领取收借给从在把向跟和])?师傅|他|她|他们|"
                       r"她们|别人|人家|其他人|别的人|"
                       r"同事|班长|组长|主任|经理|领导|隔壁[\u4e00-\u9fff]{0,3}|"
                       r"(?:\d+号|[^\W\d_了的用拿领取收借给从在把向跟和]{1,3})(?:车间|站|工位|班组|部门|公司|产线|线))的")
#: a receipt by another party (客户收到, 供应商收到, 隔壁车间收到, 他们那边收到): their stock came in, not ours
_THEY_RECEIVED_ZH = re.compile(r"(?P<who>客户|顾客|对方|供应商|厂家|厂商|商家|别人|人家|甲方|乙方|工地|隔壁[\u4e00-\u9fff]{0,3}?|"
                               r"(?:[他她]们?|[\u4e00-\u9fff]{1,3}?)(?:那边|那儿|那里|那))"
                               r"(?:已经|也|都|刚刚?|才)?(?:收到|签收|拿到|领到|到货)")
#: all but the count (除了三个都用了, 三个以外全用了), or what is left or kept said as the count (用了保险丝，只剩三个;
#: 留下三个)
_EXCEPT_ZH = re.compile(r"(?<!删)除(?:了|去|开)?|以外|之外|其余|其他的?都|别的都|剩下的都")
_LEFT_ZH = re.compile(rf"(?:还|只|就)?[剩留](?:下|了)*\d+[{MEASURE_WORDS}]?")
#: a correction marker the guards did not resolve (no number after it: the item was corrected)
_CORRECTION_ZH = re.compile(rf"(?:不是|不对|说错了|我是说|哦不|更正)(?![，,。\s]*(?:是|应该是)?\d+\s*[{MEASURE_WORDS}]?\s*[。！!]?\s*$)")
#: a past day or days: 昨天, 昨晚, 上(个)礼拜, 两天前, 一周前, a weekday (周一, 礼拜五), 周末, 那天, 上回, 这两天;
#: 今天, 上午, 刚才 are now
_PAST_ZH = re.compile(r"昨天|昨晚|昨夜|昨儿|前天|前晚|上个?周|上个?星期|上个?礼拜|上个?月|去年|前年|月初|"
                      r"(?:[\d一两几]+|好几|半)(?:天|周|个?星期|个?礼拜|个?月|年)(?:以前|之前|前)|前[两几]天|前些天|早些天|"
                      r"前一天|头天|那天|那一天|上回|上次|(?:周|星期|礼拜)[一二三四五六日天1-6]|周末|这[两几些]天|(?:最近|近)[两几]天")
#: a second item after "and" without its own count: "三个保险丝和垫圈"
_JOIN_ZH = re.compile(rf"\d+\s*[{MEASURE_WORDS}]?[^\d，,。和跟及]+(?:和|跟|以及|还有|及)(?!\s*\d+\s*[{MEASURE_WORDS}])"
                      rf"(?!\s*\d+\s*$)([^，,。]{{2,}})")
#: sent back to the supplier (退回, 退给, 退还): out of the store, never a receipt; taken from a person
#: (从小王那拿了): whose stock is not said
_BACK_ZH = re.compile(r"退回|退给|退还|退货|还给(?:供应商|厂家|厂商|商家)|从[^\d，,。]{1,4}那(?:里|儿|边)?(?:拿|领|取)")
_TOTAL_ZH = ("总共", "一共", "总计", "合计", "累计", "加起来")
#: a share (三分之一), people (我们三个人, 每人), a count for each of several (每台机器, 每个工位, 每箱: times how
#: many?), or a total that may hold changes already logged (总共)
_NOT_PLAIN_ZH = re.compile(r"分之|\d+个人|每人|每个人|人均|各|"
                           r"每(?:个(?!月)|[台辆箱盒包袋根条只件套张把部位处家组批层间排片块线])|" + "|".join(_TOTAL_ZH))
_HABIT_ZH = re.compile(r"每天|每周|每星期|每个?月|每次|每班|经常|平时|总是|一般|天天|通常")
_FUTURE_ZH = re.compile(r"明天|后天|下周|下星期|下个?月|将要|打算|准备|计划|要用|会用|要拿|要领|待会|等会|一会儿")
_STOCK_VERB_ZH = re.compile(r"用|拿|领|取|收|入库|出库|消耗|补")
#: 点了三个 said without a stock verb: counted, or ordered?
_COUNTED_OR_ORDERED_ZH = re.compile(r"(?<![\d零一二两三四五六七八九十])点了(?=\d)")


def hedge_zh(norm: str) -> str | None:
    """The words of a Mandarin hedge (大概, 可能, 差不多 …) in ``norm``, or None."""
    m = _HEDGE_ZH.search(norm)
    return m.group(0) if m else None


def _first_found(norm: str, checks) -> tuple[str, str] | None:
    """``(kind, words)`` of the first of ``checks`` (``(kind, pattern)`` pairs, in order) found in
    ``norm``, or None."""
    for kind, pattern in checks:
        m = pattern.search(norm)
        if m:
            return kind, m.group(0)
    return None


def zh_leftover(norm: str, joined: bool) -> tuple[str, str] | None:
    """A Mandarin word the log's parse leaves unexplained (see module doc) in ``norm`` (numerals as
    digits): ``(kind, words)`` or None. ``joined``: the parse already holds several parts (each
    with its count), so "和" is explained."""
    got = _first_found(norm, (("size", _SIZE_ZH), ("direction_back", _BACK_ZH), ("back", _TOOK_BACK_ZH)))
    if got:
        return got
    m = _NOT_PLAIN_ZH.search(norm)
    if m:
        return ("total" if m.group(0) in _TOTAL_ZH else "not_plain"), m.group(0)
    return _first_found(norm, (("not_count", _ORDINAL_ZH), ("hedge", _HEDGE_ZH), ("correction", _CORRECTION_ZH),
                               ("time", _PAST_ZH), *(() if joined else (("other_item", _JOIN_ZH),))))


def _chinese(names: Iterable[str]) -> list[str]:
    """The Chinese ones of an item's ``names``, lowercased, longest first."""
    return sorted((n.lower() for n in names if n and re.search(r"[\u4e00-\u9fff]", n)), key=len, reverse=True)


def other_thing_zh(norm: str, names: Iterable[str]) -> str | None:
    """The words when one of the item's Chinese ``names`` is said glued to a noun that makes it
    another thing (``用了三个保险丝盒``: fuse boxes, not fuses) right after the count or with the name
    said nowhere on its own, else None (``用了保险丝盒里的三个保险丝`` is the fuses). ``norm``: the
    Mandarin text, numerals as digits."""
    glued, alone = None, False
    text = norm.lower()
    for name in _chinese(names):
        for m in re.finditer(re.escape(name), text):
            after = _OTHER_THING_ZH.match(text, m.end())
            if after is None:
                alone = True
            elif _COUNT_BEFORE_ZH.search(text, 0, m.start()):  # "3个保险丝盒里的保险丝": 3 boxes
                return norm[m.start():after.end()]
            else:
                glued = glued or norm[m.start():after.end()]
    return None if alone else glued


#: a count, its measure word and the words between it and the item's name (三盒乳胶手套: 乳胶)
_COUNT_THEN_WORDS_ZH = re.compile(rf"\d+\s*[{MEASURE_WORDS.replace('号', '').replace('次', '')}]"
                                  r"(?P<words>[^\d，,。、；;！!？?\s|]{1,8})$")
#: a bound, a hedge or a half said after the count (三十个左右的, 三十来个, 一盒半): the guards' words, no kind
_BOUND_AFTER_ZH = re.compile(r"^(?:左右|上下|以上|以下|以内|之内|出头|开外|朝上|往上|不到|不止|不够|不足|打底|好几|多|来|几|半)")
#: words before an item's name that leave it the same thing (新, 旧, 坏, 这种, 备用, 刚到的 …)
_SAME_KIND_ZH = re.compile("(?:%s)的?" % "|".join(sorted(  # longest first: 新到 before 新
    "新 旧 坏 好 坏掉 用过 多余 剩下 剩余 备用 同样 一样 同款 这种 那种 这些 那些 这批 那批 这个 那个 这 那 常用 普通 平常 原来 之前 "
    "刚到 新到 仓库 库里 库房".split(), key=len, reverse=True)))


def kind_not_had_zh(norm: str, names: Iterable[str]) -> str | None:
    """The words when the count is followed by a word that makes the item's Chinese name another
    kind of it (三盒乳胶手套 of nitrile gloves, 三个弹簧垫圈, 三盒M号手套): the word and the name as said,
    else None (三个新钻头, 三个这种钻头, 三个M8螺栓 of the M8 bolt are the item). ``names``: the item's
    names and aliases; its Chinese names and their heads (手套 of 丁腈手套) are looked for, longest first."""
    text = norm.lower()
    chinese = _chinese(names)
    latin = {w for n in names for w in re.findall(r"[a-z][a-z0-9]*", n.lower())}
    heads = {re.sub(r"^[a-z0-9.]+", "", n) for n in chinese} | {n[-2:] for n in chinese if len(n) >= 4}
    for name in sorted(set(chinese) | {h for h in heads if len(h) >= 2}, key=len, reverse=True):
        for m in re.finditer(re.escape(name), text):
            said = _COUNT_THEN_WORDS_ZH.search(text, 0, m.start())
            if said is None or said.group("words").startswith("号"):  # 3个30号箱的保险丝: a place
                continue
            words = _BOUND_AFTER_ZH.sub("", said.group("words"))  # 三十个左右的保险丝: the guards' bound
            rest = _SAME_KIND_ZH.sub("", re.sub("|".join(sorted(latin, key=len, reverse=True)) or "$^", "", words))
            if rest.strip("的"):
                return norm[said.start("words"):m.end()]
        if name in text:
            return None  # the longest name said decides
    return None


def not_ours_zh(norm: str, names: Iterable[str] = ()) -> tuple[str, str] | None:
    """``(kind, words)`` when a Mandarin change (``norm``: numerals as digits) is borrowed or lent
    (``loan``), someone else's stock (``someones``: ``老李的`` before the count or one of the item's
    ``names``; ``给老李的车用了`` is whom it was for), all but the count (``not_plain``) or what is
    left (``state``): never a change of this stock as counted; else None."""
    m = _LOAN_ZH.search(norm)
    if m:
        return "loan", m.group(0)
    m = _THEY_RECEIVED_ZH.search(norm)
    # 从老王那收到: received from him, into this stock; 我们那边收到: ours
    if m and "从" not in norm[:m.end()] and not m.group("who").startswith(("我", "咱")):
        return "someones", m.group(0)
    said = _chinese(names)
    for m in _OWNER_ZH.finditer(norm):
        after = norm[m.end():].lower()
        if re.match(r"\d", after) or any(after.startswith(n) for n in said):
            return "someones", m.group(0)
    return _first_found(norm, (("not_plain", _EXCEPT_ZH), ("state", _LEFT_ZH)))


def zh_not_a_change(norm: str) -> tuple[str, str] | None:
    """Why a Mandarin sentence with a count that no parse took is no change that happened: ``(kind,
    words)`` with kind ``count_what`` (点了三个: counted or ordered?), one of :func:`not_ours_zh`
    (借给二号站三个, 除了三个都用了), ``frequency`` (每天, 经常 …) or ``future`` (明天, 要用 …); else None."""
    if not re.search(r"\d", norm):
        return None
    m = _COUNTED_OR_ORDERED_ZH.search(norm)  # 点了三个保险丝
    if m:
        return "count_what", m.group(0)
    if not (_STOCK_VERB_ZH.search(norm) or _LOAN_ZH.search(norm)):
        return None
    got = not_ours_zh(norm)  # 借给二号站三个保险丝, 除了三个都用了
    if got is not None:
        return got
    return _first_found(norm, (("frequency", _HABIT_ZH), ("future", _FUTURE_ZH)))
