"""Items named beside a change that the change does not use (English): the count must never go to
them, and the box does not guess which item it was for, so nothing is written and the reply names
the words.

- :func:`dismissed`: an item set aside beside the change ("forget the washers, we used 3 fuses",
  "never mind the washers, …", "not the washers, 3 fuses", "we used 3 fuses, skip the washers"): was
  a record of it to be taken back, or the count meant for it? (``aside``);
- :func:`other_named`: the whole name of another item said beside the one understood ("we swapped 3
  fuses for washers", a near exemplar that took "washers" out of "forget the washers, we used 3
  fuses"): the parse left a name unexplained (``other_item``).

A leaf: the caller gives the inventory's name words and phrases (:class:`edge.stages.nlu.resolve.ItemIndex`'s).
"""
from __future__ import annotations

import re
from collections.abc import Container, Mapping

from edge.stages.nlu.lexicon import LOCATION_WORDS, NOT_ITEM, fold, singular

#: words that set a thing aside; "forget to", "never mind," alone and "not 3" are no item set aside
_DISMISS = re.compile(r"\b(?P<verb>forget(?: about)?|forgetting(?: about)?|never ?mind|ignore|skip|disregard|"
                      r"drop|leave out|leave|scratch|not|no|nothing for|none of)"
                      r"(?: (?:the|those|these|that|this|my|our|all the|any))? (?P<thing>[a-z][\w-]*)")
#: words of a measure or a container: no item's name on their own
_MEASURES = frozenset("box pack packet can pair bag roll set piece tin pallet carton case unit tube bottle jar drum "
                      "spool reel coil tub bucket pail sachet crate cartridge sheet litre liter metre meter kilo gram "
                      "kg mm cm m l ml g".split())


def dismissed(norm: str, item_words: Container[str]) -> str | None:
    """The words that set an item aside beside a change ("forget the washers", "not the washers"), or
    None. ``norm``: the normal form; ``item_words``: words of the inventory's names (singular).
    Raises nothing."""
    for m in _DISMISS.finditer(norm):
        thing = m.group("thing")
        if thing in NOT_ITEM or thing.isdigit():
            continue
        if singular(thing) in item_words or thing in item_words:
            return m.group(0)
    return None


def other_named(tokens: tuple[str, ...], phrases: Mapping[tuple[str, ...], set[str]], used: set[str],
                used_words: set[str]) -> str | None:
    """The words of a whole name or alias of an item the change does not use, said outside the names
    of the items it does (``used``: their SKUs; ``used_words``: their name words, singular), or None.
    ``tokens``: the utterance's normal form, split; ``phrases``: name token tuples (singular) → SKUs.
    Raises nothing."""
    toks = [singular(t) for t in tokens]
    folded = {fold(w) for w in used_words}  # "Muller" is how "Müller" is said: the same name, not another's
    longest = max((len(p) for p in phrases), default=1)
    taken: set[int] = set()
    for n in range(min(longest, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            gram = tuple(toks[i:i + n])
            if taken.intersection(range(i, i + n)) or gram not in phrases:
                continue
            if phrases[gram] & used or all(fold(w) in folded for w in gram):
                taken.update(range(i, i + n))  # the understood item's own name, or words of it
                continue
            if all(w in NOT_ITEM or w in _MEASURES or w in LOCATION_WORDS or w.isdigit() for w in gram):
                continue
            return " ".join(tokens[i:i + n])
    return None


def several_items(t: str, resolve_item) -> bool:
    """Whether ``t`` (lower case) names two items or more on the two sides of "and", "or", "than",
    "with" (``resolve_item(words)``: the resolver's match, with ``sku`` or ``candidates``)."""
    # the sum's own words are no part of a name ("drill bits combined" is drill bits)
    bare = re.sub(r"\b(?:combined|together|altogether|in total|total|both|each)\b", " ", t)
    sides = [p for p in re.split(r"\b(?:and|or|than|with|versus|vs)\b", bare) if p.strip()]
    if len(sides) < 2:
        return False
    named = [m for m in (resolve_item(p) for p in sides) if m.sku or m.candidates]
    return len({m.sku or tuple(m.candidates) for m in named}) >= 2


def another_named(sku: str | None, tokens: tuple[str, ...], index) -> bool:
    """Whether a stock question answered for item ``sku`` also says another item's whole name, with
    no "and"/"or" between them ("which do we have more on, washer more cable ties": the recognizer's
    "more" for "or"): that one item's stock alone would leave the other out. ``tokens``: the
    question's normal form, split; ``index``: the resolver's :class:`edge.stages.nlu.resolve.ItemIndex`."""
    return bool(sku) and other_named(tokens, index.phrases, {sku}, set(index.name_words.get(sku, ()))) is not None
