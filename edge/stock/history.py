"""Questions about what happened, answered from the records (never from the current stock).

Every function here is a few bounded SQL reads: of the ``records`` table, over the indexes on time
and on (SKU, time), and for the whole UTC days or hours of a period of the running sums of
:mod:`edge.stock.summary` (schema version 8, :mod:`edge.stock.schema`), with times as the records'
ISO 8601 UTC text (:meth:`edge.stock.periods.Period.utc_bounds`).

What counts, everywhere:

- a record that was undone never counts, and an undo is never itself counted (kind ``undo``);
- **used** is the sum of a period's out logs (kind ``log``, delta < 0), **received** of its in logs
  (delta > 0); net = received − used;
- **moved** is the sum of a period's transfers (the row into the destination; a transfer changes no
  total);
- a stock **count** (an import or a spoken count) is a difference between what was counted and what
  was recorded: it is reported as a count and its difference, never as use or receipt;
- the **change** of an item over a period is the sum of every record's delta in it (undos included:
  they compensate), i.e. its quantity at the end minus at the start.

Quantities are in the item's unit (an int, or a float for a unit of
:data:`edge.stock.csvfile.DECIMAL_UNITS`).
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from edge.stock import summary
from edge.stock.places import clean, clean_or_none

__all__ = ["Totals", "Event", "sums", "totals", "standing", "last", "entries", "top", "latest_movement", "change", "use_rate",
           "STANDS", "EVENT_KINDS", "MAX_TIMES"]

#: A record that stands: not an undo, and not undone by a later record.
STANDS = "r.kind <> 'undo' AND NOT EXISTS (SELECT 1 FROM records AS u WHERE u.undoes = r.id)"
#: What :func:`last` looks for: the SQL condition for each kind of event.
EVENT_KINDS = {
    "used": "r.kind = 'log' AND r.delta < 0",
    "received": "r.kind = 'log' AND r.delta > 0",
    "counted": "r.kind = 'count'",
    "moved": "r.kind = 'transfer' AND r.delta > 0",
    "any": "1",
}
#: The most record times :func:`totals` returns per direction (to say the days of a short list).
MAX_TIMES = 50


@dataclass(frozen=True)
class Totals:
    """One item's records over a period. ``used``/``received``: gross out and in logs; ``moved``:
    transferred between places; ``counted``: the sum of the stock counts' differences (counted −
    recorded) and ``counts`` how many counts; ``logs``: how many logs. ``use_times`` /
    ``receive_times``: the times (ISO 8601 UTC) of up to :data:`MAX_TIMES` out / in logs, oldest
    first; ``counts_at``: ``(time, counted or None when not kept, difference)`` of up to :data:`MAX_TIMES` counts."""

    sku: str
    used: int | float = 0
    received: int | float = 0
    moved: int | float = 0
    counted: int | float = 0
    counts: int = 0
    logs: int = 0
    use_times: tuple[str, ...] = ()
    receive_times: tuple[str, ...] = ()
    counts_at: tuple[tuple[str, int | float, int | float], ...] = field(default=())

    @property
    def net(self) -> int | float:
        """received − used (logs only)."""
        return clean(self.received - self.used)


@dataclass(frozen=True)
class Event:
    """One record as an answer names it: ``time`` (ISO 8601 UTC), ``sku``, ``quantity`` (the size
    of the change, positive), ``delta`` (signed), ``kind``, ``box`` (the box that wrote it),
    ``location``, ``counted`` (for a count, the value counted)."""

    time: str
    sku: str
    quantity: int | float
    delta: int | float
    kind: str
    box: str
    location: str | None = None
    counted: int | float | None = None
    from_location: str | None = None


_EVENT_COLS = "r.time, r.sku, r.delta, r.kind, r.box, r.location, r.counted"
#: A transfer is one entry: its "into" row, said with the place it came from (its "out" row, same op)
_TRANSFER_OUT = "(r.kind = 'transfer' AND r.delta < 0)"
_FROM = "(SELECT o.location FROM records AS o WHERE o.op = r.op AND o.id <> r.id AND o.delta < 0 LIMIT 1)"


def _event(row: tuple) -> Event:
    time, sku, delta, kind, box, location, counted, *rest = row
    d = clean(delta)
    return Event(time, sku, abs(d), d, kind, box, location, None if counted is None else clean(counted),
                 rest[0] if rest and kind == "transfer" else None)


_SUMS = ("COALESCE(SUM(CASE WHEN r.kind = 'log' AND r.delta < 0 THEN -r.delta END), 0), "
         "COALESCE(SUM(CASE WHEN r.kind = 'log' AND r.delta > 0 THEN r.delta END), 0), "
         "COALESCE(SUM(CASE WHEN r.kind = 'transfer' AND r.delta > 0 THEN r.delta END), 0), "
         "COALESCE(SUM(CASE WHEN r.kind = 'count' THEN r.delta END), 0), "
         "COUNT(CASE WHEN r.kind = 'count' THEN 1 END), COUNT(CASE WHEN r.kind = 'log' THEN 1 END)")


def sums(conn: sqlite3.Connection, sku: str, start: str, end: str, location: str | None = None) -> tuple:
    """``(used, received, moved, counted, counts, logs)`` of the records of ``sku`` that stand with
    ``start`` ≤ time < ``end``: the whole UTC days from :mod:`edge.stock.summary`, the rest from
    the records (a range read on (sku, time)). ``location``: that place's records only (read from
    the records themselves: the day sums are per item, not per place)."""
    if location is not None:
        row = conn.execute(f"SELECT {_SUMS} FROM records AS r WHERE r.sku = ? AND r.time >= ? AND r.time < ? "
                           f"AND r.location = ? AND {STANDS}", (sku, start, end, location)).fetchone()
        return (clean(row[0]), clean(row[1]), clean(row[2]), clean(row[3]), int(row[4]), int(row[5]))
    whole, pieces = summary.split(start, end)
    acc = [0, 0, 0, 0, 0, 0]
    if whole is not None:
        row = conn.execute("SELECT COALESCE(SUM(used), 0), COALESCE(SUM(received), 0), COALESCE(SUM(moved), 0), "
                           "COALESCE(SUM(counted), 0), COALESCE(SUM(counts), 0), COALESCE(SUM(logs), 0) "
                           "FROM record_days WHERE sku = ? AND day >= ? AND day < ?", (sku, *whole)).fetchone()
        acc = [a + b for a, b in zip(acc, row, strict=True)]
    for a, b in pieces:
        row = conn.execute(f"SELECT {_SUMS} FROM records AS r WHERE r.sku = ? AND r.time >= ? AND r.time < ? "
                           f"AND {STANDS}", (sku, a, b)).fetchone()
        acc = [x + y for x, y in zip(acc, row, strict=True)]
    return (clean(acc[0]), clean(acc[1]), clean(acc[2]), clean(acc[3]), int(acc[4]), int(acc[5]))


def totals(conn: sqlite3.Connection, sku: str, start: str, end: str, location: str | None = None) -> Totals:
    """The records of ``sku`` with ``start`` ≤ time < ``end`` (ISO 8601 UTC) that stand, summed by
    kind (see the module doc): :func:`sums`, and the first times of each kind (range reads on (sku, time));
    ``location``: that place's records only."""
    where = f"r.sku = ? AND r.time >= ? AND r.time < ? AND {STANDS}" + (" AND r.location = ?" if location else "")
    args = (sku, start, end, *((location,) if location else ()))

    def times(cond: str) -> tuple[str, ...]:
        return tuple(t for (t,) in conn.execute(
            f"SELECT r.time FROM records AS r WHERE {where} AND {cond} ORDER BY r.time LIMIT ?", (*args, MAX_TIMES)))

    counts_at = tuple((t, clean_or_none(c), clean(d)) for t, c, d in conn.execute(
        f"SELECT r.time, r.counted, r.delta FROM records AS r WHERE {where} AND r.kind = 'count' ORDER BY r.time LIMIT ?",
        (*args, MAX_TIMES)))
    return Totals(sku, *sums(conn, sku, start, end, location or None), times(EVENT_KINDS["used"]),
                  times(EVENT_KINDS["received"]), counts_at)


