"""When an undo would leave a stock that no count or record explains.

A stock count settles a place: its quantity is the counted value plus the records after the count
(:mod:`edge.stock.places`). Undoing a record the count came after would put the reverted change on
top of what was counted: −3 fuses (60 → 57), a count of 50, then an undo of the −3 would leave 53
although the count said 50 and nothing since explains the 3. So the store refuses such an undo
(:class:`CountSettled`, a transfer if either of its places was counted after it), naming the count,
what the stock stays, and what would be right: if the change never happened, the count already
holds that; if the count was wrong, count again (or undo the count first, then the change).
A count itself can always be undone: the place is then worked out again from its history.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from edge.stock.faults import StoreError
from edge.stock.places import ACTIVE_COUNT, clean, quantity_at

if TYPE_CHECKING:
    from edge.stock.store import Item, Record

__all__ = ["Covered", "CountSettled", "later_counts"]


@dataclass(frozen=True)
class Covered:
    """A record (``record_id``: ``delta`` of ``sku`` at ``location``) that a later stock count at the
    same place settled: the count's id ``count_id``, box ``count_box`` and value ``counted``; the
    place holds ``now`` and would hold ``would`` after the undo (quantities in the item's unit)."""

    record_id: int
    sku: str
    location: str
    delta: int | float
    count_id: int
    count_box: str
    counted: int | float
    now: int | float
    would: int | float


class CountSettled(StoreError):
    """An undo refused: a later stock count already settled the place(s) of the record
    (``covered``: one :class:`Covered` per place; ``item``: the record's item now, an
    :class:`edge.stock.store.Item`). Nothing was written."""

    def __init__(self, covered: list[Covered], box: str, item: Item) -> None:
        parts = []
        for c in covered:
            by = "" if c.count_box == box else f" by box {c.count_box}"
            parts.append(f"record {c.record_id} ({c.delta:+g} {c.sku} at {c.location}) came before a stock count "
                         f"there (record {c.count_id}{by}: {c.counted:g} counted), which already settled the stock; "
                         f"undoing it would make {c.location} {c.would:g} instead of {c.now:g}, which no count or "
                         "record explains")
        first = covered[0]
        super().__init__(
            "; ".join(parts) + f". What is right: if that change never happened, the count already holds it and "
            f"the stock stays {', '.join(f'{c.now:g} at {c.location}' for c in covered)}; if the count was wrong, "
            f"count again, or undo the count (record {first.count_id}) first and then this record")
        self.covered = covered
        self.item = item


def later_counts(conn: sqlite3.Connection, rows: list[Record]) -> list[Covered]:
    """The rows of one change (a log, or a transfer's two rows) that a later stock count not undone
    at their place settled, in ``rows`` order; empty when the undo is safe."""
    out = []
    for r in rows:
        if r.kind == "count" or r.location is None:
            continue
        key = conn.execute("SELECT substr(gid, 1, 10), box, seq FROM records WHERE id = ?", (r.id,)).fetchone()
        count = conn.execute(ACTIVE_COUNT, (r.sku, r.location)).fetchone()
        if count is None or tuple(count[1:4]) <= tuple(key):
            continue
        now = quantity_at(conn, r.sku, r.location)
        out.append(Covered(r.id, r.sku, r.location, r.delta, int(count[0]), count[2], clean(count[4]), now,
                           clean(now - r.delta)))
    return out
