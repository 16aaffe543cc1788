"""Stock per place in the store's SQLite file: the ``stock`` table and how a record changes it.

One row per SKU and place (``place_key``: :func:`edge.stages.names.name_key` of the place, so
"Bin 12" and "bin 12" are one place); ``items.quantity`` is the sum of an item's rows.

A place's quantity is a function of the records held for it, whatever order they arrived in (so
every box of a site agrees): the counted value of its latest stock count that is not undone, plus
the deltas of the records after that count; with no such count, its ``base`` (the quantity first
imported) plus every delta. "Latest" and "after" are by the time part of the record's gid (ms:
a hybrid logical clock, never behind the records held when it was written, so a box's records
follow their sequence whatever the wall clock does: :mod:`edge.stock.order`), then box, then
sequence. A count made on two boxes therefore sets the quantity twice to the
counted value instead of adding its difference twice. Records of an older schema have no counted
value and are plain deltas.

Every function takes an open connection inside the caller's transaction and raises ``sqlite3``
errors as they are (the store turns them into :class:`edge.stock.store.StoreError`).
"""
from __future__ import annotations

import json
import math
import re
import sqlite3
from contextlib import contextmanager
from typing import Callable, Iterator

from edge.stages.names import name_key
from edge.stock.csvfile import InventoryRow, allows_decimals

__all__ = ["IMPORT_TURN_PREFIX", "ACTIVE_COUNT", "clean", "find_place", "add_place", "settle", "recompute", "places_of", "MAX_QUANTITY", "Refused",
           "check_quantity", "unit_of", "place_for", "quantity_at", "import_rows", "at_place", "clean_or_none",
           "bump_items_version"]

#: Turn ids of stock-count records written by :meth:`edge.stock.store.Store.import_csv` start with this.
IMPORT_TURN_PREFIX = "import:"
#: The largest quantity one record or one place may hold, in the item's unit (10^9, as an import).
MAX_QUANTITY = 10**9

# the order of records at a place: gid time (ms, its first 10 characters; edge.stock.order), box, per-box sequence
_KEY = "substr(r.gid, 1, 10), r.box, r.seq"
#: The latest count at a place ``(sku, location)`` that is not undone: ``(id, time key, box, seq,
#: counted)``, or no row.
ACTIVE_COUNT = (f"SELECT r.id, {_KEY}, r.counted FROM records AS r WHERE r.sku = ? AND r.location = ? "
                 "AND r.kind = 'count' AND r.counted IS NOT NULL "
                 "AND NOT EXISTS (SELECT 1 FROM records AS u WHERE u.undoes = r.id) "
                 "ORDER BY substr(r.gid, 1, 10) DESC, r.box DESC, r.seq DESC LIMIT 1")


def clean(value: int | float) -> int | float:
    """``value`` as stored: an integral float becomes an int, others are rounded to 6 decimals
    (sums of decimals stay exact enough to speak). Raises ``ValueError`` when not finite."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} is not a finite number")
        return int(value) if value.is_integer() else round(value, 6)
    return int(value)


def clean_or_none(value: int | float | None) -> int | float | None:
    """:func:`clean`, with None kept."""
    return None if value is None else clean(value)


def find_place(conn: sqlite3.Connection, sku: str, location: str) -> str | None:
    """The stored spelling of ``sku``'s place ``location`` (compared by name key), or None."""
    row = conn.execute("SELECT location FROM stock WHERE sku = ? AND place_key = ?",
                       (sku, name_key(location))).fetchone()
    return None if row is None else row[0]


def by_kind(names: list[str], said: str) -> str | None:
    """The one of ``names`` (places, e.g. ``["shelf D", "drawer 12"]``) whose kind ``said`` names
    alone ("shelf", "the shelf", "drawers"), or None for no kind word, none or several of that kind."""
    words = name_key(said).split()
    words = words[1:] if words[:1] == ["the"] and len(words) > 1 else words
    if len(words) != 1 or not words[0].isalpha():
        return None
    kind = re.sub(r"(?<=x)es$|(?<=[^s])s$", "", re.sub(r"ves$", "f", words[0]))  # "shelves", "boxes", "bins"
    same = [n for n in names if len(name_key(n).split()) > 1 and name_key(n).split()[0] == kind]
    return same[0] if len(same) == 1 else None


