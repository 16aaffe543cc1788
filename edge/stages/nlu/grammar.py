"""The fast grammar path: known command phrasings → :class:`Intent`, no model involved.

:meth:`Grammar.parse` handles ``query_stock``, ``log_record`` and ``undo`` as typed or as a speech
recognizer writes them (any case, punctuation, digits or number words) and returns None for
everything else, which the caller hands to the LLM. Steps:

1. Clean: lowercase, drop apostrophes, punctuation → spaces (``2,023`` kept as one number).
2. ``undo`` phrases are matched on the cleaned text as a whole (``undo that``, ``scratch that`` ...).
3. Numbers → digits, ``m 8`` → ``m8``, ``millimetre``/``10mm`` → ``10 mm``
   (:func:`edge.stages.nlu.lexicon.normalize_text`; the word lists are in :mod:`edge.stages.nlu.lexicon`).
4. Location: ``bin|drawer|shelf|rack|box [number] <digits|letter>``; letters may be spoken as
   words (``bee`` → B). Normalized as ``"bin 12"``, ``"shelf B"``.
5. Item (:meth:`Grammar.resolve_item`): longest item name/alias found in the (singularized)
   tokens (a name's last word alone counts when only one item has it: ``bolts`` → M8 bolt), else
   the best ``rapidfuzz`` match of a 1–4 word n-gram (ratio ≥ :data:`FUZZY_CUTOFF`), else a word
   of one or more names (``m8`` → M8 bolt *and* M8 washer: ambiguous, ``candidates``), else the
   only item stocked at the spoken location, else the content words are an unknown item.
6. Intent: a question cue (``how many``, ``do we have``, ``what's`` ...) → ``query_stock``; a
   direction word (in: add/received/put/restock ...; out: used/took/remove/issued ...) or
   ``log``/``record`` (defaults to in) plus a quantity → ``log_record``. The quantity is the first
   number outside the location and the item name (``a``/``an`` before the item → 1).
7. Ambiguous or unknown item: the intent is still returned, with ``sku=None`` and
   ``extra={"candidates": [sku, ...]}`` (2+ items fit) or ``extra={"unknown_item": "<words>"}``
   (none fits), so the caller can ask back; an unknown item needs a clear stock cue ("do we
   have", "in stock", "left", or a log with a spoken quantity), else the text goes to the LLM.

:meth:`Grammar.completeness` tells the voice loop whether a partial transcript is a complete
command (:data:`COMPLETE`: end the utterance now), one that is still being said
(:data:`INCOMPLETE`: it ends on "of", "and", "from", a bare number, a filler, or names no known
item yet) or neither (:data:`UNCLEAR`: the plain trailing silence decides).

Leading hesitations ("um, …", "the how many …") are dropped first
(:func:`edge.stages.nlu.filler.strip_leading_fillers`). ``Grammar(items, language="zh")`` parses Mandarin
Chinese (:mod:`edge.stages.nlu.zh`) and falls back to these English rules for text without ideographs.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Protocol

from rapidfuzz import fuzz, process

from edge.stages.nlu.filler import has_cjk, is_filler, strip_leading_fillers
from edge.stages.nlu.lexicon import (
    IN_WORDS,
    LOCATION_WORDS,
    LOG_WORDS,
    NOT_ITEM,
    OUT_WORDS,
    STOP_WORDS,
    clean_text,
    find_location,
    is_name_word,
    normalize_location,
    normalize_text,
    singular,
)
from edge.stages.nlu.types import Intent, ItemMatch
from edge.stages.nlu.zh import IN_VERBS, OUT_VERBS, ZhGrammar

LANGUAGES = ("en", "zh")

FUZZY_CUTOFF = 85
_OUT_PHRASES = re.compile(r"\b(?:(?:gave|give|giving|hand|handed|handing|book|booked|booking|sign|signed|signing|"
                          r"check|checked|checking) out|(?:write|wrote|written|writing) off)\b")
_QUERY_START = re.compile(
    r"^(?:(?:hey|ok|okay|so|and|um|uh|please|can you|could you|tell me)\s+)*"
    r"(?:how (?:many|much)|do we (?:still )?have|have we (?:still )?got|have we|is there|are there|any\b|"
    r"whats|what is|what are|what about|wheres|where is|where are|check|count|stock (?:of|level|check)|"
    r"how are we)")
_QUERY_ANY = re.compile(r"\b(?:in stock|on hand|left|remaining|got any|have any)\b")
# "and do that" / "on do that": how Whisper tiny.en writes a short "undo that" (seen on the shared
# session undo_last.wav); only ever taken as the whole utterance.
_UNDO = re.compile(
    r"(?:(?:please|oh|no|oops|hey)\s+)*(?:undo|un do|(?:and|an|on) do(?= (?:that|it|the last))|cancel|scratch|revert|delete|take back)"
    r"(?:\s+(?:that|this|it|(?:the\s+)?last(?:\s+(?:one|1|entry|record|log|thing|change))?))?"
    r"(?:\s+please)?")
#: a query whose item is unknown is only a stock query with one of these (else the LLM decides)
_STOCK_CUE = re.compile(r"\b(?:do we (?:still )?have|have we (?:still )?got|are there|is there|in stock|on hand|"
                        r"left|remaining|stock of|we got|got any|have any)\b")


COMPLETE, INCOMPLETE, UNCLEAR = "complete", "incomplete", "unclear"
#: a command ending on one of these goes on: "… boxes of", "… and", "… from", "… to bin"
DANGLING_WORDS = frozenset("of and or from to into in on at for with by the a an some about".split()) | LOCATION_WORDS
#: hesitations ending a partial transcript: the speaker is still thinking
HESITATIONS = frozenset("uh um umm uhm er erm ah eh hm hmm mm".split())
#: a count's container without the item yet: "we took twelve boxes …"
CONTAINERS = frozenset("box pack packet can pair bag roll set piece tin pallet carton case unit pc".split())
#: the start of a stock command whose item or quantity is still to come ("how many …", "we used …")
_STOCK_START = re.compile(r"^(?:how (?:many|much)|do we (?:still )?have|have we (?:still )?got)\b")


class InventoryItem(Protocol):
    sku: str
    item: str
    location: str
    aliases: tuple[str, ...]


class Grammar:
    """Rule-based understanding of the inventory commands, built from the inventory items."""

    def __init__(self, items: Iterable[InventoryItem], language: str = "en"):
        """``items``: objects with ``sku``, ``item``, ``location`` and ``aliases`` (tuple of str),
        e.g. the rows of ``inventory.csv`` or :class:`edge.stages.store.Item`. ``language``: ``en`` or
        ``zh`` (Mandarin rules from :mod:`edge.stages.nlu.zh`, English rules for text without ideographs).

        Raises:
            AttributeError: an item lacks one of the attributes.
            ValueError: ``language`` is not one of :data:`LANGUAGES`.
        """
        if language not in LANGUAGES:
            raise ValueError(f"language {language!r} is not supported; use one of {', '.join(LANGUAGES)} "
                             "(settings key 'language')")
        self.language = language
        self.items = list(items)
        self._phrases: dict[tuple[str, ...], str] = {}  # singular token tuple → sku
        self._words: dict[str, set[str]] = {}  # one content word of a name/alias → skus
        for it in self.items:
            for name in (it.item, *it.aliases):
                if has_cjk(name):
                    continue
                toks = tuple(singular(t) for t in normalize_text(name).split())
                if toks:
                    self._phrases.setdefault(toks, it.sku)
                for t in toks:
                    if is_name_word(t):
                        self._words.setdefault(t, set()).add(it.sku)
        heads: dict[tuple[str, ...], set[str]] = {}  # a name's last word alone, if only one item has it
        for phrase, sku in self._phrases.items():
            heads.setdefault(phrase[-1:], set()).add(sku)
        for head, skus in heads.items():
            if len(skus) == 1 and head[0] not in STOP_WORDS and not head[0].isdigit():
                self._phrases.setdefault(head, skus.pop())
        self._ordered = sorted(self._phrases, key=len, reverse=True)
        self._choices = [" ".join(p) for p in self._phrases]
        self._by_location: dict[str, list[str]] = {}
        for it in self.items:
            self._by_location.setdefault(normalize_location(it.location) or it.location, []).append(it.sku)
        self._zh = ZhGrammar(self.items) if language == "zh" else None

    def _find_item(self, toks: list[str], skip: set[int], location: str | None = None) -> ItemMatch:
        """The item named in ``toks`` (singular tokens); ``skip``: indices of the location. Tried in
        order: a name or alias, a fuzzy n-gram, one word of names, the location's only item."""
        return (self._by_name(toks, skip) or self._by_fuzzy(toks, skip) or self._by_word(toks, skip)
                or self._at_location(toks, skip, location))

    def _by_name(self, toks: list[str], skip: set[int]) -> ItemMatch | None:
        """The longest item name or alias found whole in ``toks``, outside ``skip``."""
        for phrase in self._ordered:
            n = len(phrase)
            for i in range(len(toks) - n + 1):
                if tuple(toks[i:i + n]) == phrase and not skip.intersection(range(i, i + n)):
                    return ItemMatch(self._phrases[phrase], frozenset(range(i, i + n)), via="name")
        return None

    def _by_fuzzy(self, toks: list[str], skip: set[int]) -> ItemMatch | None:
        """The best ``rapidfuzz`` match (ratio ≥ :data:`FUZZY_CUTOFF`) of a 1–4 word n-gram; ties on
        the same span are candidates."""
        best: tuple[float, set[str], range] | None = None
        for n in range(1, 5):
            for i in range(len(toks) - n + 1):
                gram = toks[i:i + n]
                span = range(i, i + n)
                if (skip.intersection(span) or gram[0] in STOP_WORDS or gram[-1] in STOP_WORDS
                        or len(" ".join(gram)) < 5):
                    continue
                for choice, score, _ in process.extract(" ".join(gram), self._choices, scorer=fuzz.ratio,
                                                        score_cutoff=FUZZY_CUTOFF, limit=4):
                    sku = self._phrases[tuple(choice.split())]
                    if best is None or score > best[0]:
                        best = score, {sku}, span
                    elif score == best[0] and span == best[2]:
                        best[1].add(sku)
        return _one_or_candidates(sorted(best[1]), frozenset(best[2]), "fuzzy") if best else None

    def _by_word(self, toks: list[str], skip: set[int]) -> ItemMatch | None:
        """The items every name word in ``toks`` belongs to (else any of them)."""
        hits = [(i, self._words[t]) for i, t in enumerate(toks) if i not in skip and t in self._words]
        if not hits:
            return None
        common = set.intersection(*(h for _, h in hits))
        skus = sorted(common) if common else sorted(set.union(*(h for _, h in hits)))
        return _one_or_candidates(skus, frozenset(i for i, _ in hits), "word")

    def _at_location(self, toks: list[str], skip: set[int], location: str | None) -> ItemMatch:
        """The only item stocked at ``location``, else the content words as an unknown item."""
        at = self._by_location.get(location or "", [])
        if len(at) == 1:
            return ItemMatch(at[0], frozenset(), via="location")
        content = [i for i, t in enumerate(toks) if i not in skip and t not in NOT_ITEM and not t.isdigit()]
        if len(at) > 1 and not content:
            return ItemMatch(None, frozenset(), candidates=tuple(sorted(at)), via="location")
        return ItemMatch(None, frozenset(content), via="unknown")

    def resolve_item(self, text: str) -> ItemMatch:
        """The item ``text`` names (see :class:`ItemMatch`); ``unknown`` holds the spoken words when
        no item fits, None when there are no content words at all. Raises nothing."""
        if self._zh is not None and has_cjk(text or ""):
            return self._zh.resolve_item(text)
        toks = normalize_text(text or "").split()
        location, skip = find_location(toks)
        m = self._find_item([singular(t) for t in toks], skip, location)
        if m.via == "unknown":
            return replace(m, unknown=" ".join(toks[i] for i in sorted(m.tokens)) or None)
        return m

    def parse(self, text: str) -> Intent | None:
        """Understand one transcript, or return None to hand it to the LLM.

        ``text``: a transcript, any case/punctuation, numbers as words or digits. Returns an
        :class:`Intent` with ``source="grammar"`` and ``text`` set: ``undo``; ``query_stock``
        (``sku``, ``location`` or None); ``log_record`` (``sku``, ``quantity`` > 0 in the item's unit,
        ``direction`` ``"in"``/``"out"``, ``location`` or None). When the command is clear but its
        item is not, ``sku`` is None and ``extra`` holds ``candidates`` (list of SKUs) or
        ``unknown_item`` (the spoken words). None when the text is not a known command. Raises
        nothing.
        """
        if self._zh is not None and has_cjk(text or ""):
            return self._zh.parse(text)
        original = text
        text = strip_leading_fillers(text or "")
        clean = clean_text(text)
        if not clean:
            return None
        if _UNDO.fullmatch(clean):
            return Intent("undo", source="grammar", text=original)
        toks = normalize_text(text).split()
        location, skip = find_location(toks)
        norm = " ".join(toks)
        command = _command(norm, set(toks))
        if command is None:
            return None
        intent, direction = command
        found = self._find_item([singular(t) for t in toks], skip, location)
        extra: dict = {}
        if found.candidates:
            extra["candidates"] = list(found.candidates)
        elif found.sku is None:
            if not found.tokens:
                return None
            extra["unknown_item"] = " ".join(toks[i] for i in sorted(found.tokens))
        if intent == "query_stock":
            if "unknown_item" in extra and not _STOCK_CUE.search(norm):
                return None
            return Intent("query_stock", sku=found.sku, location=location, source="grammar", text=original,
                          extra=extra)
        quantity = _quantity(toks, skip, found.tokens, item_known="unknown_item" not in extra)
        if quantity is None or quantity <= 0:
            return None
        return Intent("log_record", sku=found.sku, quantity=quantity, direction=direction, location=location,
                      source="grammar", text=original, extra=extra)


    def completeness(self, text: str) -> tuple[str, Intent | None]:
        """Whether ``text`` (a partial transcript) is a whole command: ``(verdict, intent)`` with
        verdict :data:`COMPLETE` (undo, or a query/log whose item is known and nothing dangles),
        :data:`INCOMPLETE` (filler only; ends on a :data:`DANGLING_WORDS` word, a hesitation, a
        container word or a bare number outside a location; a stock command still without its
        item, or whose item is unknown or ambiguous) or :data:`UNCLEAR` (not a grammar command:
        the LLM's). ``intent`` is :meth:`parse`'s result (None when it gives none). Chinese text:
        complete when :meth:`parse` finds the item or an undo, else unclear. Raises nothing."""
        if self._zh is not None and has_cjk(text or ""):
            intent = self._zh.parse(text)
            whole = intent is not None and (intent.intent == "undo" or intent.sku is not None)
            return (COMPLETE if whole else UNCLEAR), intent
        if is_filler(text):
            return INCOMPLETE, None
        toks = normalize_text(strip_leading_fillers(text)).split()
        if not toks:
            return INCOMPLETE, None
        _, skip = find_location(toks)
        last = toks[-1]
        dangling = (last in DANGLING_WORDS or last in HESITATIONS or singular(last) in CONTAINERS
                    or (last.isdigit() and len(toks) - 1 not in skip))
        intent = self.parse(text)
        if dangling:
            return INCOMPLETE, intent
        if intent is None:
            words = set(toks)
            stock = bool(words & (IN_WORDS | OUT_WORDS | LOG_WORDS)) or bool(_STOCK_START.match(" ".join(toks)))
            return (INCOMPLETE if stock else UNCLEAR), None
        if intent.intent == "undo" or intent.sku is not None:
            return COMPLETE, intent
        return INCOMPLETE, intent


