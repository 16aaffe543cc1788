"""Questions about what happened: text → an ``ask_records`` :class:`Intent`, before any stock reading.

A sentence is a records question when it is asked (a question word first, or a ``?``) and either
names a period ("today", "last week", "since Monday", "in November": :func:`edge.stock.periods.find_period`)
or matches a records template (``templates/en_records.yaml``: "when did we last receive gloves",
"which box logged the fuses", "when will we run out of gloves"). A statement with a period ("we used 3
drill bits today") stays a log.

The period words are taken out of the sentence before the templates match (the period is resolved
later, in the box's zone, by :mod:`edge.stock.periods`). The result's ``extra["records"]`` is a
dict with ``kind``, ``what``, ``period`` (the words said, or None), ``mine`` and ``limit``
(:class:`edge.stock.questions.Question`'s fields); ``extra["records"]`` is None for a records question
no template reads: the dialog then says it cannot answer that one (never the current stock).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from edge.stages.nlu.templates import TemplateMatch, records_templates
from edge.stages.nlu.types import Intent, ItemMatch
from edge.stock.periods import FUTURE, MONTHS, WEEKDAYS, find_period

__all__ = ["RecordsParser", "asked", "HISTORY_CUE"]

#: Said as a question: a question word first, or a question mark at the end.
_QUESTION = re.compile(r"^(?:(?:hey|ok|okay|so|and|please|um|uh|er|right|now|quick question|tell me|can you tell me|"
                       r"do you know|any idea|the)\s+)*(?:how|when|whens|what|whats|which|who|whos|why|did|have|has|had|do|does|"
                       r"were|was|is|are|read|list|show|give|any|average|usage|consumption|top|most|days|number|last time|biggest)\b")
#: The words that ask about the past even with no period said ("did we use", "came in", "did we log").
HISTORY_CUE = re.compile(r"\b(?:did|have|has|had) (?:we|i|you|they|anyone|someone|somebody) (?:\w+ ){0,2}?(?:use|used|log|"
                         r"logged|record|recorded|receive|received|count|counted|move|moved|take|took|taken)\b|"
                         r"\bdid (?:we|i|you|they) get\b|"
                         r"\b(?:came|come) in\b|\blast (?:time|used|received|counted|came|logged|moved|delivery|count)\b|"
                         r"\bentries\b|\bwhich box\b")
#: A present-tense stock question with "today" or "now" ("how many gloves do we have today") is about the stock.
_STOCK_NOW = re.compile(r"\b(?:do we have|have we got|are there|is there|are left|is left|left|in stock|on hand)\b")
_YES_NO = re.compile(r"^(?:(?:so|and|um|uh)\s+)*(?:did|have|has|had|were|was|is|are)\b")
_MINE = re.compile(r"\b(?:i|my|this box|this station|this terminal|here|by me)\b")
#: Words of stock and its movements: a question with a period but none of them ("what's the weather
#: like today") is no records question.
_STOCK_WORDS = re.compile(r"\b(?:use|used|using|usage|took|taken|take|receive|received|came|come|arrived|delivered|"
                          r"delivery|deliveries|log|logged|logs|record|recorded|records|entries|entry|move|moved|"
                          r"transfer|transferred|count|counted|stock|booked|issued|consumed|through|in|out|most)\b")


def asked(norm: str, raw: str = "") -> bool:
    """Whether ``norm`` (normal form) is said as a question (``raw``: the transcript, for its ``?``)."""
    return bool(_QUESTION.match(norm)) or (raw or "").strip().endswith(("?", "？"))


class RecordsParser:
    """The English records questions. ``resolve_item``: text → :class:`ItemMatch` (the grammar's
    item resolver, so an item is named the same way as in a command)."""

    def __init__(self, resolve_item: Callable[[str], ItemMatch], places: tuple[str, ...] = ()):
        self.resolve_item = resolve_item
        self.templates = records_templates("en")
        #: the stored places, longest first ("bin 31" before "bin 3"), each with its pattern
        self.places = [(p, re.compile(r"(?:\b(?:from|in|at|out of|inside|of) )?\b" + re.escape(p.casefold()) + r"\b"))
                       for p in sorted(places, key=len, reverse=True)]

    def place(self, norm: str) -> tuple[str | None, str | None, str]:
        """The stored place ``norm`` names and ``norm`` without it; or the place words said that name
        no stored place (``"bin 30"``). ``(stored, unknown, rest)``."""
        for stored, rx in self.places:
            m = rx.search(norm)
            if m:
                keep = " out " if m.group(0).startswith("out of ") else " "  # "came out of bin 3": still out
                return stored, None, " ".join((norm[:m.start()] + keep + norm[m.end():]).split())
        m = _PLACE_SAID.search(norm)
        return None, (m.group(1) if m else None), norm

    def parse(self, norm: str, raw: str = "") -> Intent | None:
        """The ``ask_records`` Intent of ``norm`` (normal form), or None when it is no records
        question (see the module doc). Raises nothing."""
        future = FUTURE.search(norm)
        if future and (asked(norm, raw) or _WH.search(norm)) and not _KIND_CUES[0][1].search(norm) and (
                _STOCK_WORDS.search(norm) or re.search(r"\bneed\b", norm)):
            return self.future(norm, raw, future.group(0))
        location, unknown_place, norm = self.place(norm)
        period = find_period(norm)
        if period in ("today",) and _STOCK_NOW.search(norm) and not HISTORY_CUE.search(norm):
            return None  # "how many gloves do we have left today": the stock now
        rest = " ".join(norm.replace(period, " ").split()) if period else norm
        second, rest = _second_period(period, rest)
        strict = asked(norm, raw) or asked(rest)
        if not strict and not _WH.search(norm):
            return None
        m = self.templates.match(rest) if strict else None
        explain = {"path": "records", "period": period}
        if m is None:
            m = by_cues(rest, period is not None)
            if m is not None and "item" in m.slots and not self._names_item(m.slots["item"]):
                m = None  # cues, but no item of the inventory: not read as a records question
            if m is None:
                if strict and (HISTORY_CUE.search(norm) or (period and _STOCK_WORDS.search(rest))):
                    return self.cannot(raw or norm, period, unknown_place)
                return None
            explain["path"] = "records cues"
        if period is None and m.slots.get("kind") == "total" and _YES_NO.match(norm):
            return None  # "did we use 3 fuses?": the question about the log answers it (the latest record)
        what = m.slots.get("what", "used")
        if unknown_place:
            return Intent("ask_records", source="template", text=raw or norm,
                          extra={"records": None, "place_unknown": unknown_place}, explain=explain)
        limit = _limit(m.slots.get("count"))
        q = {"kind": m.slots.get("kind", "total"), "what": "any" if what == "mine" else what, "period": period,
             "mine": what == "mine" or (m.slots.get("kind") == "entries" and bool(_MINE.search(rest))),
             "limit": limit, "location": location, "listed": m.slots.get("listed") == "yes"}
        base = Intent("ask_records", source="template", text=raw or norm, extra={"records": q},
                      explain={**explain, "template": m.sentence, "file": m.file, "slots": dict(m.slots)})
        if second is not None:  # "on Tuesday and Friday": each period answered
            base = replace(base, extra={**base.extra, "also": [{"records": {**q, "period": second}}]})
        said = _TRAILING.sub("", m.slots.get("item") or "").strip()
        if not said:
            return base
        skus = self._items(said)
        if len(skus) > 1:  # "fuses and drill bits": each item answered, none dropped
            also = [{"sku": sku, "records": a["records"]} for sku in skus for a in [{"records": q}, *base.extra.get("also", [])]]
            return replace(base, sku=skus[0], extra={**base.extra, "also": also[1:]},
                           explain={**base.explain, "item_via": "each of several"})
        hit = self.resolve_item(said)
        return replace(base, sku=hit.sku, candidates=tuple(hit.candidates), unknown=hit.unknown,
                       explain={**base.explain, "item_via": hit.via})

    def _items(self, said: str) -> list[str]:
        """The items of "fuses and drill bits" (each part naming one item, all different), else []."""
        parts = [p for p in re.split(r"\s*(?:,|\band\b|\bor\b|\bplus\b)\s*", said) if p.strip()]
        if len(parts) < 2:
            return []
        skus = [self.resolve_item(p).sku for p in parts]
        return skus if all(skus) and len(set(skus)) == len(skus) else []


    def _names_item(self, text: str) -> bool:
        hit = self.resolve_item(text)
        return bool(hit.sku or hit.candidates)

    def cannot(self, text: str, period: str | None, unknown_place: str | None = None) -> Intent:
        """A records question the box cannot read: ``extra["records"]`` None ("I can't answer that one");
        ``extra["place_unknown"]``: the place words said that name no stored place."""
        extra = {"records": None, **({"place_unknown": unknown_place} if unknown_place else {})}
        return Intent("ask_records", source="template", text=text, extra=extra,
                      explain={"path": "records", "period": period, "template": None})

    def future(self, norm: str, raw: str, words: str) -> Intent:
        """A question about a time to come ("how many fuses will we use next week"): ``extra["future"]``,
        the item when one is named (the reply may offer the estimate from the past rate)."""
        rest = " ".join(_NOT_ITEM.sub(" ", FUTURE.sub(" ", norm)).split())
        for rx in _WHAT_CUES.values():
            rest = rx.sub(" ", rest)
        rest = " ".join(re.sub(r"\b(?:need|needs|next|coming|will)\b", " ", rest).split())
        hit = self.resolve_item(rest) if rest else None
        return Intent("ask_records", sku=hit.sku if hit is not None else None, source="template", text=raw or norm,
                      extra={"records": None, "future": True},
                      explain={"path": "records", "period": words, "template": "(the future)"})

    def timed(self, norm: str) -> bool:
        """Whether ``norm`` names a period that is not "today" with the stock now ("how many do we have
        today"): a stock question over a time is a records question, never the current stock."""
        period = find_period(norm)
        return period is not None and not (period == "today" and _STOCK_NOW.search(norm))


#: a question word anywhere ("drill bits used last week, how many"): a records reading is tried, but a
#: sentence no template or cue reads stays with the other paths (it may be a command)
_WH = re.compile(r"\b(?:when|how many|how much|which|what number|number of)\b")
#: place words with a number or letter ("from bin 30"): a place, stored or not
_PLACE_SAID = re.compile(r"\b(?:from|in|at|out of|inside) ((?:bin|drawer|shelf|rack|cabinet|locker) [a-z]?\d+[a-z]?|"
                         r"(?:shelf|rack) [a-z])\b")
#: words after an item that name no item ("the fuses most recently", "gloves please")
_TRAILING = re.compile(r"(?:\s+(?:most recently|most recent|recently|latest|last|please|again|so far|then|there))+$")


_WHAT_CUES = {
    "received": re.compile(r"\b(?:came in|come in|coming in|arrived|arrive|arriving|delivered|delivery|deliveries|"
                           r"received|receive|got in|get in|booked in|restocked|turned up|showed up)\b"),
    "moved": re.compile(r"\b(?:moved|move|transferred|transfer|transfers|shifted|relocated)\b"),
    "counted": re.compile(r"\b(?:counted|count|counts|recount|recounted|stocktake|stock take)\b"),
    "used": re.compile(r"\b(?:use|used|using|usage|took|taken|take|go through|went through|gone through|get through|"
                       r"got through|consumed|consumption|issued|burned|burnt|burn|booked out|signed out|used up|"
                       r"went out|gone out|go out|came out|come out|taken out|took out)\b"),
}
_KIND_CUES = (
    ("rate", re.compile(r"\b(?:run out|running out|runs out|how long|per day|a day|each day|per week|a week|each week|"
                        r"average|daily|weekly|rate|last us)\b")),
    ("who", re.compile(r"\b(?:which|what) (?:box|station|terminal|device)\b|\bwho\b")),
    ("last", re.compile(r"\bwhen\b.*\blast\b|\blast time\b|\bmost recent(?:ly)?\b|\blatest\b")),
    ("top", re.compile(r"\b(?:most|top|biggest|highest)\b")),
    ("change", re.compile(r"\b(?:change|changed|go down|went down|gone down|go up|went up|gone up|dropped|drop|fell|rose|"
                          r"difference)\b")),
    ("entries", re.compile(r"\b(?:entries|records|logs|bookings|logged|log|recorded|entered)\b")),
    ("total", re.compile(r"\bhow (?:many|much)\b|\bnumber of\b|\bwhat number\b|^(?:did|have|has|were|was|any) |"
                         r"\b(?:usage|consumption|use) of\b")),
)
#: Words a cue-read question's item text loses (question words, pronouns, auxiliaries, cues).
_NOT_ITEM = re.compile(
    r"\b(?:how|many|much|when|what|whats|which|who|why|did|do|does|have|has|had|were|was|is|are|will|would|we|i|you|"
    r"they|us|our|the|a|an|any|of|for|on|in|at|by|to|from|up|out|last|time|most|top|so|far|total|altogether|all|"
    r"together|in total|there|been|get|got|all up|else|then|just|actually|again|around|about|exactly|overall|please|"
    r"tell|me|let|know|box|station|stock|level|quantity|team|anyone|someone|somebody|it|that|those|these|them|"
    r"s|re|ve|d|ll|day|week|per|each|average|daily|weekly|rate|long|until|till|before|run|running|runs|"
    r"change|changed|go|went|gone|down|dropped|drop|fell|rose|difference|most|recent|recently|latest|often|crew|shift|"
    r"night|morning|guys|lads|people|staff|workers|everyone|everybody|here|by|between|places|number|um|uh|er|"
    r"which|part|parts|item|items|thing|things|consumption|usage|biggest|tell|say|said|know)\b")


_ALSO_DAY = re.compile(r"\b(?:and|or) (?:on |in )?(" + "|".join((*WEEKDAYS, *MONTHS)) + r")\b")


def _second_period(first: str | None, rest: str) -> tuple[str | None, str]:
    """A second period said after the first ("on tuesday and friday", "today and yesterday"): its
    words and ``rest`` without them; ``(None, rest)`` when there is none."""
    if first is None:
        return None, rest
    m = _ALSO_DAY.search(rest)
    if m:
        w = m.group(1)
        words = f"on {w}" if w in WEEKDAYS else f"in {w}"
    else:
        m = re.search(r"\b(?:and|or) (?:also )?", rest)
        words = find_period(rest[m.end():]) if m else None
        if words is None or not rest[m.end():].startswith(words):
            return None, rest
        m = re.search(r"\b(?:and|or) (?:also )?" + re.escape(words) + r"\b", rest)
    return words, " ".join((rest[:m.start()] + " " + rest[m.end():]).split())


def by_cues(rest: str, has_period: bool) -> TemplateMatch | None:
    """A records question no template lists, read from its cue words: exactly one kind of question
    (:data:`_KIND_CUES`, first that fits) and one kind of movement (:data:`_WHAT_CUES`), the rest as
    the item ("how many drill bits got used up", "any gloves delivered"). None when the cues are
    missing or disagree (then the box says it cannot answer, never guesses)."""
    whats = [w for w, rx in _WHAT_CUES.items() if rx.search(rest)]
    if len(whats) > 1 and "used" in whats and ("counted" in whats or "moved" in whats):
        whats.remove("used")  # "use" inside "how many did we count"
    kinds = [k for k, rx in _KIND_CUES if rx.search(rest)]
    if not kinds:
        return None
    kind = kinds[0]
    if kind in ("who", "entries", "change"):
        what = "any"
    elif len(whats) != 1:
        return None
    else:
        what = whats[0]
    if kind == "total" and not has_period and what == "used" and not re.search(r"\b(?:did|have|has) ", rest):
        return None
    item = rest
    for rx in (*_WHAT_CUES.values(), *(rx for _k, rx in _KIND_CUES)):
        item = rx.sub(" ", item)
    item = " ".join(_NOT_ITEM.sub(" ", item).split())
    slots = {"kind": kind, "what": what}
    if item and kind in ("entries", "top"):
        return None  # "should I log 3 fuses used?": about one item's log, not a list of entries
    if item:
        slots["item"] = item
    elif kind not in ("entries", "top"):
        return None
    return TemplateMatch("ask_records", slots, f"(cues: {kind}, {what})", "")


def _limit(count: str | None) -> int:
    """The N of "the last N entries" (3 when not said; at most 20)."""
    if count and str(count).strip().isdigit():
        return max(1, min(20, int(str(count).strip())))
    return 3
