"""The deterministic understanding: text → :class:`Intent` from templates and resolvers, no model.

:meth:`Grammar.parse` (English):

1. Leading hesitations are dropped (:func:`edge.stages.nlu.filler.strip_leading_fillers`); the text
   is put in normal form (:func:`edge.stages.nlu.lexicon.normalize_text`: lowercase, Unicode-aware,
   numbers as digits, ``m 8`` → ``m8``, millimetres/"mil" → ``mm``) and fractions become decimals.
2. A question about what happened ("how many drill bits did we use last week", "when did gloves
   last come in") is read by :mod:`edge.stages.nlu.records` (``ask_records``), never as a stock
   question.
3. The intent templates (:mod:`edge.stages.nlu.templates`, ``templates/en.yaml`` plus the site's
   files) pick the intent and cut the sentence into slot texts.
4. A command that would write (log, transfer, stock count) goes through the guards first
   (:mod:`edge.stages.nlu.guards`: negation, "already logged", self-corrections, ranges, minus).
5. The resolvers (:mod:`edge.stages.nlu.slots`, :mod:`edge.stages.nlu.resolve`) fill the slots: places,
   the count, the item by name, family and size (candidates, a missing or unheard variant, an
   unknown item), several parts.

The result has ``source="template"`` and ``explain`` (template, file, slot texts, guards, how the
item was found). None when no template takes the text (the LLM's turn), or a stock question about
an unknown item without a stock cue. :meth:`Grammar.fill_slots` runs step 4–5 for an intent chosen
elsewhere (the paraphrase matcher).

Mandarin (``language: zh``): text with ideographs goes to the Mandarin parser
(:mod:`edge.stages.nlu.zh`, ``source="grammar"``) for stock questions, logs and undo; the zh
templates (``templates/zh.yaml``, hassil with ``ignore_whitespace``) add cancel, place contents,
transfer, stock count and low stock, resolved by the same Mandarin slot rules.

:meth:`Grammar.completeness` tells the voice loop whether a partial transcript is a complete
command (:data:`COMPLETE`: end the utterance now), one that is still being said
(:data:`INCOMPLETE`: it ends on "of", "and", "from", a bare number, a filler, or names no known
item yet) or neither (:data:`UNCLEAR`: the plain trailing silence decides).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from edge.stages.nlu.filler import has_cjk, is_filler, strip_leading_fillers
from edge.stages.nlu.guards import Guarded, asks_about_log, asks_yes_no, fractions, guard
from edge.stages.nlu.guards_zh import GuardedZh, guard_zh
from edge.stages.nlu.lexicon import (
    IN_WORDS,
    LOCATION_WORDS,
    LOG_WORDS,
    OUT_WORDS,
    find_location,
    normalize_text,
    singular,
)
from edge.stages.nlu.records import RecordsParser
from edge.stages.nlu.records_zh import parse_zh
from edge.stages.nlu.resolve import ItemIndex
from edge.stages.nlu.slots import CONTAINERS, WRITES, SlotFiller, locations, place, quantity_refusal
from edge.stages.nlu.templates import TemplateMatch, templates_for
from edge.stages.nlu.types import Intent, ItemMatch
from edge.stages.nlu.zh import IN_VERBS, OUT_VERBS, ZhGrammar, zh_fill, zh_match_text
from edge.stock.periods import find_period

LANGUAGES = ("en", "zh")

_OUT_PHRASES = re.compile(r"\b(?:(?:gave|give|giving|hand|handed|handing|book|booked|booking|sign|signed|signing|"
                          r"check|checked|checking|log|logged|logging) out|(?:write|wrote|written|writing) off|gone|went|"
                          r"(?:burn|burned|burnt|burning|got|go|going|went) through|needs|needed|grabbed|grab|"
                          r"for (?:the|a|an|my|our) (?:new |night |day )?(?:job|site|apprentice|starter|shift|fitter|"
                          r"customer|repair|van|crew|team|client|contractor|line|machine|pump|gearbox|doors?|forklift|"
                          r"truck|lorry|trailer|press|lathe|compressor|boiler|conveyor|generator|mixer|crane|loader|"
                          r"digger|car|motor|engine|window|roof|workshop|office|kitchen)|"
                          # what it is for, said as doing: "for cleaning the parts" (stock in is not "for")
                          r"for (?!restock|stock|return|deliver|receiv|record|logg|book)[a-z]+ing|"
                          r"(?:taken|pulled|came|went|gone) out of)\b")
#: stock arriving said as a phrase: "a dozen sheets came in this morning", "the gloves turned up"
_IN_PHRASES = re.compile(r"\b(?:came|come|comes|coming) in\b|\b(?:turned|turn|turning) up\b|\b(?:showed|show) up\b")

COMPLETE, INCOMPLETE, UNCLEAR = "complete", "incomplete", "unclear"
#: a command ending on one of these goes on: "… boxes of", "… and", "… from", "… to bin"
DANGLING_WORDS = frozenset("of and or from to into in on at for with by the a an some about".split()) | LOCATION_WORDS
#: hesitations ending a partial transcript: the speaker is still thinking
HESITATIONS = frozenset("uh um umm uhm er erm ah eh hm hmm mm".split())
#: the start of a stock command whose item or quantity is still to come ("how many …", "we used …")
_STOCK_START = re.compile(r"^(?:how (?:many|much)|do we (?:still )?have|have we (?:still )?got)\b")


class Grammar:
    """The deterministic understanding of the inventory commands, built from the inventory items."""

    def __init__(self, items: Iterable, language: str = "en", site_dir: str | Path | None = None):
        """``items``: objects with ``sku``, ``item``, ``location``, ``unit`` and ``aliases`` (tuple of
        str), e.g. :class:`edge.stock.store.Item`. ``language``: ``en`` or ``zh``. ``site_dir``: a
        folder of site template files (``<config dir>/intents``), or None.

        Raises:
            AttributeError: an item lacks one of the attributes.
            ValueError: ``language`` is not one of :data:`LANGUAGES`.
            edge.stages.nlu.templates.TemplateError: a template file is unreadable or wrong.
        """
        if language not in LANGUAGES:
            raise ValueError(f"language {language!r} is not supported; use one of {', '.join(LANGUAGES)} "
                             "(settings key 'language')")
        self.language = language
        self.items = list(items)
        self.index = ItemIndex(self.items)
        self.shortlist = self.index.shortlist
        self.filler = SlotFiller(self.index)
        self._place_keys = {p.casefold() for p in self.index.by_location}
        self.templates = templates_for("en", site_dir)
        self._zh = ZhGrammar(self.items) if language == "zh" else None
        self.zh_templates = templates_for("zh", site_dir) if language == "zh" else None
        self.records = RecordsParser(self.resolve_item, tuple(self.index.by_location))

    def resolve_item(self, text: str) -> ItemMatch:
        """The item ``text`` names (see :class:`ItemMatch`); ``unknown`` holds the spoken words when
        no item fits, None when there are no content words at all. Raises nothing."""
        if self._zh is not None and has_cjk(text or ""):
            return self._zh.resolve_item(text)
        toks = fractions(normalize_text(text or "")).split()
        location, skip = find_location(toks)
        m = self.index.find([singular(t) for t in toks], skip, location).match
        if m.via == "unknown":
            return replace(m, unknown=" ".join(toks[i] for i in sorted(m.tokens)) or None)
        return m

    def parse(self, text: str) -> Intent | None:
        """Understand one transcript, or return None to hand it to the LLM (see module doc).

        ``text``: a transcript, any case/punctuation, numbers as words or digits. Returns an
        :class:`Intent` with ``source="template"`` (Mandarin: ``grammar`` or ``template``), ``text``
        set and ``explain`` filled. Raises nothing.
        """
        if self._zh is not None and has_cjk(text or ""):
            got = self._parse_zh(text)
            # an English sentence with a Chinese name in it ("how many 钻头 are left")
            return got if got is not None or not re.search(r"[a-zA-Z]{2}", text) else self._parse_en(text)
        return self._parse_en(text)

    def _parse_en(self, text: str) -> Intent | None:
        norm = fractions(normalize_text(strip_leading_fillers(text or "")))
        if not norm:
            return None
        asked = self.records.parse(norm, text)  # a question about the past: the records, never the stock
        if asked is not None and not (asks_about_log(norm) and asked.explain.get("period") is None):
            return asked
        if asks_about_log(norm):
            return self._log_question(norm, text)
        m = self.templates.match(norm, self._places_said)
        if m is not None and m.intent == "query_stock" and self.records.timed(norm):
            return self.records.cannot(text, None)  # a stock question over a time: never the stock now
        if m is not None and m.intent == "query_stock" and _COUNT_SAID.match(norm) and _said_count(norm):
            m = replace(m, intent="stock_count")  # "count 11 safety goggles on shelf B": a count, not a question
        if m is not None and m.intent == "query_stock":  # "if we used 20 …, how many would be left": the change too
            supposed = self._supposed(norm, text)
            if supposed is not None:
                return replace(supposed, explain={**supposed.explain, "template": m.sentence, "file": m.file})
        if m is not None and m.intent not in WRITES:
            return self._fill(m, norm, text, None)
        if asks_yes_no(text) and (m is not None or text_direction(norm) or _LOG_VERB.search(norm)):
            return self._log_question(norm, text)  # "did we use 3 fuses?", "were 3 fuses used": asked, not said
        g = guard(norm, text or "")
        if g.text != norm or m is None:
            m = self.templates.match(g.text, self._places_said)
            if m is not None and m.intent == "query_stock" and _COUNT_SAID.match(g.text) and _said_count(g.text):
                m = replace(m, intent="stock_count")
        if m is None and g.refusal in ("already_done", "negated", "order", "shortage", "expected"):  # "those 50 washers were logged yesterday"
            said = self._fill(TemplateMatch("log_record", {"item": g.text}, "(said as done or not done)"), g.text, text, g)
            return said if said is not None and (said.sku or said.candidates or said.parts) else None
        if m is None or m.intent not in WRITES | {"query_stock"}:
            return None if m is None else self._fill(m, g.text, text, None)
        return self._fill(m, g.text, text, g)

    def timed(self, text: str) -> bool:
        """Whether ``text`` (a transcript) names a period other than "today" said of the stock now: a
        stock answer is never given to it (:meth:`edge.stages.nlu.records.RecordsParser.timed`)."""
        if has_cjk(text or ""):
            return find_period(text) is not None
        return self.records.timed(normalize_text(strip_leading_fillers(text or "")))

    def _places_said(self, m: TemplateMatch) -> bool:
        """A template's place slots hold places: a place word with its number or letter ("bin 12",
        "from drawer 4 to bin 118"), or a place of the inventory ("the back room"); "knocked off a litre
        of brake fluid" is no "{item} off {location}"."""
        for key in ("location", "to_location"):
            said = m.slots.get(key)
            if said and not locations(said.split()) and (place(said) or "").casefold() not in self._place_keys:
                return False
        return True

    def _supposed(self, norm: str, text: str) -> Intent | None:
        """A stock question said as a what-if ("if we used 20 M10 bolts, how many would be left"):
        the question with the change it supposes (:func:`what_if`), or None when it supposes none."""
        g = guard(norm, text or "")
        if not g.asks_stock:
            return None
        got = self._fill(TemplateMatch("log_record", {"item": g.text}, "(a what-if)"), g.text, text, g)
        return got if got is not None and got.intent == "query_stock" else None

    def _log_question(self, norm: str, text: str) -> Intent:
        """"Did I already log the coolant?": intent ``other`` with ``extra["log_question"]`` and the
        item asked about (or its candidates); the dialog answers from the store's records."""
        base = Intent("other", source="template", text=text, extra={"log_question": True},
                      explain={"path": "template", "template": "(question about the log)"})
        got = self.filler.query(norm, norm, base)  # the item is said before the verb or after it
        if got is None:
            return base
        return replace(got, intent="other", quantity=None, location=None)

    def _parse_zh(self, text: str) -> Intent | None:
        asked = parse_zh(text, self.resolve_item, tuple(self.index.by_location))  # 上周用了多少钻头: the records, never the stock
        if asked is not None:
            return asked
        m = self.zh_templates.match(zh_match_text(text))
        if m is not None and m.intent not in ("query_stock", "log_record", "undo"):
            got = zh_fill(self._zh, m.intent, m.slots, text)
            if got is not None:
                if got.intent in WRITES:  # a transfer or count said negated, as a range …: refused
                    zg = guard_zh(text)
                    got = replace(got, refusal=zg.refusal, quantity=None if zg.range or zg.vague else got.quantity,
                                  extra={**got.extra, "told_not_to": True} if zg.told and zg.refusal == "negated"
                                  else got.extra)
                return replace(got, explain={**got.explain, "path": "template", "template": m.sentence,
                                             "file": m.file, "slots": dict(m.slots)})
        plain = self._zh.parse(text)
        if plain is not None and plain.intent == "undo":  # read before the guards rewrite numbers (上一条)
            return replace(plain, explain={"path": "zh grammar"})
        zg = guard_zh(text)
        if zg.parts:
            parts = [self._zh_guarded(p, zg) for p in zg.parts]
            if all(p is not None and p.intent == "log_record" for p in parts):
                return Intent("log_record", direction=parts[0].direction, parts=tuple(parts), source="grammar",
                              text=text, refusal=next((p.refusal for p in parts if p.refusal), None),
                              explain={"path": "zh grammar", "guards": zg.notes})
        got = self._zh_guarded(zg.text, zg)
        if got is not None:
            path = {"path": "zh grammar", **({"guards": zg.notes} if zg.notes else {})}
            if m is not None:
                path.update(template=m.sentence, file=m.file, slots=dict(m.slots))
            got = replace(got, text=text, explain={**got.explain, **path})
        return got

    def _zh_guarded(self, text: str, zg: GuardedZh) -> Intent | None:
        """The Mandarin parse of ``text`` with the guards' facts: refusal, decimal, minus, range."""
        got = self._zh.parse(text)
        if got is None or got.intent != "log_record":
            return got
        q = zg.quantity if zg.quantity is not None and len(zg.parts) < 2 else got.quantity
        if zg.range is not None or zg.vague:
            q = None
        elif zg.negative and q is not None:
            q = -q
        item = self.index.by_sku.get(got.sku or "")
        units = {item.unit.lower()} if item is not None else set()
        guarded = Guarded(text, refusal=zg.refusal)
        refusal = quantity_refusal(q, units, guarded if zg.refusal else None)
        extra = {**got.extra, "range": list(zg.range)} if zg.range is not None else dict(got.extra)
        if zg.told and refusal == "negated":
            extra["told_not_to"] = True
        return replace(got, quantity=q, refusal=refusal, extra=extra)

    def _fill(self, m: TemplateMatch, norm: str, text: str, g: Guarded | None) -> Intent | None:
        """The intent of template match ``m`` with its slots resolved."""
        explain = {"path": "template", "template": m.sentence, "file": m.file, "slots": dict(m.slots)}
        if g is not None and g.notes:
            explain["guards"] = list(g.notes)
        base = Intent(m.intent, source="template", text=text, explain=explain)
        return what_if(self._resolve(m.intent, m.slots, norm, g, base), g)

    def _resolve(self, name: str, slots: dict, norm: str, g: Guarded | None, base: Intent) -> Intent | None:
        if g is not None and g.told:  # "don't log …": the reply says so rather than "you said … not used"
            base = replace(base, extra={**base.extra, "told_not_to": True})
        item_text = slots.get("item", norm)
        if slots.get("count") and slots.get("item"):  # "set the flex cable 1.5 mm on shelf E to 142 metres"
            item_text = f"{item_text} {slots['count']}"
        if name == "log_record" and slots.get("location") and slots.get("item"):  # "… gone from bin 48"
            item_text = f"{item_text} at {slots['location']}"
        if name == "log_record" and _two_places(norm):  # "take 15 … out of drawer 9 and put them in drawer 8"
            got = self.filler.transfer({}, norm, g, replace(base, intent="transfer"))
            if got is not None:
                return got
        if name == "low_stock":  # "are we low on gloves": the items asked about; "… in drawer 5": its items
            got = self.filler.query(item_text, norm, base) if slots.get("item") else None
            if got is not None:
                return replace(got, intent="low_stock", location=None)
            here = locations(norm.split())
            return replace(base, location=here[0][0]) if here and here[0][0] in self.index.by_location else base
        if name in ("undo", "cancel", "low_stock", "ask_docs", "other"):
            return base
        if name == "place_contents":
            return self.filler.place_contents(slots.get("location"), norm, base)
        if name == "query_stock":
            return self.filler.query(item_text, norm, base)
        if name == "transfer":
            return self.filler.transfer(slots, norm, g, base)
        if name == "stock_count":
            return self.filler.counted("stock_count", item_text, g, base, location=place(slots.get("location")))
        return self._log(slots, norm, item_text, g, base)

    def _log(self, slots: dict, norm: str, item_text: str, g: Guarded | None, base: Intent) -> Intent | None:
        """A ``log_record`` template match with its direction and item resolved."""
        direction = slots.get("direction")
        said_at = locations(slots.get("purpose", "").split())
        if said_at:  # "… went into bin 12", "topped up shelf A with …": a stock place, not a use
            item_text, direction = f"{item_text} at {said_at[0][0]}", None
        elif direction in (None, "auto"):
            # "log 3 o-rings": log says no direction; None makes the dialog ask "used or received?"
            direction = text_direction(norm) or place_direction(norm)
        got = self.filler.log_record(item_text, g, replace(base, direction=direction))
        if got is not None and got.parts:
            # a part whose own words say a direction keeps it ("… and received 2 fuses")
            got = replace(got, parts=tuple(p if p.extra.get("direction_said") else replace(p, direction=direction)
                                           for p in got.parts))
        return got

    def fill_slots(self, intent_name: str, text: str, direction: str | None = None) -> Intent | None:
        """The slots of ``intent_name`` (one of :data:`edge.stages.nlu.types.INTENTS`) filled from
        ``text`` by the deterministic resolvers, for an intent picked elsewhere (the paraphrase
        matcher): the guards run for a writing intent, the item is resolved by name, family and
        size, never guessed. ``direction`` (``in``/``out``) overrides the words for a log. Returns
        the :class:`Intent` (``source="template"``, ``explain["path"] = "fill_slots"``), or None when
        the text lacks what the intent needs (a log without a count, a place where nothing is
        stocked). Raises nothing."""
        if self._zh is not None and has_cjk(text or ""):
            parsed = self._parse_zh(text) if intent_name in ("query_stock", "log_record") else None
            got = parsed if parsed is not None and parsed.intent == intent_name else zh_fill(self._zh, intent_name, {}, text)
            return replace(got, explain={"path": "fill_slots"}) if got is not None else None
        norm = fractions(normalize_text(strip_leading_fillers(text or "")))
        g = guard(norm, text or "") if intent_name in WRITES else None
        norm = g.text if g is not None else norm
        explain = {"path": "fill_slots", "slots": {}}
        if g is not None and g.notes:
            explain["guards"] = list(g.notes)
        slots: dict = {"item": _strip_command_words(norm)}
        if direction is not None:
            slots["direction"] = direction
        base = Intent(intent_name, source="template", text=text, explain=explain)
        return what_if(self._resolve(intent_name, slots, norm, g, base), g)

    def completeness(self, text: str) -> tuple[str, Intent | None]:
        """Whether ``text`` (a partial transcript) is a whole command: ``(verdict, intent)`` with
        verdict :data:`COMPLETE` (undo, cancel, low stock, a place's contents, or a command whose item
        is known and nothing dangles), :data:`INCOMPLETE` (filler only; ends on a
        :data:`DANGLING_WORDS` word, a hesitation, a container word or a bare number outside a
        location; a stock command still without its item, or whose item is unknown or ambiguous) or
        :data:`UNCLEAR` (not a template command: the LLM's). ``intent`` is :meth:`parse`'s result.
        Chinese text: complete when :meth:`parse` finds the item or an undo, else unclear. Raises
        nothing."""
        if self._zh is not None and has_cjk(text or ""):
            intent = self.parse(text)
            whole = intent is not None and (intent.intent in _NO_ITEM or intent.sku is not None)
            return (COMPLETE if whole else UNCLEAR), intent
        if is_filler(text):
            return INCOMPLETE, None
        toks = normalize_text(strip_leading_fillers(text)).split()
        if not toks:
            return INCOMPLETE, None
        intent = self.parse(text)
        if _ends_dangling(toks):
            return INCOMPLETE, intent
        if intent is None:
            words = set(toks)
            stock = bool(words & (IN_WORDS | OUT_WORDS | LOG_WORDS)) or bool(_STOCK_START.match(" ".join(toks)))
            return (INCOMPLETE if stock else UNCLEAR), None
        if intent.intent == "ask_records":  # "how many drill bits did we use …": the period may follow
            q = intent.extra.get("records") or {}
            return (INCOMPLETE if q.get("kind") in ("total", "top", "change") and not q.get("period") else COMPLETE), intent
        if intent.intent in _NO_ITEM or intent.sku is not None:
            return COMPLETE, intent
        if intent.parts and all(p.sku is not None for p in intent.parts):
            return COMPLETE, intent
        return INCOMPLETE, intent


