"""Running sums of the records that stand, per UTC day and SKU and per UTC hour and box, so a
question about a month reads some thousand sums instead of every record of the month.

Kept by triggers on ``records`` (schema version 8, :mod:`edge.stock.schema`): every insert adds
the record to its day and hour in the same transaction (the table is append-only: nothing is ever
updated or deleted), and an undo takes the record it undoes out of that record's day and hour. So
the sums hold whichever path wrote the record (a spoken log, an import's count, a transfer, an undo,
another box's record pulled from the site, a recovery). What "stands" and what each column sums
are :mod:`edge.stock.history`'s rules.

``record_days``: (``day`` ``YYYY-MM-DD`` UTC, ``sku``) → ``used``, ``received``, ``moved``,
``counted`` (sum of count differences), ``counts``, ``logs`` of the records that stand, and
``change`` (the sum of every record's delta, undos included). ``record_hours``: (``hour``
``YYYY-MM-DDTHH`` UTC, ``box``) → ``standing``, how many records stand.

A period starts and ends at local times: :func:`split` gives the whole UTC days (or hours) inside
it, read from the sums, and the pieces at either end, read from the records.
"""
from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

__all__ = ["SUMMARY_STEPS", "DERIVED", "rebuild", "split", "bound"]

#: Tables derived from ``records`` (a recovery rebuilds them instead of salvaging them).
DERIVED = ("record_days", "record_hours")

_STANDS = "NEW.kind <> 'undo' AND NOT EXISTS (SELECT 1 FROM records AS u WHERE u.undoes = NEW.id)"
_COLS = "used, received, moved, counted, counts, logs"
_UPSERT = ("ON CONFLICT (day, sku) DO UPDATE SET used = used + excluded.used, received = received + excluded.received, "
           "moved = moved + excluded.moved, counted = counted + excluded.counted, counts = counts + excluded.counts, "
           "logs = logs + excluded.logs, change = change + excluded.change")


def _parts(r: str, sign: str = "") -> str:
    """The six summed columns of record alias ``r`` (``sign`` "-" to take them out)."""
    return (f"{sign}(CASE WHEN {r}.kind = 'log' AND {r}.delta < 0 THEN -{r}.delta ELSE 0 END), "
            f"{sign}(CASE WHEN {r}.kind = 'log' AND {r}.delta > 0 THEN {r}.delta ELSE 0 END), "
            f"{sign}(CASE WHEN {r}.kind = 'transfer' AND {r}.delta > 0 THEN {r}.delta ELSE 0 END), "
            f"{sign}(CASE WHEN {r}.kind = 'count' THEN {r}.delta ELSE 0 END), "
            f"{sign}(CASE WHEN {r}.kind = 'count' THEN 1 ELSE 0 END), "
            f"{sign}(CASE WHEN {r}.kind = 'log' THEN 1 ELSE 0 END)")


