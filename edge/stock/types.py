"""The stock's values: an :class:`Item` with its stock per place, a :class:`Record` (one stock change
as this file holds it) and a :class:`Movement` (the same change as the site sees it), and how each is
read from a row of the ``items`` / ``records`` tables (:mod:`edge.stock.store`)."""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from edge.stages.names import name_key
from edge.stock import places
from edge.stock.places import clean, clean_or_none

__all__ = ["Item", "Record", "Movement", "RECORD_KINDS", "ITEM_COLS", "RECORD_COLS", "MOVEMENT_SELECT",
           "record_of", "movement_of"]


@dataclass(frozen=True)
class Item:
    """One inventory item. ``quantity``: the total over its places, in ``unit`` (an int; a float
    only for a unit of :data:`edge.stock.csvfile.DECIMAL_UNITS`). ``location``: its first place.

    ``stock``: ``((place, quantity), ...)`` per place, in the order the places were added (empty in
    an item built by hand: then ``location`` holds everything). ``reorder_level``: low stock at or
    below it, or None. Neither takes part in ``==``.
    """

    sku: str
    item: str
    location: str
    quantity: int | float
    unit: str
    aliases: tuple[str, ...]
    stock: tuple[tuple[str, int | float], ...] = field(default=(), compare=False)
    reorder_level: int | float | None = field(default=None, compare=False)

    def places(self) -> tuple[tuple[str, int | float], ...]:
        """``stock``, or ``((location, quantity),)`` for an item built without it."""
        return self.stock or ((self.location, self.quantity),)

    def place(self, location: str | None) -> str | None:
        """The stored spelling of ``location`` among this item's places (by name key), or None. A
        place said by its kind alone ("shelf", "the drawer") is the one place of that kind the item
        has (None when it has none or several; :func:`edge.stock.places.by_kind`)."""
        if not location:
            return None
        key = name_key(location)
        hit = next((p for p, _q in self.places() if name_key(p) == key), None)
        return hit if hit is not None else places.by_kind([p for p, _q in self.places()], location)

    def at(self, location: str) -> int | float | None:
        """The quantity at ``location``, or None when the item is not stored there."""
        key = name_key(location)
        return next((q for p, q in self.places() if name_key(p) == key), None)


#: The kinds of record: a voice or console ``log``, one of a ``transfer``'s two rows, a stock
#: ``count`` (an import's or a voice count), an ``undo`` (compensating record).
RECORD_KINDS = ("log", "transfer", "count", "undo")


@dataclass(frozen=True)
class Record:
    """One stock change.

    ``time``: ISO 8601 in UTC (e.g. ``2025-01-31T09:15:02.123+00:00``). ``delta``: signed change
    in the item's unit (positive = in, negative = out) at ``location``. ``undoes``: for a
    compensating record, the ``id`` of the record it reverts; ``None`` otherwise. ``kind``: one of
    :data:`RECORD_KINDS`. ``counted``: for a count, the quantity counted (``delta`` is then counted −
    recorded). ``op``: the gid of the first row of a multi-row operation (a transfer's two rows, or
    the undo of one), else None.
    """

    id: int
    time: str
    sku: str
    delta: int | float
    utterance: str
    turn_id: str
    undoes: int | None
    location: str | None = None
    kind: str = "log"
    counted: int | float | None = None
    op: str | None = None


@dataclass(frozen=True)
class Movement:
    """One record as the site sees it: global identity instead of the file's row id.

    ``gid``: ULID (26 characters, unique across boxes; its time part orders records, see
    :mod:`edge.stock.order`). ``box``: the id of the box
    that wrote it. ``seq``: its number among that box's records (1, 2, ...). ``time``: ISO 8601,
    UTC, the writing box's clock. ``delta``: signed change in the item's unit. ``undoes``: the
    ``gid`` of the record it reverts (always the same box's), or ``None``. ``location``, ``kind``,
    ``counted``, ``op``: as :class:`Record`.
    """

    gid: str
    box: str
    seq: int
    time: str
    sku: str
    delta: int | float
    utterance: str
    turn_id: str
    undoes: str | None
    location: str | None = None
    kind: str = "log"
    counted: int | float | None = None
    op: str | None = None


def record_of(row: sqlite3.Row | tuple) -> Record:
    rid, time, sku, delta, utterance, turn_id, undoes, location, kind, counted, op = row
    return Record(int(rid), time, sku, clean(delta), utterance, turn_id, None if undoes is None else int(undoes),
                  location, kind, clean_or_none(counted), op)


ITEM_COLS = "sku, item, location, quantity, unit, aliases, reorder_level"
RECORD_COLS = "id, time, sku, delta, utterance, turn_id, undoes, location, kind, counted, op"
MOVEMENT_SELECT = ("SELECT r.gid, r.box, r.seq, r.time, r.sku, r.delta, r.utterance, r.turn_id, u.gid, "
                    "r.location, r.kind, r.counted, r.op FROM records AS r LEFT JOIN records AS u ON u.id = r.undoes")


def movement_of(row: tuple) -> Movement:
    gid, box, seq, time, sku, delta, utterance, turn_id, undoes, location, kind, counted, op = row
    return Movement(gid, box, int(seq), time, sku, clean(delta), utterance, turn_id, undoes, location, kind,
                    clean_or_none(counted), op)
