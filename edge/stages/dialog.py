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
from dataclasses import dataclass
from typing import Literal

from edge.stages import reply
from edge.stages.nlu.followup import ask_back_text, resolve_choice, yes_no
from edge.stages.nlu.types import Intent
from edge.stages.store import Item, Record, Store

MAX_QUANTITY = 1_000_000  # one spoken log above this is a mishearing, not a delivery (and keeps SQLite's 64-bit INTEGER safe)

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


def read_back_text(intent: Intent, item: Item, language: str = "en") -> str:
    q = intent.quantity or 0
    did = "used" if intent.direction == "out" else "received"
    delta = -q if intent.direction == "out" else q
    if language == "zh":
        did = "用了" if intent.direction == "out" else "收到"
        if item.quantity + delta < 0:
            return (f"这样{reply.zh_name(item)}会低于零：{reply.zh_place(item.location)}只有"
                    f"{reply.zh_amount(item, item.quantity)}。还是记录{did}{reply.zh_amount(item, q)}吗？请说是或不是。")
        return f"你是说{did}{reply.zh_amount(item, q)}吗？说“是”就记录。"
    if item.quantity + delta < 0:
        return (f"That would take {item.item} below zero: there {'is' if item.quantity == 1 else 'are'} only "
                f"{item.quantity} {reply.place(item.location)}. Log {reply.amount(item, q)} {did} anyway? Say yes or no.")
    return f"Did you say {reply.amount(item, q)} {did}? Say yes to log it."


def act(intent: Intent, store: Store, utterance: str, turn_id: str, *, confirmed: bool = False,
        language: str = "en") -> Outcome:
    """Carry out ``intent`` on ``store``.

    Raises:
        edge.stages.store.StoreError: the store refused the write (nothing was logged).
    """
    if intent.intent == "undo":
        return Outcome(reply.undo_reply(store.undo(utterance, turn_id), language))
    if intent.intent not in ("query_stock", "log_record"):
        return Outcome(intent.answer or reply.text("not_understood", language))
    item = store.get(intent.sku) if intent.sku else None
    if item is None:
        cands = tuple(i for i in (store.get(s) for s in intent.extra.get("candidates", ())) if i is not None)
        if len(cands) > 1:
            return Outcome(ask_back_text(cands, language), Pending("choose_item", intent, cands))
        return Outcome(ask_back_text((), language), Pending("choose_item", intent, ()))
    if intent.intent == "query_stock":
        return Outcome(_with_site_note(reply.query_reply(item, intent.location, language), store, language))
    if not intent.quantity:
        return Outcome(reply.text("no_quantity", language))
    if abs(intent.quantity) > MAX_QUANTITY:
        return Outcome(reply.text("too_many", language, q=intent.quantity))
    delta = -intent.quantity if intent.direction == "out" else intent.quantity
    needs_read_back = intent.extra.get("low_confidence_quantity") or item.quantity + delta < 0
    if needs_read_back and not confirmed:
        return Outcome(read_back_text(intent, item, language), Pending("confirm", intent))
    record, item = store.log(item.sku, delta, utterance, turn_id)
    return Outcome(_with_site_note(reply.log_reply(record, item, language), store, language), record=record)


def _with_site_note(text: str, store: Store, language: str) -> str:
    # on a site, an answer given while the site is unreachable is this box's view only: say so
    offline = store.site_offline()
    return text if offline is None else f"{text} {reply.offline_note(*offline, language)}"


def follow_up(pending: Pending, text: str, store: Store, turn_id: str, language: str = "en") -> Outcome:
    """The answer ``text`` to ``pending``: complete, confirm or drop the command."""
    if pending.kind == "confirm":
        yn = yes_no(text, language)
        if yn:
            return act(pending.intent, store, pending.intent.text, turn_id, confirmed=True, language=language)
        return Outcome(reply.text("declined" if yn is False else "no_yes", language))
    sku = resolve_choice(text, pending.candidates or tuple(store.items()))
    if sku is None:
        return Outcome(reply.text("no_choice", language))
    return act(dataclasses.replace(pending.intent, sku=sku), store, pending.intent.text, turn_id, language=language)