def dangles(text: str) -> bool:
    """Whether ``text`` ends as a speaker who goes on does: on a :data:`DANGLING_WORDS` word, a
    hesitation, a container word or a bare number outside a location ("... drill bits from",
    "twenty boxes of", "bin 12 and"). Raises nothing."""
    return _ends_dangling(normalize_text(strip_leading_fillers(text or "")).split())


def _ends_dangling(toks: list[str]) -> bool:
    """:func:`dangles` on the normalized tokens."""
    if not toks:
        return False
    locs = locations(toks)
    skip = set().union(*(s for _, s in locs)) if locs else set()
    last = toks[-1]
    return (last in DANGLING_WORDS or last in HESITATIONS or singular(last) in CONTAINERS
            or (last.isdigit() and len(toks) - 1 not in skip))


def what_if(got: Intent | None, g: Guarded | None) -> Intent | None:
    """A command said as a what-if that asks what would be left ("pretend I used 5 M8 washers, what
    would the balance be"): the stock question about its item, ``extra["what_if"]`` the change it
    supposes (signed, in the item's unit; None when no direction or count was said). Nothing is
    written from it. Any other ``got`` unchanged."""
    if got is None or g is None or not g.asks_stock or got.intent not in WRITES or got.parts:
        return got
    q = got.quantity if got.intent == "log_record" and got.direction in ("in", "out") else None
    delta = None if q is None else (-q if got.direction == "out" else q)
    return replace(got, intent="query_stock", quantity=None, direction=None, to_location=None, refusal=None,
                   extra={**got.extra, "what_if": delta}, explain={**got.explain, "what_if": True})