def last(conn: sqlite3.Connection, sku: str, what: str = "any", before: str | None = None) -> Event | None:
    """The latest record of ``sku`` that stands and is ``what`` (a key of :data:`EVENT_KINDS`),
    before ``before`` (ISO 8601 UTC; None: any time), or None. Raises ``KeyError`` for another ``what``.
    One backward walk of the (sku, time) index."""
    cond = EVENT_KINDS[what]
    bound, args = ("AND r.time < ?", (sku, before)) if before else ("", (sku,))
    row = conn.execute(f"SELECT {_EVENT_COLS} FROM records AS r WHERE r.sku = ? {bound} AND {STANDS} AND {cond} "
                       "ORDER BY r.time DESC, r.id DESC LIMIT 1", args).fetchone()
    return None if row is None else _event(row)


def latest_movement(conn: sqlite3.Connection, sku: str) -> Event | None:
    """The latest record of ``sku`` that stands, of any kind: who logged it (``box``) and when."""
    return last(conn, sku, "any")


def entries(conn: sqlite3.Connection, start: str | None, end: str | None, *, box: str | None = None,
            sku: str | None = None, limit: int = 3, location: str | None = None) -> tuple[list[Event], int]:
    """The records that stand with ``start`` ≤ time < ``end`` (None: unbounded), of ``box``, ``sku``
    and ``location`` (a place as stored) when given: the latest ``limit`` of them, newest first, and
    how many in all."""
    conds, args = [STANDS], []
    for sql, value in (("r.time >= ?", start), ("r.time < ?", end), ("r.box = ?", box), ("r.sku = ?", sku),
                       ("r.location = ?", location)):
        if value is not None:
            conds.append(sql)
            args.append(value)
    where = " AND ".join(conds)
    total: int | None = None
    if start is None and end is None:  # "the last three entries": no count of the whole history
        total = -1
    elif start is not None and end is not None and sku is None and location is None:
        outs = int(conn.execute(f"SELECT COUNT(*) FROM records AS r WHERE {where} AND {_TRANSFER_OUT}",
                                args).fetchone()[0])  # a transfer's two rows are one entry
        total = standing(conn, start, end, box) - outs
    # at one place, the "out" row is that place's entry (the goods left it); elsewhere the "into" row stands for both
    half = "" if location is not None else f" AND NOT {_TRANSFER_OUT}"
    if total is None:
        total = int(conn.execute(f"SELECT COUNT(*) FROM records AS r WHERE {where}{half}", args).fetchone()[0])
    rows = conn.execute(f"SELECT {_EVENT_COLS}, {_FROM} FROM records AS r WHERE {where}{half} "
                        "ORDER BY r.time DESC, r.id DESC LIMIT ?", (*args, int(limit))).fetchall()
    return [_event(r) for r in rows], total


