"""Every word accounted for: a command writes only when its parse explains the whole utterance.

The template path, the paraphrase matcher and the LLM each pick an intent and fill its slots from
some of the words; a word the parse did not use may change what the sentence means. Before a
write (``log_record``, ``transfer``, ``stock_count``) :func:`unexplained` looks for the words no
slot explains and that would change the record:

- ``question``: a question word ("why did we use 3 fuses", "who took …", "how come", "did anyone
  …", a question mark): a question about a change is never the change; ``someone``: "whoever took
  3 fuses should log them" is about another's change;
- ``direction``: a second direction the parse did not give a part ("we used 3 bolts and received
  2 fuses" read as two uses);
- ``frequency``: how often, not how many ("we used fuses three times", "twice", "3 a day");
- ``but``: "but" / "not … but" left after the guards ("we used 3 fuses but 2 came back");
- ``other_item``: a count said before one item and another item joined with "and" that has none
  ("we used 3 nuts and washers 8 mm": whose is the 3?);
- ``negation``: a negation in another clause than the change ("we used 3 drill bits, also we did
  not use the fuses": not one negated command);
- ``back``: a taking verb with "back" ("took 3 fuses back to bin 30", "took them back"): in, out
  or both? asked, never the taking's "out"; ``direction_back``: a receipt read from "got" whose words
  take stock out ("got rid of 3 fuses", "got 3 fuses out of bin 30"), never written as a receipt;
- ``moved``: a moving verb in a use or receipt ("move 5 fuses out of bin 30"): a move stays in the store;
- ``state``: what is there, not a change ("there are 40 fuses", "we've got 40", "40 left"): a
  count or a question, never a receipt;
- ``size``: the only number said is a size ("we used 6 mm drill bits"): no count (the dialog asks
  how many).
- ``someones``, ``loan``, ``swap``, ``place``: stock that is not the store's as said ("Bob's 3 fuses",
  "we borrowed 3 fuses", "swapped 3 fuses for washers", "3 fuses from the van":
  :mod:`edge.stages.nlu.not_ours`).

A unit the item is not counted in ("3 sheets of paper" counted in pallets) is the dialog's check,
where the item's unit is known (:func:`edge.stages.dialog._other_unit`): asked, never converted.

The result is :class:`Unexplained` (the kind and the words), put on the intent as refusal
``unexplained`` with ``extra["unexplained"]``: the dialog writes nothing and says which words it
could not place. English and Mandarin (question words, 次 for how often, both directions, a negation
in another clause, more counts said than parsed).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from edge.stages.nlu.filler import has_cjk, strip_leading_fillers
from edge.stages.nlu.leftovers import (
    hedge,
    not_count,
    not_done,
    not_plain,
    past_time,
    size_not_had,
    someone_else,
    state_said,
    thread_not_had,
    zh_leftover,
)
from edge.stages.nlu.lexicon import IN_WORDS, LOCATION_WORDS, LOG_WORDS, OUT_WORDS, normalize_text
from edge.stages.nlu.not_ours import not_ours
from edge.stages.nlu.not_stock import not_stock, not_stock_zh
from edge.stages.nlu.numbers_zh import MEASURE_WORDS, normalize_numbers_zh
from edge.stages.nlu.types import Intent
from edge.stages.nlu.zh import OUT_VERBS

#: the kinds :func:`unexplained` reports, in the order it checks them
KINDS = ("question", "someone", "time", "not_done", "undo", "equipment", "count_what", "direction_back", "last",
         "total", "not_plain", "someones", "loan", "swap", "place", "state", "back", "moved", "direction", "counts", "frequency", "but",
         "other_item", "negation", "size", "not_count", "hedge", "correction")

_QUESTION = re.compile(r"(?:^|\b(?:and|so|but|ok|okay|hey|then)\s+)(?:why|how come|who|whom|whose|since when|what for|"
                       r"when (?:did|do|does|were|was|have|has|had|will|is|are))\b"
                       r"|\b(?:why|how come|whoever|whichever)\b"
                       r"|\b(?:did|has|have|had|was|were)\s+(?:anyone|anybody|someone|somebody|any of you|you)\b"
                       r"|\b(?:who|whom|whose)\s+(?:\w+\s+)?(?:used|took|take|taken|received|got|logged|moved|"
                       r"counted|gave|had|has|needed|wanted)\b"
                       # a question tag after the change ("we used 3 fuses, did we", "… is that right"): asked, not said
                       r"|(?<!\bthat )\b(?:did|didnt|do|dont|have|havent|had|hadnt|were|werent|was|wasnt|is|isnt|are|arent) "
                       r"(?:we|i|they|it|you|he|she|that|there)(?: not)?(?: (?:right|correct|so|ok|okay))?$"
                       r"|\b(?:am i right|right or wrong|or what)$")
_QUESTION_RAW = re.compile(r"\?\s*$")
#: a request said as a question is the command ("can you log 3 fuses used?")
_REQUEST = re.compile(r"^\W*(?:please\W+)?(?:(?:can|could|would|will)\W+(?:you|u)\b|(?:can|could|may)\W+(?:i|we)\b)",
                      re.IGNORECASE)
_FREQUENCY = re.compile(r"\b(?:\d+|several|many|a few|few|multiple|a couple of|couple of|a number of) times\b|"
                        r"\b(?:twice|thrice|once)\b(?! (?:more|again)\b)|"
                        r"\b(?:each|every|per) (?:time|day|week|month|shift|job|hour|morning|night|visit|run)\b|"
                        r"\bper (?!cent\b)[a-z]+\b|"  # "3 fuses per machine": a rate
                        # "3 a day"; "for a job" is what it was for
                        r"\b(?:a|an) (?:day|week|month|hour|night)\b"
                        r"|\b(?:daily|weekly|monthly|hourly|nightly)\b")
#: "not 3 but 5" is a correction the guards resolve; any other "but" joins two statements
_BUT = re.compile(r"\bbut\b")
_NOT_BUT = re.compile(r"\bnot (?:\d+(?:\.\d+)?|an?|one) (?:\w+ ){0,3}?but\b")
_NEGATION = re.compile(r"\b(?:not|didnt|dont|doesnt|wasnt|werent|havent|hasnt|hadnt|never|no longer|none of)\b")
#: what splits an utterance into clauses for the negation check
_CLAUSES = re.compile(r"[.;!?]+(?:\s+|$)|,\s*(?:(?:also|and|plus|then)\s+)?|\s+(?:also|and also|and then|as well as|plus)\s+")
#: words that make the number before them a size ("6 mm", "3 amp"); "a", "v", "w", "in" alone are left out
#: ("33 v-belts", "58 in bin 47")
_SIZE_UNITS = ("mm", "cm", "inch", "inches", "amp", "amps", "volt", "volts", "watt", "watts",
               "kw", "mil", "gauge", "bar", "psi", "nm", "ah", "mah", "millimetre", "millimetres", "millimeter",
               "millimeters", "centimetre", "centimetres")
_JOIN = re.compile(r"\b(?:and|plus|as well as|along with|together with)\b")
_COUNT = r"\d+(?:\.\d+)?"
#: Mandarin: a question word (是否, 难道, 怎么, 咋, 哪里, 何时, 干嘛 …), a question said at the end (…吗, …没有, …不,
#: …否, …？); how often (次, 遍)
_QUESTION_ZH = re.compile(r"为什么|为啥|怎么(?!说呢)|谁|什么时候|有没有人|有人.*吗|是否|难道|莫非|咋|哪里|哪儿|何时|干[嘛吗]|凭什么|"
                          r"吗[？?]?\s*$|[？?]\s*$|(?:没有?|不|否)[？?]?\s*$")
_FREQUENCY_ZH = re.compile(r"[0-9一二两三四五六七八九十几]+\s*[次遍回]|每[天周月次]")
#: a count with its measure word ("3个", "2盒"); 次 and 号 are how often and a place
_COUNT_ZH = re.compile(rf"\d+(?:\.\d+)?\s*[{MEASURE_WORDS.replace('次', '').replace('号', '')}]")
#: stock in, without the words that only say "log it" (登记, 记录)
_IN_VERBS_ZH = re.compile(r"收到|到了|到货|进了|进货|入库|补了|补充|补货|加了|添加|增加|加上|放了|放入|放进|新到|归还|还回|"
                          r"退回|送来|送到|添了|买了|采购")
_NEGATION_ZH = re.compile(r"没|不|别|未")
#: what is there ("有40个", "还剩40个", "保险丝有40个"), not a change
_STATE_ZH = re.compile(r"(?<!没)(?:还有|还剩|剩下|剩|现有|共有|有)\s*\d")
#: "还有" before a count: "and also", or what is still there ("用了3个保险丝，还有57个")
_STILL_ZH = re.compile(rf"还有\s*\d+(?:\.\d+)?\s*[{MEASURE_WORDS}]?")
_SIZE_ZH = re.compile(r"(\d+(?:\.\d+)?)\s*(?:毫米|厘米|公分|mm|cm|安培?|伏|瓦|寸|英寸)")
_CLAUSES_ZH = re.compile(r"[，,。；;！!？?、]|\s+|又|还有|另外")


@dataclass(frozen=True)
class Utterance:
    """One utterance, normalized once: ``raw`` as heard, ``norm`` (:func:`normalize_text` after the
    leading fillers are dropped; Mandarin: numerals as digits), ``tokens`` (``norm`` split),
    ``numbers`` (the digit tokens) and ``clauses`` (English: the raw text cut at sentence ends, commas
    and "also"/"and then", each normalized; ``(norm,)`` for one clause)."""

    raw: str
    norm: str
    tokens: tuple[str, ...]
    numbers: tuple[float, ...]
    clauses: tuple[str, ...] = ()

    @classmethod
    def of(cls, text: str) -> Utterance:
        raw = text or ""
        norm = normalize_numbers_zh(raw) if has_cjk(raw) else normalize_text(strip_leading_fillers(raw))
        toks = tuple(norm.split())
        nums = tuple(float(t) for t in toks if re.fullmatch(_COUNT, t))
        parts = [c for c in _CLAUSES.split(raw) if c and c.strip()] if not has_cjk(raw) else [raw]
        clauses = tuple(normalize_text(c) for c in parts) if len(parts) > 1 else (norm,)
        return cls(raw, norm, toks, nums, clauses)


@dataclass(frozen=True)
class Unexplained:
    """What the parse left unexplained: ``kind`` (one of :data:`KINDS`) and the ``words`` as said."""

    kind: str
    words: str


def unexplained(intent: Intent, utt: Utterance, names=None) -> Unexplained | None:
    """The first word of ``utt`` that ``intent`` (a writing intent) does not explain and that would
    change the record (see module doc), or None when the parse accounts for the utterance. A
    non-writing intent, an intent already refused, or one with nothing to write is None.
    ``names(sku)``: the item's names and aliases as normalized token tuples (for a size or a label
    said beside the name), or None when not known. Raises nothing."""
    if intent.intent not in ("log_record", "transfer", "stock_count"):
        return None
    if has_cjk(utt.raw):
        return _thread(intent, utt, names) or _unexplained_zh(intent, utt)
    norm = utt.norm
    m = _QUESTION.search(norm)
    if m or (_QUESTION_RAW.search(utt.raw) and not _REQUEST.match(utt.raw)):
        word = m.group(0).strip() if m else "?"
        return Unexplained("someone" if word in ("whoever", "whichever") else "question", word)
    words = past_time(norm)  # before how often: "a week ago" is when, not "a week"
    if words:
        return Unexplained("time", words)
    words = hedge(norm)
    if words:
        return Unexplained("hedge", words)
    got = not_done(norm) or not_plain(norm) or _not_stock(intent, norm)
    if got is not None:
        return Unexplained(*got)
    if intent.intent == "log_record":
        got = _state(norm) or _took_back(norm) or _got_out(intent, norm) or _moved(norm) \
            or _second_direction(intent, utt) or _not_ours(intent, utt, names)
        if got is not None:
            return got
    m = _FREQUENCY.search(norm)
    if m:
        return Unexplained("frequency", m.group(0))
    if _BUT.search(_NOT_BUT.sub(" ", norm)):
        return Unexplained("but", "but")
    if not intent.parts:
        got = _other_item(norm)
        if got is not None:
            return got
    if intent.refusal == "negated":
        got = _negation_elsewhere(utt)
        if got is not None:
            return got
    return _beside(intent, utt, names)


def _not_stock(intent: Intent, norm: str) -> tuple[str, str] | None:
    """Put into a machine, a count of something else, a try or a test, an undo beside the write
    (:func:`edge.stages.nlu.not_stock.not_stock`); a place understood is a place of the inventory."""
    parts = intent.parts or (intent,)
    place = any(p.location or p.to_location for p in parts) or bool(intent.location)
    return not_stock(norm, place, intent.direction, intent.intent)


def _not_ours(intent: Intent, utt: Utterance, names) -> Unexplained | None:
    """Another's stock, a loan, a swap, or a use taken from a place the store does not keep
    (:func:`edge.stages.nlu.not_ours.not_ours`); a negated log writes nothing and is said as such."""
    if intent.refusal == "negated":
        return None
    parts = intent.parts or (intent,)
    place = any(p.location for p in parts) or bool(intent.location)
    words = frozenset(w for p in parts if p.sku and names for t in names(p.sku) for w in t)
    got = not_ours(utt.raw, utt.norm, intent.direction, place, words | {w.rstrip("s") for w in words})
    return Unexplained(*got) if got else None


def _state(norm: str) -> Unexplained | None:
    """"there are 40 fuses", "we've got 40": what is there, never a receipt (whichever path read it)."""
    words = state_said(norm)
    return Unexplained("state", words) if words else None


#: a taking verb with "back" ("took 3 fuses back to bin 30", "took back 3 fuses from the van", "… and took
#: them back"): back into the stock, out to whoever had them, or both? Never the taking's "out" ("got 2
#: washers back" is stock coming back; "the back of bin 30" is a side of a place)
_TOOK_BACK = re.compile(r"\b(?:took|take|taken|taking|grabbed|carried|carry|brought|bring)\b(?: \w+){0,4}? back\b(?! of\b)")


def _took_back(norm: str) -> Unexplained | None:
    m = _TOOK_BACK.search(norm)
    return Unexplained("back", m.group(0)) if m else None


#: "got" reads as stock in ("we got 40 fuses"), but "got … out", "got rid of", "got … from bin 30 / off the
#: shelf / out of stock" take stock out of the store
_GOT_OUT = re.compile(r"\b(?:got|get|gets|getting|gotten)\b(?: (?!back\b)\S+){0,5}? (?:out\b|rid of\b|shot of\b|"
                      r"(?:from|off|out of) (?:the |our |a |that |this )?(?:bins?|drawers?|shelf|shelves|racks?|"
                      r"cabinets?|cupboards?|lockers?|stock|stocks|stores?|storeroom|stockroom|inventory|warehouse)\b)")


#: a moving verb in what was read as a use or receipt ("move 5 fuses out of bin 30"): stock moved between
#: places stays in the store, so it is never a log; said with its second place it is a move ("… to bin 31")
_MOVED = re.compile(r"\b(?:move|moved|moving|shifted|shifting|relocate|relocated|relocating|transfer|transferred|"
                    r"transferring)\b")


def _moved(norm: str) -> Unexplained | None:
    m = _MOVED.search(norm)
    return Unexplained("moved", m.group(0)) if m else None


def _got_out(intent: Intent, norm: str) -> Unexplained | None:
    """A receipt read from "got" whose words take the stock out ("we got rid of 3 fuses", "got 3 fuses
    out of bin 30"): never written as a receipt."""
    m = _GOT_OUT.search(norm) if intent.direction == "in" or any(p.direction == "in" for p in intent.parts) else None
    return Unexplained("direction_back", m.group(0)) if m else None


def _thread(intent: Intent, utt: Utterance, names) -> Unexplained | None:
    """A thread said that the one item understood does not have (:func:`thread_not_had`)."""
    if intent.parts or not intent.sku or names is None:
        return None
    words = thread_not_had(utt.raw, [" ".join(t) for t in names(intent.sku)], intent.sku)
    return Unexplained("size", words) if words else None


def _beside(intent: Intent, utt: Utterance, names) -> Unexplained | None:
    """A past time, another person's change, a number that is no count, or a size the item does not
    have (:mod:`edge.stages.nlu.leftovers`)."""
    thread = _thread(intent, utt, names)
    if thread is not None:
        return thread
    words = someone_else(utt.raw, utt.norm)
    if words:
        return Unexplained("someone", words)
    parts = intent.parts or (intent,)
    quantities = {float(p.quantity) for p in parts if p.quantity is not None}
    skus = [p.sku for p in parts if p.sku]
    name_toks = [t for s in skus for t in (names(s) if names else ())]
    words = not_count(utt.raw, utt.norm, utt.tokens, quantities, [" ".join(t) for t in name_toks],
                      labels=intent.intent != "stock_count") if quantities else None
    if words:
        return Unexplained("not_count", words)
    # a size said and corrected ("40 mil …, correction, the 20 mil ones") is the guards' business
    corrected = any(str(n).startswith("correction") for n in intent.explain.get("guards", ()))
    if names is not None and skus and len(skus) == len(parts) and not corrected and not size_not_count(intent, utt):
        words = size_not_had(utt.tokens, name_toks, intent.extra.get("converted"))
        if words:
            return Unexplained("size", words)
    return None


def size_not_count(intent: Intent, utt: Utterance) -> bool:
    """True when ``intent``'s count is a number said only as a size ("we used 6 mm drill bits", "3 amp
    fuses", "用了六毫米钻头"): the count was never said. Raises nothing."""
    q = intent.quantity
    if q is None or intent.parts:
        return False
    if has_cjk(utt.raw):
        nums = re.findall(r"\d+(?:\.\d+)?", utt.norm)
        return bool(nums) and len(_SIZE_ZH.findall(utt.norm)) == len(nums) \
            and any(float(n) == float(q) for n in _SIZE_ZH.findall(utt.norm))
    toks = utt.tokens
    said = [i for i, t in enumerate(toks) if re.fullmatch(_COUNT, t) and float(t) == float(q)]
    return bool(said) and all(i + 1 < len(toks) and toks[i + 1] in _SIZE_UNITS for i in said)


def counts_in(utt: Utterance) -> set[float]:
    """The numbers of ``utt`` that may be a count: every number but one said as a size ("6 mm",
    "3 amp"). English; Mandarin text gives every number. Raises nothing."""
    toks = utt.tokens
    return {float(t) for i, t in enumerate(toks) if re.fullmatch(_COUNT, t)
            and not (i + 1 < len(toks) and toks[i + 1] in _SIZE_UNITS)}


#: directions said as phrases: "2 washers came back", "handed out 3 fuses"
_IN_PHRASE = re.compile(r"\b(?:came|come|comes|coming|brought|bring|went|go|goes|gone|sent|given|handed) back\b|"
                        r"\b(?:came|come|comes|coming) in\b|\b(?:turned|turn|showed|show) up\b|\barrived\b")
_OUT_PHRASE = re.compile(r"\b(?:gave|give|given|handed|hand|signed|booked|checked|went|gone|sent) out\b|"
                         r"\b(?:wrote|written|write) off\b|\b(?:went|got|go) through\b")


def _directions(words: set[str], norm: str) -> set[str]:
    said = {d for d, vocab in (("out", OUT_WORDS), ("in", IN_WORDS)) if words & vocab}
    return said | {d for d, phrase in (("out", _OUT_PHRASE), ("in", _IN_PHRASE)) if phrase.search(norm)}


def _second_direction(intent: Intent, utt: Utterance) -> Unexplained | None:
    """Both directions said, but the parse's parts do not carry both."""
    words = set(utt.tokens) - {"get", "got", "put", "putting"}  # "got through", "put aside": no direction alone
    said = _directions(words, utt.norm)
    if len(said) < 2:
        return None
    given = {p.direction for p in intent.parts} if intent.parts else {intent.direction}
    if said <= given:
        return None
    heard = [m.group(0) for p in (_OUT_PHRASE, _IN_PHRASE) for m in p.finditer(utt.norm)]
    return Unexplained("direction", " and ".join(heard + sorted(w for w in utt.tokens if w in IN_WORDS | OUT_WORDS)))


def _other_item(norm: str) -> Unexplained | None:
    """"3 nuts and washers": a count, an item word, "and", more item words and no count after the "and"."""
    for m in _JOIN.finditer(norm):
        before, after = norm[:m.start()].split(), norm[m.end():].split()
        if not before or not after:
            continue
        if not any(re.fullmatch(_COUNT, t) for t in before):
            # "we used fuses and 3 goggles": the one count said is the second item's
            if (re.fullmatch(_COUNT, after[0]) and len(after) > 1 and _wordlike(after[1]) and _wordlike(before[-1])
                    and before[-1] not in IN_WORDS | OUT_WORDS | LOG_WORDS | _AFTER_JOIN_OK):
                return Unexplained("other_item", " ".join([before[-1], m.group(0), *after[:2]]))
            continue
        if after[0] in _POINTERS and len(after) > 1 and _wordlike(after[1]) and before[-1] not in _AFTER_JOIN_OK \
                and after[1] not in _AFTER_JOIN_OK | LOCATION_WORDS | IN_WORDS | OUT_WORDS and _wordlike(before[-1]):
            return Unexplained("other_item", " ".join([before[-1], m.group(0), *after[:2]]))  # "3 fuses and the washers"
        # "3 fuses and 2 …", "… and a box of …": a part with its own count; "… and put them …": one change
        if re.fullmatch(_COUNT, after[0]) or after[0] in _AFTER_JOIN_OK or before[-1] in _AFTER_JOIN_OK:
            continue
        if _wordlike(before[-1]) and _wordlike(after[0]) and before[-1] not in IN_WORDS | OUT_WORDS \
                and after[0] not in IN_WORDS | OUT_WORDS:
            return Unexplained("other_item", " ".join([before[-1], m.group(0), *after[:3]]))
    return None


#: "… and the washers", "… and some washers": a second item pointed at, with no count
_POINTERS = frozenset("the those these some all".split())


def _wordlike(tok: str) -> bool:
    """A word or a code with a letter ("m8"), not a number."""
    return tok.isalnum() and not tok.isdigit() and any(c.isalpha() for c in tok)


#: what may follow "and" in one change: a verb or pronoun, a place, a hesitation, "the rest"
_AFTER_JOIN_OK = frozenset("a an one put putting then that this it its they them we i he she you the those these bin "
                           "shelf drawer rack cabinet cupboard locker half so log logged record recorded thats there "
                           "here now today yesterday also left back again put".split())


def _negation_elsewhere(utt: Utterance) -> Unexplained | None:
    """A negation in one clause and a counted change in another."""
    clauses = utt.clauses
    if len(clauses) < 2:
        return None
    neg = [c for c in clauses if _NEGATION.search(c)]
    plain = [c for c in clauses if not _NEGATION.search(c) and re.search(_COUNT, c)]
    if neg and plain:
        return Unexplained("negation", neg[0].strip())
    return None


def _unexplained_zh(intent: Intent, utt: Utterance) -> Unexplained | None:
    """Mandarin: a question word, how often, a second direction, a negation in another clause, or
    more counts said than the parse holds ("用了2个钻头，又用了2个钻头" read as one use of 2)."""
    m = _QUESTION_ZH.search(utt.raw)
    if m and not re.search(r"(?:能|可以|可不可以|请)(?:帮我|帮忙)?(?:记|登记)", utt.raw):
        # a bare "？" says no word back: the sentence is said back instead
        return Unexplained("question", m.group(0).strip(" ？?") or utt.raw.strip())
    t = utt.norm
    got = not_stock_zh(t, intent.direction, intent.intent)
    if got is not None:
        return Unexplained(*got)
    m = _FREQUENCY_ZH.search(t)
    if m:
        return Unexplained("frequency", m.group(0))
    if intent.intent == "log_record" and _STATE_ZH.search(t) and not (OUT_VERBS.search(t) or _IN_VERBS_ZH.search(t)):
        return Unexplained("state", _STATE_ZH.search(t).group(0))  # "还有40个保险丝": what is there, no receipt
    if intent.intent == "log_record" and OUT_VERBS.search(t) and _IN_VERBS_ZH.search(t):
        given = {p.direction for p in intent.parts} if intent.parts else {intent.direction}
        if not {"in", "out"} <= given:
            return Unexplained("direction", f"{OUT_VERBS.search(t).group(0)}、{_IN_VERBS_ZH.search(t).group(0)}")
    still = _STILL_ZH.search(t)
    if still and intent.parts and len({p.sku for p in intent.parts}) < len(intent.parts):
        return Unexplained("state", still.group(0))  # "用了3个保险丝，还有57个保险丝": what is left, never 3+57
    clauses = [c for c in _CLAUSES_ZH.split(t) if c.strip()]
    if intent.refusal == "negated" and len(clauses) > 1:
        neg = [c for c in clauses if _NEGATION_ZH.search(c)]
        if neg and any(not _NEGATION_ZH.search(c) and _COUNT_ZH.search(c) for c in clauses):
            return Unexplained("negation", neg[0])
    counts = _COUNT_ZH.findall(t)
    corrected = sum(str(n).startswith("correction") for n in intent.explain.get("guards", ()))  # "3个，不对，4个"
    if intent.intent == "log_record" and len(counts) - corrected > max(1, len(intent.parts)):
        return Unexplained("counts", "、".join(counts))
    got = zh_leftover(t, bool(intent.parts))
    if got is not None and not (got[0] == "size" and size_not_count(intent, utt)):
        return Unexplained(*got)
    return None


#: a sentence end; an ellipsis ("we used... let me see... four") is a hesitation, not one
_SENTENCES = re.compile(r"(?<!\.\.)(?<=[.?!])\s+")
#: words that change what came before: a sentence holding one is never set aside
_CHANGES = re.compile(r"\b(?:no|not|nope|wait|sorry|actually|scratch|cancel|forget|mean|meant|make|instead|undo|"
                      r"wrong|didnt|dont|never|rather|correction|oops)\b")


def set_aside(utt: Utterance) -> tuple[str, tuple[str, ...]] | None:
    """An utterance of several sentences where some are questions ("why did we use 3 fuses?") or
    short remarks without a number ("we needed them.") beside the command ("log 3 fuses used"):
    ``(the command's sentences, the sentences set aside)``; None when there is one sentence, when
    nothing is set aside, or when nothing would be left. A sentence that could change the command
    ("no", "wait", "didn't", a number) is never set aside. English only. Raises nothing."""
    if has_cjk(utt.raw):
        return None
    sentences = [s.strip() for s in _SENTENCES.split(utt.raw.strip()) if s.strip()]
    if len(sentences) < 2:
        return None
    keep, aside = [], []
    for s in sentences:
        n = normalize_text(s)
        question = s.endswith("?") or bool(_QUESTION.search(n))
        remark = (not question and not re.search(r"\d", n) and len(n.split()) <= 6
                  and not set(n.split()) & (IN_WORDS | OUT_WORDS | LOG_WORDS))
        # a question after the command doubts it ("… right?"): the whole is asked, never set aside
        if (question and not keep or remark) and not _CHANGES.search(n):
            aside.append(s)
        else:
            keep.append(s)
    if not aside or not keep:
        return None
    return " ".join(keep), tuple(aside)


#: a change taken back as it is said ("… scratch that", "… just kidding"): nothing is written
_TAKEN_BACK = re.compile(r"[\s,.;!-]+(?:(?:oh |no )?(?:scratch|strike|cancel|ignore|disregard) (?:that|it|this)|"
                         r"forget (?:it|that|about it)|never ?mind|(?:i(?:'| a)?m |just |only )?(?:kidding|joking)|"
                         r"not really|april fools?)[\s.!]*$", re.IGNORECASE)
#: the same in Mandarin: "……，算了" (forget it), "……，开玩笑的" (just kidding), "……，当我没说" (I didn't say it)
_TAKEN_BACK_ZH = re.compile(r"[\s，,。；;！!、]*(?:那就?|哦|啊|呃)?(?:算了|开玩笑(?:的|呢|啦)?|开个玩笑|骗你的|逗你(?:的|呢)|"
                            r"当我没说|不算|不作数|别当真|没有的事)[吧啊的呢啦。！!\s]*$")
_INTERJECTION = re.compile(r"\b(?:oh|no|nah|nope|ah|uh|um|er|well|ok|okay|actually|wait|hmm|哦|啊|呃|嗯|那)\b|[哦啊呃嗯那]")
#: courtesy and tags at the end that change nothing ("… right", "… ok", "… please", "… thanks")
_COURTESY = re.compile(r"[\s,.;!-]+(?:right|ok|okay|please|thanks|thank you|cheers|mate|yeah|alright|all right|"
                       r"thx|ta|done|cheers mate|thanks mate)[\s.!]*$", re.IGNORECASE)
#: a reason said after the change ("… because they blew"): no count of its own, set aside
#: "since Monday", "since the 3rd", "since yesterday" name a period, not a reason
_SINCE_TIME = (r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|"
               r"august|september|october|november|december|yesterday|today|this|last|the|\d|then|we (?:last|opened))")
_REASON = re.compile(r"[\s,;-]+(?:because|cause|cos|coz|since(?!\s+" + _SINCE_TIME + r"))\b", re.IGNORECASE)


def taken_back(utt: Utterance) -> str | None:
    """The words that take the whole utterance back when they end it after a change ("we used 3
    fuses, scratch that", "… just kidding", "用了三个保险丝，算了"), or None. Raises nothing."""
    m = (_TAKEN_BACK_ZH if has_cjk(utt.raw) else _TAKEN_BACK).search(utt.raw)
    before = _INTERJECTION.sub(" ", utt.raw[:m.start()].lower()) if m is not None else ""
    if m is None or not re.search(r"\w", before):  # "oh never mind" on its own: cancel words, no change said
        return None
    return m.group(0).strip(" ,.;!-")


def trailing(utt: Utterance) -> tuple[str, tuple[str, ...], str | None] | None:
    """The utterance without what it ends on that changes nothing: courtesy ("… right", "… please":
    dropped) and a reason ("… because they blew": set aside, said back); ``(the command, the reasons
    set aside, a reason that says a count or a change itself or None)``, or None when nothing
    trails. A reason with a count or a direction ("… because 2 blew") may change the count: the
    caller writes nothing and says so. A question mark keeps the whole ("… right?" doubts the
    change). English. Raises nothing."""
    raw = utt.raw.rstrip()
    if has_cjk(raw) or raw.endswith("?"):
        return None
    kept, aside, changes = raw, [], None
    m = _REASON.search(kept)
    if m is not None and kept[m.end():].strip():
        reason = kept[m.start():].strip(" ,;-")
        # the reason's words are the tail of the utterance's normal form (read there, not normalized again;
        # number words only shrink in it, so the tail may take a word more, never fewer)
        said = utt.tokens[-len(kept[m.end():].split()):]
        if any(re.fullmatch(_COUNT, t) for t in said) or set(said) & (IN_WORDS | OUT_WORDS) \
                or _CHANGES.search(" ".join(said)):
            changes = reason
        else:
            aside.append(reason)
        kept = kept[:m.start()]
    while True:
        m = _COURTESY.search(kept)
        if m is None or not re.search(r"\w", kept[:m.start()]):
            break
        kept = kept[:m.start()]
    if kept == raw or not re.search(r"\d|\w", kept):
        return None
    return kept, tuple(aside), changes
