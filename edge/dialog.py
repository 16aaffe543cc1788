"""What the box does with an understood intent, including the short exchanges that need a second
utterance without a new wake word:

- **ask-back**: the item is ambiguous ("M8 bolts or washers?") or unknown ("Which item?"); the
  answer is taken within the follow-up window and the command completed.
- **read-back**: a log whose quantity was recognised with low confidence, or that would take stock
  below zero, is read back and written only after "yes".

:func:`act` and :func:`follow_up` return an :class:`Outcome`: the reply text, and a
:class:`Pending` question when the box waits for an answer. A record is committed to SQLite
before any text that says it was logged is returned.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Literal

from edge import reply
from edge.nlu.types import Intent
from edge.store import Item, Record, Store

MAX_QUANTITY = 1_000_000  # one spoken log above this is a mishearing, not a delivery (and keeps SQLite's 64-bit INTEGER safe)
FUZZY_CUTOFF = 70  # rapidfuzz WRatio score (0–100) for matching an answer to a candidate item

_YES = {"en": r"^(?:yes|yeah|yep|yup|sure|correct|right|that's right|thats right|ok|okay|confirm|do it|log it)\b",
        "zh": r"^(?:是|对|好的|好|确认|没错)"}
_NO = {"en": r"^(?:no|nope|nah|cancel|wrong|don't|dont|stop|never mind|nevermind)\b",
       "zh": r"^(?:不是|不对|不|取消|算了)"}
_ORDINALS = {"first": 0, "1st": 0, "one": 0, "second": 1, "2nd": 1, "two": 1, "third": 2, "3rd": 2, "last": -1,
             "第一": 0, "第二": 1, "第三": 2, "最后": -1}


@dataclass(frozen=True)
class Pending:
    """A question the box asked; ``kind``: ``choose_item`` (``candidates`` are the items offered;
    empty = any inventory item) or ``confirm`` (``intent`` is written after a yes)."""

    kind: Literal["choose_item", "confirm"]
    intent: Intent
    candidates: tuple[Item, ...] = ()


@dataclass(frozen=True)
class Outcome:
    text: str
    pending: Pending | None = None
    record: Record | None = None


def yes_no(text: str, language: str = "en") -> bool | None:
    """True for a yes, False for a no, None when the answer is neither."""
    t = re.sub(r"[^\w\s']", " ", text.strip().lower()).strip()
    if re.search(_YES.get(language, _YES["en"]), t):
        return True
    if re.search(_NO.get(language, _NO["en"]), t):
        return False
    return None


def resolve_choice(text: str, candidates: list[Item] | tuple[Item, ...]) -> Item | None:
    """The candidate an answer names ("the bolts", "washers", "the first one"), or None.

    Matching is rapidfuzz's WRatio over each candidate's name and aliases (cut-off
    :data:`FUZZY_CUTOFF`); ordinals pick by position.
    """
    from rapidfuzz import fuzz, process

    t = re.sub(r"[^\w\s]", " ", text.lower()).strip()
    if not t or not candidates:
        return None
    for word, idx in _ORDINALS.items():
        if re.search(rf"(?:^|\s){re.escape(word)}(?:\s|$)", t) or (not word.isascii() and word in t):
            if -len(candidates) <= idx < len(candidates) and len(candidates) > 1:
                return candidates[idx]
    choices = {}
    for i, it in enumerate(candidates):
        for name in (it.item, *it.aliases, it.sku):
            choices[(i, name)] = name.lower()
    best = process.extractOne(t, choices, scorer=fuzz.WRatio, score_cutoff=FUZZY_CUTOFF)
    return candidates[best[2][0]] if best else None


def ask_back_text(candidates: list[Item] | tuple[Item, ...]) -> str:
    """"M8 bolts or washers?"; with no candidates, "Which item do you mean?"."""
    if not candidates:
        return "Which item do you mean?"
    names = [reply.plural(c.item) if not c.item.endswith("s") else c.item for c in candidates]
    return (", ".join(names[:-1]) + " or " + names[-1] + "?") if len(names) > 1 else f"Do you mean {names[0]}?"


def read_back_text(intent: Intent, item: Item) -> str:
    q = intent.quantity or 0
    did = "used" if intent.direction == "out" else "received"
    delta = -q if intent.direction == "out" else q
    if item.quantity + delta < 0:
        return (f"That would take {item.item} below zero: there {'is' if item.quantity == 1 else 'are'} only "
                f"{item.quantity} {reply.place(item.location)}. Log {reply.amount(item, q)} {did} anyway? Say yes or no.")
    return f"Did you say {reply.amount(item, q)} {did}? Say yes to log it."


def act(intent: Intent, store: Store, utterance: str, turn_id: str, *, confirmed: bool = False) -> Outcome:
    """Carry out ``intent`` on ``store``.

    Raises:
        edge.store.StoreError: the store refused the write (nothing was logged).
    """
    if intent.intent == "undo":
        return Outcome(reply.undo_reply(store.undo(utterance, turn_id)))
    if intent.intent not in ("query_stock", "log_record"):
        return Outcome(intent.answer or reply.NOT_UNDERSTOOD)
    item = store.get(intent.sku) if intent.sku else None
    if item is None:
        cands = tuple(i for i in (store.get(s) for s in intent.extra.get("candidates", ())) if i is not None)
        if len(cands) > 1:
            return Outcome(ask_back_text(cands), Pending("choose_item", intent, cands))
        return Outcome("Which item do you mean?", Pending("choose_item", intent, ()))
    if intent.intent == "query_stock":
        return Outcome(reply.query_reply(item, intent.location))
    if not intent.quantity:
        return Outcome(reply.NO_QUANTITY)
    if abs(intent.quantity) > MAX_QUANTITY:
        return Outcome(f"{intent.quantity} is more than I can log at once; nothing was logged.")
    delta = -intent.quantity if intent.direction == "out" else intent.quantity
    needs_read_back = intent.extra.get("low_confidence_quantity") or item.quantity + delta < 0
    if needs_read_back and not confirmed:
        return Outcome(read_back_text(intent, item), Pending("confirm", intent))
    record, item = store.log(item.sku, delta, utterance, turn_id)
    return Outcome(reply.log_reply(record, item), record=record)


def follow_up(pending: Pending, text: str, store: Store, turn_id: str, language: str = "en") -> Outcome:
    """The answer ``text`` to ``pending``: complete, confirm or drop the command."""
    if pending.kind == "confirm":
        yn = yes_no(text, language)
        if yn:
            return act(pending.intent, store, pending.intent.text, turn_id, confirmed=True)
        return Outcome("OK, nothing was logged." if yn is False else "I didn't hear a yes, so nothing was logged.")
    choice = resolve_choice(text, pending.candidates or tuple(store.items()))
    if choice is None:
        return Outcome("Sorry, I still don't know which item, so nothing was done.")
    return act(dataclasses.replace(pending.intent, sku=choice.sku), store, pending.intent.text, turn_id)