_NO_ITEM = frozenset({"undo", "cancel", "low_stock", "place_contents", "ask_docs"})
_COUNT_SAID = re.compile(r"^(?:(?:we|i) )?(?:re ?count(?:ed)?|count(?:ed)?|stock ?take|stock count)\b(?! of\b| on\b| for\b)"
                         # the figure said after the item or place: "count for bin 60 is 790"
                         r"|^(?:the )?(?:re ?count|count|stock ?take|stock count|tally) (?:of|on|for|in|at) .+ "
                         r"(?:is|was|s|came to|comes to) \d+(?:\.\d+)?(?: [a-z]+)?$")
_LOG_VERB = re.compile(r"\b(?:log|logged|record|recorded|enter|entered|book|booked|note|noted)\b")
_FROM_WORDS = frozenset({"from", "of", "off"})
_TO_WORDS = frozenset({"to", "into", "onto", "in", "on"})


def _two_places(norm: str) -> bool:
    """A place said with "from" (or "out of") and a later one with "to"/"into"/"in": a move."""
    toks = norm.split()
    before = [toks[min(idx) - 1] if min(idx) > 0 else "" for _, idx in locations(toks)]
    return (len(before) >= 2 and before[0] in _FROM_WORDS and any(b in _TO_WORDS for b in before[1:]))


