"""Speculation during the trailing silence, without side effects.

When silence starts after speech, the voice loop decodes the utterance so far, asks the grammar
whether it is a whole command (:meth:`edge.loop.stages.Understander.completeness`) and, when the
grammar understood it, prepares the reply text and its audio against a :class:`PreviewInventory`
(the real store read, nothing written). At the endpoint the turn runs for real on the final
transcript; the prepared audio is used only when the final reply text is the same, so the final
transcript always decides.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from edge.errors import EdgeError
from edge.stages.asr.base import Recognition
from edge.stages.nlu.followup import (
    direction_answer,
    is_cancel,
    place_choice,
    resolve_choice,
    variant_pick,
    yes_no,
)
from edge.stages.nlu.grammar import COMPLETE, UNCLEAR
from edge.stock.store import Record

if TYPE_CHECKING:
    from edge.loop.stages import Inventory, Understander
    from edge.stages.dialog import Pending
    from edge.stages.nlu.types import Intent
    from edge.stock.store import Item


class NotPreviewable(EdgeError):
    """The reply depends on a write that cannot be previewed (an undo walks the history)."""


@dataclass
class Speculation:
    """What was prepared when silence started: ``rec`` (the decode of the utterance so far),
    ``verdict`` (``complete``, ``incomplete`` or ``unclear``), the grammar's ``intent``, and the
    reply it would get: ``reply_text`` and its ``wav`` (None when not prepared). ``timing``: ms of
    wall-clock time its steps took (``speculation_decode_ms``, ``speculation_nlu_ms``: grammar and
    the previewed store step, ``speculation_tts_ms``: the reply's audio, when prepared)."""

    rec: Recognition
    verdict: str
    intent: Intent | None = None
    reply_text: str | None = None
    wav: Path | None = None
    timing: dict[str, float] = field(default_factory=dict)

    def discard(self) -> None:
        """Speech went on, or the final reply differs: the prepared audio is deleted."""
        if self.wav is not None:
            self.wav.unlink(missing_ok=True)
            self.wav = None


class PreviewInventory:
    """An :class:`edge.loop.stages.Inventory` that reads ``store`` and writes nothing: :meth:`log`
    returns the record and item a write would give (record id 0, no time)."""

    def __init__(self, store: Inventory):
        self.store = store

    def items(self) -> list[Item]:
        return self.store.items()

    def get(self, sku: str) -> Item | None:
        return self.store.get(sku)

    def log(self, sku: str, delta: int | float, utterance: str, turn_id: str,
            location: str | None = None) -> tuple[Record, Item]:
        """What ``store.log`` would return; raises :class:`NotPreviewable` for an unknown SKU or
        a place the item is not stored at."""
        item, place = self._at(sku, location)
        return Record(0, "", sku, delta, utterance, turn_id, None, place), _moved(item, place, delta)

    def log_many(self, changes: list[tuple[str, int | float, str | None]], utterance: str,
                 turn_id: str) -> list[tuple[Record, Item]]:
        """What ``store.log_many`` would return (each change as :meth:`log`)."""
        return [self.log(sku, delta, utterance, turn_id, location) for sku, delta, location in changes]

    def transfer(self, sku: str, quantity: int | float, from_location: str, to_location: str,
                 utterance: str, turn_id: str) -> tuple[Record, Record, Item]:
        """What ``store.transfer`` would return; raises :class:`NotPreviewable` for an unknown SKU
        or source, or a destination the item is not stored at yet (the reply would name it new)."""
        item, src = self._at(sku, from_location)
        _item, dst = self._at(sku, to_location)
        out = Record(0, "", sku, -quantity, utterance, turn_id, None, src, kind="transfer")
        into = Record(0, "", sku, quantity, utterance, turn_id, None, dst, kind="transfer")
        return out, into, _moved(_moved(item, src, -quantity), dst, quantity)

    def count(self, sku: str, counted: int | float, utterance: str, turn_id: str,
              location: str | None = None) -> tuple[Record, Item]:
        """What ``store.count`` would return; raises :class:`NotPreviewable` as :meth:`log`."""
        item, place = self._at(sku, location)
        delta = counted - (item.at(place) or 0)
        return (Record(0, "", sku, delta, utterance, turn_id, None, place, kind="count", counted=counted),
                _moved(item, place, delta))

    def _at(self, sku: str, location: str | None) -> tuple[Item, str]:
        item = self.store.get(sku)
        place = item.place(location) if item is not None and location else item.location if item else None
        if item is None or place is None:
            raise NotPreviewable(f"unknown SKU {sku} or place {location}")
        return item, place

    def place_contents(self, location: str, limit: int = 5) -> tuple[list[tuple[Item, int | float]], int]:
        return self.store.place_contents(location, limit)

    def low_stock(self, limit: int = 5) -> tuple[list[Item], int]:
        return self.store.low_stock(limit)

    def undo(self, utterance: str, turn_id: str, sku: str | None = None) -> tuple[Record, Item] | None:
        raise NotPreviewable("an undo's reply depends on the history")

    def site_offline(self) -> tuple[str, int] | None:
        return self.store.site_offline()

    # records questions only read: their reply is prepared like a stock question's
    @property
    def calendar(self):
        return self.store.calendar

    @property
    def box(self) -> str:
        return self.store.box

    def reading(self):
        return self.store.reading()


def _moved(item: Item, place: str, delta: int | float) -> Item:
    """``item`` with ``delta`` added at ``place``."""
    stock = tuple((p, q + delta if p == place else q) for p, q in item.places())
    return dataclasses.replace(item, quantity=item.quantity + delta, stock=stock)


def is_new_command(text: str, understanding: Understander, language: str = "en") -> bool:
    """Whether ``text``, said while the box waits for the answer to its question, is a command of
    its own ("we used sixteen M8 bolts" after "how many washers?"): the grammar reads a command in
    it, whole or not yet, and it is not a cancel. Taken as the answer, its number would be logged
    against the question's item; it is a new command instead, and the question is dropped."""
    if is_cancel(text, language):
        return False
    return understanding.completeness(text)[1] is not None


#: how the grammar found the item when the words named it only in part (one word of its name, a
#: near spelling, the only item at the place said): a short window's mishearing looks like that
#: ("How many Quorvex brackets" as "How many one m8 sprockets": M8 by one word)
LOOSE_ITEM = frozenset({"word", "fuzzy", "location"})


def windowed_stands(verdict: str, intent: Intent | None) -> bool:
    """Whether a transcript decoded in Whisper's short window is kept without the full-window
    recheck (:meth:`edge.stages.asr.whisper.WhisperRecognizer.recheck`): the grammar's ``verdict``
    on it is complete, and its ``intent`` (None for an answer to the box's question) did not find
    its item only loosely (:data:`LOOSE_ITEM`)."""
    return verdict == COMPLETE and (intent is None or intent.explain.get("item_via") not in LOOSE_ITEM)


def answer_verdict(pending: Pending, text: str, items: list[Item], language: str = "en") -> str:
    """An answer to the box's question is complete when it already answers it (a yes/no to a
    read-back, an item that picks one of the choices); else unclear (the plain tail decides). A
    count is always unclear: a bare number may be followed by what it counts ("sixteen … M8
    bolts", a different item), and a number cut off from it would be logged against the question's."""
    if pending.kind == "confirm":
        return COMPLETE if yes_no(text, language) is not None else UNCLEAR
    if is_cancel(text, language):
        return COMPLETE
    if pending.kind == "quantity":  # the plain tail: "sixteen … M8 bolts" must not end at "sixteen"
        return UNCLEAR
    if pending.kind == "direction":
        return COMPLETE if direction_answer(text, language) is not None else UNCLEAR
    if pending.kind == "choose_place":
        return COMPLETE if pending.places and place_choice(text, pending.places) is not None else UNCLEAR
    if pending.variant is not None:
        return COMPLETE if variant_pick(text, pending.candidates) is not None else UNCLEAR
    return COMPLETE if resolve_choice(text, pending.candidates or tuple(items)) is not None else UNCLEAR