def _one_or_candidates(skus: list[str], span: frozenset[int], via: str) -> ItemMatch:
    """One SKU → that item; several → ``candidates``."""
    if len(skus) == 1:
        return ItemMatch(skus[0], span, via=via)
    return ItemMatch(None, span, candidates=tuple(skus), via=via)


def _command(norm: str, words: set[str]) -> tuple[str, str | None] | None:
    """``(intent, direction)`` the words of normalized text ``norm`` ask for: a question cue →
    ``query_stock``; an out/in/log word → ``log_record``; None when neither."""
    if _QUERY_START.match(norm):
        return "query_stock", None
    if words & OUT_WORDS or _OUT_PHRASES.search(norm):
        return "log_record", "out"
    if words & (IN_WORDS | LOG_WORDS):
        return "log_record", "in"
    if _QUERY_ANY.search(norm):
        return "query_stock", None
    return None


def _quantity(toks: list[str], skip: set[int], span: frozenset[int], item_known: bool) -> int | None:
    """The first number outside the location (``skip``) and the item name (``span``); 1 for
    ``a``/``an`` right before a known item's name; None when no quantity is said."""
    nums = [int(t) for i, t in enumerate(toks) if t.isdigit() and i not in skip and i not in span]
    if nums:
        return nums[0]
    if span and item_known and min(span) > 0 and toks[min(span) - 1] in ("a", "an"):
        return 1
    return None


def text_direction(text: str) -> str | None:
    """The stock direction the words of ``text`` say: ``"out"`` (used, took, gave out …), ``"in"``
    (received, added, returned …), or None when they say neither or both. ``log``/``record``
    alone say nothing here. Chinese text uses the verbs of :mod:`edge.stages.nlu.zh`. Raises nothing."""
    if has_cjk(text or ""):
        out, into = bool(OUT_VERBS.search(text)), bool(IN_VERBS.search(text))
    else:
        norm = normalize_text(strip_leading_fillers(text or ""))
        words = set(norm.split())
        out, into = bool(words & OUT_WORDS or _OUT_PHRASES.search(norm)), bool(words & IN_WORDS)
    return "out" if out and not into else "in" if into and not out else None
