"""Stock said to be not the store's (English), for :func:`edge.stages.nlu.accounting.unexplained`:
a change of it written against the item's bin would be a wrong record, so nothing is written and
the reply says which words.

- ``someones``: another's stock ("we used Bob's 3 fuses", "his fuses", "fuses belonging to Bob"): the
  store's count does not change;
- ``loan``: borrowed or lent ("we borrowed 3 fuses", "we lent 3 fuses to site B"): it goes back or
  comes back, so it is neither a use nor a receipt;
- ``swap``: traded or swapped for something else ("we swapped 3 fuses for washers", "traded 3 fuses"):
  two changes in one, and the other one's count is not said ("swapped out 4 fuses", "… for new
  ones" is a use, as before);
- ``place``: a use taken from a place the store does not keep ("we used 3 fuses from the van", "out
  of the back of the truck", "off the truck"): they were never in the item's bin; stock given back
  to someone or somewhere ("we returned 3 fuses to site B"): it leaves the store. A stock place or
  the stock itself ("from bin 30", "from the shelf", "from stock", "back to bin 30") is the store's.

A leaf: the caller says whether the parse understood a place of the inventory and gives the item's
name words (a name word after "from" is the item's own: "cut 3 metres off the cable").
"""
from __future__ import annotations

import re

from edge.stages.nlu.lexicon import LOCATION_WORDS, NOT_ITEM

#: "Bob's", "the customer's", "site B's" as heard; "it's", "that's", "let's" … say "is" or "us"
_POSSESSIVE = re.compile(r"(?<![\w'\u2019])([A-Za-z][\w-]*)['\u2019]s\b")
_NOT_POSSESSIVE = frozenset("it that there what who he she let here where how this one everyone everybody nobody "
                            "today yesterday tonight week month year day shift weekend".split())
#: "his 3 fuses", "their fuses", "your fuses"; "her" only after a taking verb ("we gave her 3 fuses" is ours)
#: said to be another's: "fuses belonging to Bob", "owned by the customer"
_OWNED = re.compile(r"\b(?:belong(?:s|ing|ed)? to|owned by|on loan from|that (?:are|were|is) (?:his|hers|theirs))\b")
_PRONOUN = re.compile(r"\b(?:his|their|your|theirs|yours|someone elses|somebody elses|(?:used|took|grabbed|pulled|"
                      r"nicked|pinched|borrowed) her)\b(?= (?:\d+(?:\.\d+)? )?(?P<next>\w+))")
_LOAN = re.compile(r"\b(?:borrow|borrows|borrowed|borrowing|lend|lends|lent|lending|loan|loans|loaned|loaning|"
                   r"on loan)\b")
_TRADE = re.compile(r"\b(?:traded|trade|trading|exchanged|exchange|exchanging|bartered)\b")
#: "swapped 3 fuses for washers / for 2 washers / with the other team": the other side named; "… for new
#: ones", "… with new ones", "… for the compressor" (what they went into) are a use
_SWAP_FOR = re.compile(r"\b(?:swap|swapped|swapping|swaps)\b(?: \S+){0,5}? "
                       r"(?:for (?!(?:the|a|an|our|my|this|that|its)\b)|with )"
                       r"(?!(?:new|fresh|spare|working|good|replacement)\b|ones?\b)"
                       r"(?:(?:the|a|an|our|my|their|his|her|that|this) )?(?:other )?\S+")
#: where a use was taken from: "from the van", "out of the back of the truck"
_SOURCE = re.compile(r"\b(?:from|out of|off)(?: (?:the|a|an|our|my|that|this|those|these|one of the))?"
                     r"(?: (?:back|top|bottom|end|side|front|inside|rest) of(?: the| a| an| our| my)?)?"
                     r" (?P<place>[a-z][\w-]*)")
#: stock given back to someone or somewhere ("we returned 3 fuses to site B", "gave 2 back to Bob"): it leaves
#: the store, so it is no receipt; back to a stock place ("to bin 30") is one, as before
_BACK_TO = re.compile(r"\b(?:returned|return|returning|gave|given|sent|brought|handed|took|taken)\b(?: \S+){0,5}? "
                      r"(?P<dest>(?:back )?to(?: (?:the|a|an|our|my|his|her|their))? (?P<place>[a-z][\w-]*)(?: [a-z0-9])?)\b")
#: where the store's own stock is: a place word, the stock itself, what came in
_STORE_SOURCES = LOCATION_WORDS | frozenset(
    "stock stocks store stores storeroom stockroom inventory warehouse shelves bins drawers racks boxes cabinets "
    "delivery deliveries batch order shipment consignment pack packet bag tub tin can reel roll lot supply supplies "
    "spares spare reserve pile heap them it those these there here what one ones".split())


def not_ours(raw: str, norm: str, direction: str | None, stock_place: bool,
             item_words: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """``(kind, words)`` when a log's words say stock that is not the store's (see module doc), else
    None. ``raw``: the transcript as heard (possessives); ``norm``: its normal form; ``direction``:
    the log's (``in``/``out``/None); ``stock_place``: the parse understood a place of the inventory;
    ``item_words``: the understood item's name words (singular and as said). Raises nothing."""
    got = _someones(raw, norm, item_words)
    if got:
        return "someones", got
    m = _LOAN.search(norm) or _TRADE.search(norm) or _SWAP_FOR.search(norm)
    if m:
        return ("loan" if _LOAN.search(m.group(0)) else "swap"), m.group(0)
    if direction == "in" and not stock_place:
        for m in _BACK_TO.finditer(norm):
            if "back" in m.group(0).split() or m.group(0).split()[0].startswith("return"):
                place = m.group("place")
                if not (place in _STORE_SOURCES or place.isdigit()):
                    return "place", m.group("dest")
    if direction != "in" and not stock_place:
        for m in _SOURCE.finditer(norm):
            place = m.group("place")
            if not (place in _STORE_SOURCES or place in item_words or place.rstrip("s") in item_words
                    or place.isdigit() or place in NOT_ITEM):  # "hold off on …": no place
                return "place", m.group(0)
    return None


def _someones(raw: str, norm: str, item_words: frozenset[str]) -> str | None:
    """The words of another's stock said as the one changed ("Bob's 3 fuses", "his fuses"), or None."""
    for m in _POSSESSIVE.finditer(raw or ""):
        if m.group(1).lower() not in _NOT_POSSESSIVE:
            return m.group(0)
    m = _OWNED.search(norm)
    if m:
        return m.group(0)
    for m in _PRONOUN.finditer(norm):
        nxt = m.group("next")
        if re.fullmatch(r"\d+(?:\.\d+)?", nxt) or nxt in item_words or nxt.rstrip("s") in item_words:
            return m.group(0)
    return None