def add_place(conn: sqlite3.Connection, sku: str, location: str, quantity: int | float = 0,
              base: int | float | None = None) -> str:
    """Add ``location`` to ``sku``'s places (after its others) unless held; returns its stored spelling."""
    held = find_place(conn, sku, location)
    if held is not None:
        return held
    pos = conn.execute("SELECT COALESCE(MAX(pos), -1) + 1 FROM stock WHERE sku = ?", (sku,)).fetchone()[0]
    conn.execute("INSERT INTO stock (sku, location, place_key, quantity, base, pos) VALUES (?, ?, ?, ?, ?, ?)",
                 (sku, location, name_key(location), quantity, quantity if base is None else base, int(pos)))
    bump_items_version(conn)
    return location


def bump_items_version(conn: sqlite3.Connection) -> None:
    """Count a change of the item list (names, aliases, places) in ``meta`` (``items_version``)."""
    conn.execute("INSERT INTO meta (key, value) VALUES ('items_version', '1') ON CONFLICT(key) DO UPDATE "
                 "SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)")


def places_of(conn: sqlite3.Connection, sku: str) -> tuple[tuple[str, int | float], ...]:
    """``((place, quantity), ...)`` of ``sku`` in the order its places were added."""
    return tuple((loc, clean(q)) for loc, q in
                 conn.execute("SELECT location, quantity FROM stock WHERE sku = ? ORDER BY pos, rowid", (sku,)))


def recompute(conn: sqlite3.Connection, sku: str, location: str) -> int | float:
    """The quantity at ``sku``'s place ``location`` from its history (see the module doc)."""
    row = conn.execute(ACTIVE_COUNT, (sku, location)).fetchone()
    if row is None:
        base = conn.execute("SELECT base FROM stock WHERE sku = ? AND location = ?", (sku, location)).fetchone()
        total = conn.execute("SELECT COALESCE(SUM(delta), 0) FROM records WHERE sku = ? AND location = ?",
                             (sku, location)).fetchone()[0]
        return clean((base[0] if base else 0) + total)
    _rid, t, box, seq, counted = row
    after = conn.execute(f"SELECT COALESCE(SUM(r.delta), 0) FROM records AS r WHERE r.sku = ? AND r.location = ? "
                         f"AND ({_KEY}) > (?, ?, ?)", (sku, location, t, box, seq)).fetchone()[0]
    return clean(counted + after)


def settle(conn: sqlite3.Connection, record_id: int) -> None:
    """Bring the place of the record ``record_id`` (just inserted) and its item's total up to date.

    A count, or the undo of a count, recomputes the place from its history; any other record adds
    its delta, unless a count later than it exists there (the count already saw the stock)."""
    sku, location, delta, kind, undoes, t, box, seq = conn.execute(
        "SELECT r.sku, r.location, r.delta, r.kind, r.undoes, substr(r.gid, 1, 10), r.box, r.seq "
        "FROM records AS r WHERE r.id = ?", (record_id,)).fetchone()
    undoes_count = undoes is not None and conn.execute(
        "SELECT 1 FROM records WHERE id = ? AND kind = 'count'", (undoes,)).fetchone() is not None
    if kind == "count" or undoes_count:
        quantity = recompute(conn, sku, location)
    else:
        count = conn.execute(ACTIVE_COUNT, (sku, location)).fetchone()
        if count is not None and (t, box, seq) < tuple(count[1:4]):
            return  # superseded: the later count already holds this change
        held = conn.execute("SELECT quantity FROM stock WHERE sku = ? AND location = ?", (sku, location)).fetchone()
        quantity = clean((held[0] if held else 0) + delta)
    conn.execute("UPDATE stock SET quantity = ? WHERE sku = ? AND location = ?", (quantity, sku, location))
    total = conn.execute("SELECT COALESCE(SUM(quantity), 0) FROM stock WHERE sku = ?", (sku,)).fetchone()[0]
    conn.execute("UPDATE items SET quantity = ? WHERE sku = ?", (clean(total), sku))


class Refused(ValueError):
    """A write the store refuses (the store raises it as :class:`edge.stock.store.StoreError`)."""


def check_quantity(value: object, unit: str, what: str = "delta") -> int | float:
    """``value`` as a quantity the store writes in ``unit``: an int, or a float for a unit of
    :data:`edge.stock.csvfile.DECIMAL_UNITS`; at most :data:`MAX_QUANTITY` in size.

    Raises :class:`Refused` naming ``what`` for a bool, a non-number, NaN or infinity, a value out
    of range, or a fraction of a whole unit."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Refused(f"{what} must be a number, got {type(value).__name__} {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise Refused(f"{what} must be a finite number, got {value!r}")
    if abs(value) > MAX_QUANTITY:
        raise Refused(f"{what} {value!r} is out of range (at most {MAX_QUANTITY:,} at once)")
    if isinstance(value, float) and not value.is_integer() and not allows_decimals(unit):
        raise Refused(f"{what} {value!r} is a fraction, but {unit!r} is counted in whole units")
    return clean(value)


def unit_of(conn: sqlite3.Connection, sku: str) -> str:
    """``sku``'s unit; :class:`Refused` for an unknown SKU."""
    row = conn.execute("SELECT unit FROM items WHERE sku = ?", (sku,)).fetchone()
    if row is None:
        raise Refused(f"unknown sku {sku!r}; import it with import_csv first")
    return row[0]