def standing(conn: sqlite3.Connection, start: str, end: str, box: str | None = None) -> int:
    """How many records stand with ``start`` ≤ time < ``end`` (of ``box`` when given): the whole
    UTC hours from :mod:`edge.stock.summary`, the rest from the records (a range read on time)."""
    whole, pieces = summary.split(start, end, "hour")
    n = 0
    mine, arg = ("AND box = ?", (box,)) if box is not None else ("", ())
    if whole is not None:
        n += conn.execute(f"SELECT COALESCE(SUM(standing), 0) FROM record_hours WHERE hour >= ? AND hour < ? {mine}",
                          (*whole, *arg)).fetchone()[0]
    for a, b in pieces:
        n += conn.execute(f"SELECT COUNT(*) FROM records AS r WHERE r.time >= ? AND r.time < ? {mine.replace('box', 'r.box')} "
                          f"AND {STANDS}", (a, b, *arg)).fetchone()[0]
    return int(n)


def top(conn: sqlite3.Connection, start: str, end: str, what: str = "used", limit: int = 50) -> list[tuple[str, int | float]]:
    """The SKUs most used (``what="used"``) or received (``"received"``) with ``start`` ≤ time <
    ``end``: ``[(sku, quantity)]``, largest first (then by SKU), at most ``limit``. Quantities are
    in each item's own unit: the caller compares within one unit. The whole UTC days from
    :mod:`edge.stock.summary`, the rest from the records (a range read on time)."""
    if what not in ("used", "received"):
        raise KeyError(what)
    sign = "-" if what == "used" else ""
    whole, pieces = summary.split(start, end)
    found: dict[str, int | float] = {}
    if whole is not None:
        for s, q in conn.execute(f"SELECT sku, SUM({what}) FROM record_days WHERE day >= ? AND day < ? GROUP BY +sku",
                                 whole):
            found[s] = q
    for a, b in pieces:
        # INDEXED BY: grouping by SKU tempts the planner into skip-scanning (sku, time) over every SKU,
        # 5-10x slower than reading the range (bench/records_query.py)
        for s, q in conn.execute(
                f"SELECT r.sku, SUM({sign}r.delta) FROM records AS r INDEXED BY records_time WHERE r.time >= ? "
                f"AND r.time < ? AND {EVENT_KINDS[what]} AND {STANDS} GROUP BY r.sku", (a, b)):
            found[s] = found.get(s, 0) + q
    ranked = sorted(((s, clean(q)) for s, q in found.items() if clean(q) > 0), key=lambda x: (-x[1], x[0]))
    return ranked[:int(limit)]


def change(conn: sqlite3.Connection, sku: str, start: str, end: str) -> int | float:
    """How much the stock of ``sku`` changed with ``start`` ≤ time < ``end``: the sum of every
    record's delta then (undos included: they compensate), in its unit."""
    row = conn.execute("SELECT COALESCE(SUM(r.delta), 0) FROM records AS r WHERE r.sku = ? AND r.time >= ? "
                       "AND r.time < ?", (sku, start, end)).fetchone()
    return clean(row[0])


def use_rate(conn: sqlite3.Connection, sku: str, start: str, end: str, days: int) -> int | float:
    """The average use of ``sku`` per day over ``days`` days from ``start`` to ``end``: the used total
    (:func:`totals`) / ``days``. An estimate of what is to come, said as one."""
    used = totals(conn, sku, start, end).used
    return used / max(1, days)
