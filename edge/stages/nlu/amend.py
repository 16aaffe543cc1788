"""A count corrected on its own in the turn after a command ("actually it was 2", "no, 2", "make that
2", "sorry, 2 not 3", "no, we used 2 fuses"): read as an ``undo`` carrying ``extra["amend"]``, which the
dialog writes only as a correction of the record the turn before wrote, or says why not
(:mod:`edge.stages.last_record`). English, normalized text. A new lot ("2 more") is no correction.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from edge.stages.nlu.filler import has_cjk
from edge.stages.nlu.lexicon import LOCATION_WORDS, singular
from edge.stages.nlu.slots import CONTAINERS
from edge.stages.nlu.types import Intent, ItemMatch

#: words after a corrected count that say no item ("it was 2 of them")
_OF_THEM = frozenset("of them those these the it all in total".split())

#: how a correction said in the next turn starts ("actually it was", "no", "make that", "it should be")
_AFTER_MARKER = (r"(?:no|nope|sorry|oops|actually|wait|correction|i mean|i meant|make that|make it|or rather|"
                 r"scratch that|strike that|"
                 r"change (?:that|it) to|(?:it|that|they) (?:should be|should have been|was|were|is)|should be)")
_VERBS = {"used": "out", "took": "out", "received": "in", "got": "in"}
_SAID_AFTER = re.compile(
    rf"^(?P<marker>(?:{_AFTER_MARKER} )+)(?:(?:we|i) (?:(?:have|ve|had|just|only) )?(?P<verb>{'|'.join(_VERBS)}) )?"
    r"(?P<count>\d+(?:\.\d+)?)(?P<rest>(?: (?!not\b)[a-z][\w-]*){0,4})(?: not (?P<was>\d+(?:\.\d+)?))?$"
    r"|^(?P<count2>\d+(?:\.\d+)?) not (?P<was2>\d+(?:\.\d+)?)$"
    r"|^not (?P<was3>\d+(?:\.\d+)?) (?:but )?(?P<count3>\d+(?:\.\d+)?)$")
#: words that make the count another lot, a new change ("actually we used 2 more")
_ANOTHER = re.compile(r"\b(?:more|another|again|also|too|extra|as well|plus|each)\b")


@dataclass(frozen=True)
class SaidAfter:
    """A correction said on its own in the turn after a command: ``count`` (the right one), ``was``
    (the count said to be wrong, or None), ``direction`` (of a verb said: ``in``/``out``, or None),
    ``rest`` (the words after the count: an item, a unit, "of them"; may be empty) and ``marker``."""

    count: float
    was: float | None
    direction: str | None
    rest: str
    marker: str


def said_after(norm: str) -> SaidAfter | None:
    """The correction ``norm`` (the normal form of a whole utterance) says on its own, or None when it
    is no such correction (a new lot, "2 more", is none). Raises nothing."""
    m = _SAID_AFTER.match(norm.strip())
    if m is None or _ANOTHER.search(norm):
        return None
    count = m.group("count") or m.group("count2") or m.group("count3")
    was = m.group("was") or m.group("was2") or m.group("was3")
    return SaidAfter(float(count), float(was) if was else None, _VERBS.get(m.group("verb") or ""),
                     (m.group("rest") or "").strip(), (m.group("marker") or "").strip())


def amend_intent(utt, resolve_item: Callable[[str], ItemMatch | None],
                 understand: Callable[[str], Intent | None]) -> Intent | None:
    """``utt`` (an :class:`edge.stages.nlu.accounting.Utterance`) as a correction said the turn after a
    command: ``undo`` with ``extra["amend"]`` (the marker, the count said wrong, a unit word, and the
    whole command when one was said, understood by ``understand``), the item named resolved by
    ``resolve_item``; None for anything else (words after the count that name no item or a place).
    Raises nothing."""
    got = said_after(utt.norm) if not has_cjk(utt.raw) else None
    if got is None:
        return None
    words = [w for w in got.rest.split() if w not in _OF_THEM]
    unit = words[0] if words and singular(words[0]) in CONTAINERS | {"pc", "pcs", "piece"} else None
    named = [w for w in words[1 if unit else 0:] if w != "of"]
    m = resolve_item(" ".join(named)) if named else None
    if m is not None and not (m.sku or m.candidates) or set(named) & LOCATION_WORDS:
        return None
    q = int(got.count) if got.count.is_integer() else got.count
    log = None
    if got.direction and m is not None:  # said as a whole command: that command when there is nothing to correct
        log = understand(utt.norm[len(got.marker):].strip())
    return Intent("undo", source="template", text=utt.raw, sku=m.sku if m else None, quantity=q,
                  candidates=tuple(m.candidates) if m else (), direction=got.direction,
                  extra={"amend": {"words": got.marker, "was": got.was, "unit": unit, "log": log}},
                  explain={"path": "correction after a log", "count": q, "was": got.was, "words": got.rest})
