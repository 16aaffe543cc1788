"""The order of records, which never follows the wall clock backwards.

A record's ``time`` is the wall clock's reading, a label for people. Its order among the records
of a place (which stock count is the latest, which records came after it: :mod:`edge.stock.places`)
is its gid's time part, then box, then sequence. That time part is a hybrid logical clock: the
wall clock in ms, but never less than 1 ms after the highest gid the file holds (this box's records
and those pulled from other boxes). So a box's records are in the order of their sequence whatever
the wall clock does (an NTP step back, a board without a battery-backed clock booting in 1970),
and a record comes after every record its box held when it was written, on every box of a site.

A step of the wall clock back behind this box's previous record (more than :data:`STEP_BACK_S`)
is logged and kept in the ``meta`` table (``clock_step_back``, JSON) for ``edge status``.
"""
from __future__ import annotations

import json
import logging
import os
import sqlite3
from datetime import datetime

from ulid import ULID

__all__ = ["next_gid", "note_step_back", "last_step_back", "STEP_BACK_S"]

log = logging.getLogger("edge.stock")

#: A wall clock this many seconds behind the previous record is a step back (NTP steps the clock,
#: instead of slewing it, for offsets over 0.128 s; 1 s leaves out jitter between threads).
STEP_BACK_S = 1.0


def next_gid(conn: sqlite3.Connection, at: datetime) -> str:
    """A new gid (ULID, 26 characters) for a record written at wall time ``at`` (timezone-aware):
    its time part is ``at`` in ms, or 1 ms after the highest gid held if that is later."""
    wall = int(at.timestamp() * 1000)
    top = conn.execute("SELECT MAX(gid) FROM records").fetchone()[0]  # the unique gid index: one lookup
    ms = wall if top is None else max(wall, ULID.from_str(top).milliseconds + 1)
    return str(ULID.from_bytes(ms.to_bytes(6, "big") + os.urandom(10)))


def note_step_back(conn: sqlite3.Connection, box: str, at: datetime) -> float | None:
    """If the wall clock ``at`` is more than :data:`STEP_BACK_S` s behind ``box``'s latest record,
    log it and keep it in ``meta`` (inside the caller's transaction); the step in s, or None."""
    row = conn.execute("SELECT time FROM records WHERE box = ? ORDER BY seq DESC LIMIT 1", (box,)).fetchone()
    if row is None:
        return None
    try:
        back = (datetime.fromisoformat(row[0]) - at).total_seconds()
    except (ValueError, TypeError):
        return None
    if back <= STEP_BACK_S:
        return None
    now = at.isoformat(timespec="seconds")
    log.warning("the wall clock stepped back %.0f s (from %s to %s); records keep their order by sequence, "
                "their times are labels only", back, row[0], now)
    conn.execute("INSERT INTO meta (key, value) VALUES ('clock_step_back', ?) ON CONFLICT(key) DO UPDATE "
                 "SET value = excluded.value", (json.dumps({"at": now, "from": row[0], "back_s": round(back, 3)}),))
    return back


def last_step_back(conn: sqlite3.Connection) -> dict | None:
    """The latest step back kept by :func:`note_step_back`: ``{"at", "from"}`` (ISO 8601 UTC) and
    ``"back_s"`` (s), or None."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'clock_step_back'").fetchone()
    try:
        return None if row is None else json.loads(row[0])
    except ValueError:
        return None