def _said_count(norm: str) -> bool:
    """A number in ``norm`` that is no place's ("count 11 goggles on shelf B", not "count bin 12")."""
    toks = norm.split()
    skip = set().union(*(s for _, s in locations(toks))) if locations(toks) else set()
    return any(t.replace(".", "", 1).isdigit() and i not in skip for i, t in enumerate(toks))
_COMMAND_WORDS = re.compile(
    r"^(?:(?:we|i|they|please|just|have|had|ve|did|do|log|logged|record|recorded|enter|entered|used|use|took|"
    r"take|added|add|received|receive|counted|count|move|moved|transfer|transferred|how many|how much|"
    r"whats|what is|what|is there|are there|any|there are|there is)\s+)+")


def _strip_command_words(norm: str) -> str:
    """The words after the command's verb ("we used 3 bolts" → "3 bolts"): the slot text when no
    template cut the sentence."""
    return _COMMAND_WORDS.sub("", norm)


def place_direction(norm: str) -> str | None:
    """The direction a lone place says: ``out`` for "… from drawer 20" (nothing said to go in),
    else None. ``norm``: normalized text. Raises nothing."""
    toks = norm.split()
    before = {toks[min(idx) - 1] for _, idx in locations(toks) if min(idx) > 0}
    return "out" if "from" in before and not before & {"to", "into", "onto"} else None


def text_direction(text: str) -> str | None:
    """The stock direction the words of ``text`` say: ``"out"`` (used, took, gave out …), ``"in"``
    (received, added, returned …), or None when they say neither or both. ``log``/``record``
    alone say nothing here. Chinese text uses the verbs of :mod:`edge.stages.nlu.zh`. Raises nothing."""
    if has_cjk(text or ""):
        out, into = bool(OUT_VERBS.search(text)), bool(IN_VERBS.search(text))
    else:
        norm = normalize_text(strip_leading_fillers(text or ""))
        words = set(norm.split())
        out, into = bool(words & OUT_WORDS or _OUT_PHRASES.search(norm)), bool(words & IN_WORDS or _IN_PHRASES.search(norm))
    return "out" if out and not into else "in" if into and not out else None