_TABLES = [
    """
    CREATE TABLE record_days (
        day      TEXT NOT NULL,
        sku      TEXT NOT NULL,
        used     NUMERIC NOT NULL DEFAULT 0,
        received NUMERIC NOT NULL DEFAULT 0,
        moved    NUMERIC NOT NULL DEFAULT 0,
        counted  NUMERIC NOT NULL DEFAULT 0,
        counts   INTEGER NOT NULL DEFAULT 0,
        logs     INTEGER NOT NULL DEFAULT 0,
        change   NUMERIC NOT NULL DEFAULT 0,
        PRIMARY KEY (day, sku)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX record_days_sku ON record_days(sku, day)",
    """
    CREATE TABLE record_hours (
        hour     TEXT NOT NULL,
        box      TEXT NOT NULL,
        standing INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (hour, box)
    ) WITHOUT ROWID
    """,
]

_TRIGGERS = [
    # every record: its delta into the day's change; one that stands (not an undo, not undone:
    # an undo written before what it undoes only comes from a repair) into the sums
    f"""
    CREATE TRIGGER records_summary_add AFTER INSERT ON records
    BEGIN
        INSERT INTO record_days (day, sku, {_COLS}, change)
        SELECT substr(NEW.time, 1, 10), NEW.sku, {_parts("NEW")}, NEW.delta WHERE {_STANDS}
        {_UPSERT};
        INSERT INTO record_days (day, sku, change) SELECT substr(NEW.time, 1, 10), NEW.sku, NEW.delta
        WHERE NOT ({_STANDS}) {_UPSERT};
        INSERT INTO record_hours (hour, box, standing) SELECT substr(NEW.time, 1, 13), NEW.box, 1 WHERE {_STANDS}
        ON CONFLICT (hour, box) DO UPDATE SET standing = standing + 1;
    END
    """,
    # an undo: the record it undoes no longer stands (its delta stays in its day's change: the
    # undo's own delta compensates on the undo's day)
    f"""
    CREATE TRIGGER records_summary_undo AFTER INSERT ON records WHEN NEW.undoes IS NOT NULL
    BEGIN
        INSERT INTO record_days (day, sku, {_COLS}, change)
        SELECT substr(x.time, 1, 10), x.sku, {_parts("x", "-")}, 0 FROM records AS x
        WHERE x.id = NEW.undoes AND x.kind <> 'undo' {_UPSERT};
        UPDATE record_hours SET standing = standing - 1
        WHERE (hour, box) = (SELECT substr(x.time, 1, 13), x.box FROM records AS x WHERE x.id = NEW.undoes
                             AND x.kind <> 'undo');
    END
    """,
]


def rebuild(conn: sqlite3.Connection, box: str = "") -> None:
    """Recompute both tables from ``records`` (inside the caller's transaction). ``box`` is unused
    (the signature of a migration step)."""
    conn.execute("DELETE FROM record_days")
    conn.execute("DELETE FROM record_hours")
    stands = "r.kind <> 'undo' AND NOT EXISTS (SELECT 1 FROM records AS u WHERE u.undoes = r.id)"
    sums = ", ".join(f"SUM(CASE WHEN st THEN {p} ELSE 0 END)" for p in _parts("r").split(", "))
    conn.execute(f"INSERT INTO record_days (day, sku, {_COLS}, change) SELECT substr(r.time, 1, 10), r.sku, {sums}, "
                 f"SUM(r.delta) FROM (SELECT *, ({stands}) AS st FROM records AS r) AS r GROUP BY 1, 2")
    conn.execute("INSERT INTO record_hours (hour, box, standing) SELECT substr(r.time, 1, 13), r.box, COUNT(*) "
                 f"FROM records AS r WHERE {stands} GROUP BY 1, 2")


#: Schema version 7 → 8 (:data:`edge.stock.schema.MIGRATIONS`): the tables, the triggers, the sums so far.
SUMMARY_STEPS: list = [*_TABLES, *_TRIGGERS, rebuild]


def bound(key: str) -> str:
    """The record time (ISO 8601 UTC, milliseconds, as :func:`edge.stock.periods.utc_iso` writes
    it) at which day ``YYYY-MM-DD`` or hour ``YYYY-MM-DDTHH`` starts."""
    return f"{key}T00:00:00.000+00:00" if len(key) == 10 else f"{key}:00:00.000+00:00"


def _utc(t: datetime) -> datetime:
    """``t`` in UTC (a time without a zone is read as UTC, as the records' times are)."""
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


def split(start: str, end: str, unit: str = "day") -> tuple[tuple[str, str] | None, list[tuple[str, str]]]:
    """``start`` ≤ t < ``end`` (record times) as ``(whole, pieces)``: ``whole`` the first and the
    after-last key (``unit`` ``day`` or ``hour``) of the whole UTC days or hours inside it, or None
    when there are none, and ``pieces`` the ``(start, end)`` time ranges left at either end.
    Raises ``ValueError`` for a time that is not ISO 8601."""
    a, b = (_utc(datetime.fromisoformat(x)) for x in (start, end))
    if unit == "day":
        step, first = timedelta(days=1), a.replace(hour=0, minute=0, second=0, microsecond=0)
        last, fmt = b.replace(hour=0, minute=0, second=0, microsecond=0), "%Y-%m-%d"
    else:
        step, first = timedelta(hours=1), a.replace(minute=0, second=0, microsecond=0)
        last, fmt = b.replace(minute=0, second=0, microsecond=0), "%Y-%m-%dT%H"
    if first < a:
        first += step
    if first >= last:
        return None, [(start, end)]
    lo, hi = first.strftime(fmt), last.strftime(fmt)
    pieces = [(s, e) for s, e in ((start, bound(lo)), (bound(hi), end)) if s < e]
    return (lo, hi), pieces
