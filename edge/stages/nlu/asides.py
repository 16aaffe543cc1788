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