def place_for(conn: sqlite3.Connection, sku: str, location: str | None, *, create: bool) -> str:
    """The stored spelling of ``sku``'s place ``location`` (None: its only place); with ``create``
    a new place is added. :class:`Refused` for no place given to an item in several, or a place
    the item is not stored at (without ``create``)."""
    places = [p for p, _q in places_of(conn, sku)]
    if location is None:
        if len(places) == 1:
            return places[0]
        raise Refused(f"{sku} is stored in {len(places)} places ({', '.join(places)}); say which")
    held = find_place(conn, sku, location)
    if held is not None:
        return held
    if create:
        return add_place(conn, sku, location)
    raise Refused(f"{sku} is not stored at {location!r} (its places: {', '.join(places)})")


def quantity_at(conn: sqlite3.Connection, sku: str, place: str) -> int | float:
    """The quantity held at ``sku``'s stored place ``place``."""
    return clean(conn.execute("SELECT quantity FROM stock WHERE sku = ? AND location = ?", (sku, place)).fetchone()[0])


def import_rows(conn: sqlite3.Connection, rows: list[InventoryRow],
                write_count: Callable[[str, int | float, str, int | float], int]) -> None:
    """Insert or update the items of ``rows`` (one per SKU and place). A known place whose quantity
    changes gets a count record through ``write_count(sku, delta, place, counted) -> record id``."""
    known = {sku for (sku,) in conn.execute("SELECT sku FROM items")}
    firsts: dict[str, InventoryRow] = {}
    for r in rows:
        firsts.setdefault(r.sku, r)
    conn.executemany(
        "INSERT INTO items (sku, item, location, quantity, unit, aliases, reorder_level) VALUES (?, ?, ?, 0, ?, ?, ?) "
        "ON CONFLICT(sku) DO UPDATE SET item=excluded.item, location=excluded.location, "
        "unit=excluded.unit, aliases=excluded.aliases, reorder_level=excluded.reorder_level",
        [(r.sku, r.item, r.location, r.unit, r.aliases, r.reorder_level) for r in firsts.values()])
    keys = {loc: name_key(loc) for loc in {r.location for r in rows}}
    conn.executemany("INSERT INTO stock (sku, location, place_key, quantity, base, pos) VALUES (?, ?, ?, ?, ?, ?)",
                     [(r.sku, r.location, keys[r.location], r.quantity, r.quantity, n)
                      for n, r in enumerate(r for r in rows if r.sku not in known)])
    held = {(sku, key): (loc, clean(q)) for sku, key, loc, q in
            conn.execute("SELECT sku, place_key, location, quantity FROM stock")} if known else {}
    for r in rows:
        if r.sku not in known:
            continue
        got = held.get((r.sku, keys[r.location]))
        if got is None:
            add_place(conn, r.sku, r.location, r.quantity)
        elif got[1] != r.quantity:
            # quantity_at again: an earlier count of this import may have settled the place already
            settle(conn, write_count(r.sku, clean(r.quantity - quantity_at(conn, r.sku, got[0])), got[0], r.quantity))
    bump_items_version(conn)
    conn.execute("UPDATE items SET quantity = (SELECT COALESCE(SUM(s.quantity), 0) FROM stock AS s "
                 "WHERE s.sku = items.sku) WHERE sku IN (SELECT value FROM json_each(?))",
                 (json.dumps(sorted(firsts)),))


def at_place(conn: sqlite3.Connection, location: str, limit: int) -> tuple[list[tuple[str, int | float]], int]:
    """Up to ``limit`` ``(sku, quantity)`` stored at ``location`` (by SKU), and how many in all."""
    key = name_key(location)
    total = conn.execute("SELECT COUNT(*) FROM stock WHERE place_key = ?", (key,)).fetchone()[0]
    rows = conn.execute("SELECT sku, quantity FROM stock WHERE place_key = ? ORDER BY sku LIMIT ?", (key, int(limit)))
    return [(sku, clean(q)) for sku, q in rows], int(total)


@contextmanager
def refusals_as(error: type[Exception]) -> Iterator[None]:
    """Raise a :class:`Refused` leaving the block as ``error`` (the store's ``StoreError``)."""
    try:
        yield
    except Refused as e:
        raise error(str(e)) from e
