"""Other boxes' movements (pulled from the site) added to the store's SQLite file, a batch at a time.

:func:`apply_batch` inserts a batch of movements inside the caller's transaction and then settles
every place the batch touched once (:func:`settle_places`), not once per record: a place without
a count among the new records adds their deltas (those after its latest count) to what it holds;
a place with a new count, or the undo of one, is recomputed from its history
(:func:`edge.stock.places.recompute`). The quantity is the same as settling record by
record, since a place's quantity is a function of the records held for it
(:mod:`edge.stock.places`).

A movement for an SKU this box does not know (the boxes imported different inventories) is kept
aside in the ``kept`` table, so its box's other records go on: the store holds it (idempotent on
``gid``, counted in :data:`CURSORS`) without a stock to add it to, says so (:func:`kept_aside`),
and adds it once the item is imported here (:func:`release_kept`).

Every function raises ``sqlite3`` errors as they are and :class:`edge.stock.places.Refused`
for a movement the store does not take (the caller rolls back: nothing is applied).
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from edge.stock.places import (
    ACTIVE_COUNT,
    IMPORT_TURN_PREFIX,
    Refused,
    add_place,
    clean,
    clean_or_none,
    recompute,
)

if TYPE_CHECKING:
    from edge.stock.store import Movement

__all__ = ["apply_batch", "settle_places", "Touched", "CURSORS", "kept_aside", "release_kept", "IMPORT_FIX"]

#: ``(box, highest seq)`` for every box the records (and the movements kept aside) hold: a
#: skip-scan of the ``(box, seq)`` index, one lookup per box (``GROUP BY box`` reads the whole
#: index: 127 ms at 300,000 records).
CURSORS = ("WITH RECURSIVE b(box) AS (SELECT MIN(box) FROM records UNION ALL "
           "SELECT (SELECT MIN(r.box) FROM records AS r WHERE r.box > b.box) FROM b WHERE b.box IS NOT NULL) "
           "SELECT box, MAX(seq) FROM (SELECT box, (SELECT MAX(r.seq) FROM records AS r WHERE r.box = b.box) AS seq "
           "FROM b WHERE box IS NOT NULL UNION ALL SELECT box, MAX(seq) FROM kept GROUP BY box) GROUP BY box")

_COLS = "gid, box, seq, time, sku, delta, utterance, turn_id, undoes, location, kind, counted, op"


#: A record's place in the order of a place's records: (ULID time prefix, box, seq).
Key = tuple[str, str, int]


@dataclass
class Touched:
    """What a batch added at one place: the new records' order keys and deltas, and whether one
    of them is a count or the undo of a count (then the place is recomputed from its history)."""

    deltas: list[tuple[Key, int | float]] = field(default_factory=list)
    recount: bool = False


def _kind(m: Movement, kinds: tuple[str, ...]) -> str:
    """A movement's kind; one from a box of an older schema has none: an undo, an import's count
    (without the counted value: a plain delta) or a log."""
    if m.kind in kinds and m.kind != "log":
        return m.kind
    if m.undoes is not None:
        return "undo"
    return "count" if m.turn_id.startswith(IMPORT_TURN_PREFIX) else "log"


def _in(values: list[str]) -> str:
    return json.dumps(sorted(set(values)))


class _Batch:
    """The lookups one batch needs, each made once (held gids, known SKUs, per-box tops, places)."""

    def __init__(self, conn: sqlite3.Connection, moves: list[Movement]) -> None:
        self.conn = conn
        gids = _in([m.gid for m in moves])
        self.held = {g for (g,) in conn.execute("SELECT gid FROM records WHERE gid IN (SELECT value FROM json_each(?)) "
                                                "UNION ALL SELECT gid FROM kept WHERE gid IN (SELECT value FROM "
                                                "json_each(?))", (gids, gids))}
        self.skus = {s for (s,) in conn.execute("SELECT sku FROM items WHERE sku IN (SELECT value FROM json_each(?))",
                                                (_in([m.sku for m in moves]),))}
        self.tops: dict[str, int] = {}
        self.places: dict[tuple[str, str], str] = {}
        self.ids: dict[str, tuple[int, str]] = {}  # gid -> (row id, kind) of this batch's records
        self.touched: dict[tuple[str, str], Touched] = {}

    def top(self, box: str) -> int:
        if box not in self.tops:
            self.tops[box] = self.conn.execute(
                "SELECT MAX(COALESCE((SELECT MAX(seq) FROM records WHERE box = ?), 0), "
                "COALESCE((SELECT MAX(seq) FROM kept WHERE box = ?), 0))", (box, box)).fetchone()[0]
        return self.tops[box]

    def place(self, sku: str, location: str | None) -> str:
        key = (sku, location or "")  # a spelling seen before in this batch: no name key to compute
        if key not in self.places:
            # a movement of an older box names no place: it is the item's first
            self.places[key] = add_place(self.conn, sku, location) if location else \
                self.conn.execute("SELECT location FROM items WHERE sku = ?", (sku,)).fetchone()[0]
        return self.places[key]

    def undone(self, m: Movement) -> tuple[int, bool] | None:
        """(row id, is a count) of the record ``m`` undoes, or None when it undoes nothing."""
        if m.undoes is None:
            return None
        if m.undoes in self.ids:
            rid, kind = self.ids[m.undoes]
            return rid, kind == "count"
        row = self.conn.execute("SELECT id, kind FROM records WHERE gid = ?", (m.undoes,)).fetchone()
        if row is None:
            raise Refused(f"movement {m.gid} of box {m.box} undoes {m.undoes}, which this store does not hold")
        return int(row[0]), row[1] == "count"


#: What to do about an unknown SKU: import the item's row alone (a known item's row is a count).
IMPORT_FIX = ("fix: add the item on this box with 'edge inventory import FILE', FILE a CSV holding its row "
              "(only new rows: a row of a known item is a stock count)")


def _check(b: _Batch, m: Movement, box: str, restore: bool, ordered: bool) -> None:
    if m.box == box and not restore:
        raise Refused(f"movement {m.gid} claims to be from this box ({box}) but this store "
                      f"does not hold it; fix: two boxes share site.box: give each its own")
    if ordered and m.seq != b.top(m.box) + 1:
        raise Refused(f"movement {m.gid} is number {m.seq} of box {m.box}, but this store holds "
                      f"up to {b.top(m.box)}; movements must be applied in order")
    if restore and m.sku not in b.skus:
        raise Refused(f"movement {m.gid} of box {m.box} is for SKU {m.sku!r}, which this box does not know; "
                      f"{IMPORT_FIX}")


def apply_batch(conn: sqlite3.Connection, box: str, moves: list[Movement], restore: bool,
                kinds: tuple[str, ...], *, ordered: bool = True) -> list[Movement]:
    """Insert the movements of ``moves`` this store lacks (by ``gid``) and settle the places they
    touched; returns the movements taken, in order (those of an SKU this box does not know are
    kept aside). ``box``: this store's box id; ``restore``: take this box's own movements too (an
    unknown SKU is then refused); ``kinds``: the record kinds the store knows; ``ordered``: each
    box's movements must follow on the highest ``seq`` held (False: kept ones being added).

    :class:`Refused` for a movement of this box (unless ``restore``), a gap in a box's sequence,
    an unknown SKU with ``restore``, or an undo of a record this store does not hold."""
    b = _Batch(conn, moves)
    added = []
    for m in moves:
        if m.gid in b.held:
            continue
        _check(b, m, box, restore, ordered)
        b.held.add(m.gid)
        b.tops[m.box] = max(m.seq, b.tops.get(m.box, 0))
        added.append(m)
        if m.sku not in b.skus:
            conn.execute(f"INSERT INTO kept ({_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (m.gid, m.box, m.seq, m.time, m.sku, clean(m.delta), m.utterance, m.turn_id, m.undoes,
                          m.location, m.kind, clean_or_none(m.counted), m.op))
            continue
        undone = b.undone(m)
        place, kind = b.place(m.sku, m.location), _kind(m, kinds)
        delta = clean(m.delta)
        cur = conn.execute(
            "INSERT INTO records (time, sku, delta, utterance, turn_id, undoes, box, gid, seq, location, kind, "
            "counted, op) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (m.time, m.sku, delta, m.utterance, m.turn_id, None if undone is None else undone[0], m.box, m.gid,
             m.seq, place, kind, clean_or_none(m.counted), m.op))
        b.ids[m.gid] = (int(cur.lastrowid), kind)
        t = b.touched.setdefault((m.sku, place), Touched())
        t.deltas.append(((m.gid[:10], m.box, m.seq), delta))
        t.recount = t.recount or kind == "count" or (undone is not None and undone[1])
    settle_places(conn, b.touched)
    return added


def release_kept(conn: sqlite3.Connection, box: str, kinds: tuple[str, ...],
                 movement: Callable[..., Movement]) -> int:
    """Add the movements kept aside whose SKU this store now knows (after an import), per box in
    ``seq`` order; returns how many. ``movement``: :class:`edge.stock.store.Movement` (whose fields
    are the ``kept`` columns in order; this module cannot import it at run time). Raises as
    :func:`apply_batch`."""
    rows = [movement(*r) for r in conn.execute(f"SELECT {_COLS} FROM kept WHERE sku IN (SELECT sku FROM items) "
                                            "ORDER BY box, seq")]
    if not rows:
        return 0
    conn.execute("DELETE FROM kept WHERE sku IN (SELECT sku FROM items)")
    return len(apply_batch(conn, box, rows, False, kinds, ordered=False))


def kept_aside(conn: sqlite3.Connection) -> list[dict]:
    """``[{"sku", "box", "records"}]``: the movements kept aside for SKUs this box does not know,
    per SKU and box."""
    return [{"sku": sku, "box": b, "records": int(n)} for sku, b, n in
            conn.execute("SELECT sku, box, COUNT(*) FROM kept GROUP BY sku, box ORDER BY sku, box")]


def settle_places(conn: sqlite3.Connection, touched: dict[tuple[str, str], Touched]) -> None:
    """Bring every ``(sku, place)`` of ``touched`` (records just inserted there) and the totals of
    their items up to date: one update per place and one per item."""
    for (sku, place), t in touched.items():
        if t.recount:
            quantity = recompute(conn, sku, place)
        else:
            count = conn.execute(ACTIVE_COUNT, (sku, place)).fetchone()
            after = None if count is None else tuple(count[1:4])
            add = sum(d for k, d in t.deltas if after is None or k > after)  # earlier ones the count saw
            if add == 0:
                continue
            held = conn.execute("SELECT quantity FROM stock WHERE sku = ? AND location = ?", (sku, place)).fetchone()
            quantity = clean((held[0] if held else 0) + add)
        conn.execute("UPDATE stock SET quantity = ? WHERE sku = ? AND location = ?", (quantity, sku, place))
    for sku in sorted({sku for sku, _place in touched}):
        total = conn.execute("SELECT COALESCE(SUM(quantity), 0) FROM stock WHERE sku = ?", (sku,)).fetchone()[0]
        conn.execute("UPDATE items SET quantity = ? WHERE sku = ?", (clean(total), sku))
