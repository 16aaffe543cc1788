"""The store's SQLite schema: the migration steps, kept in ``PRAGMA user_version`` order.

``MIGRATIONS[i]`` takes a file from ``user_version == i`` to ``i + 1``; a step is an SQL statement
or a function of (connection, box id). :class:`edge.stock.store.Store` runs the missing steps in
one transaction when it opens a file. Never edit a released step; append a new one.
"""
from __future__ import annotations

import re
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Callable, Union

from ulid import ULID

from edge.stages.names import name_key
from edge.stock.places import Refused
from edge.stock.summary import SUMMARY_STEPS

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "NO_UPDATE_TRIGGER", "MigrationStep", "migrate", "claim_box",
           "LOCAL_BOX", "BOX_ID_PATTERN", "check_box_id"]

#: The box id of a store that has never been given one (a box not on a site).
LOCAL_BOX = "local"

#: What a box id may look like: it is part of MQTT topics and of every record's identity.
BOX_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}$"

#: One step of a migration: an SQL statement, or a function of (connection, box id).
MigrationStep = Union[str, Callable[[sqlite3.Connection, str], None]]

#: The append-only guard on UPDATE (version 1), re-created after a step that has to lift it.
NO_UPDATE_TRIGGER = """
        CREATE TRIGGER records_no_update BEFORE UPDATE ON records
        BEGIN
            SELECT RAISE(ABORT, 'records is append-only: UPDATE is not allowed');
        END
        """


def _ulid_at(time_iso: str) -> str:
    """A new ULID whose time part is ``time_iso`` (ISO 8601), so ids sort like record times."""
    try:
        return str(ULID.from_datetime(datetime.fromisoformat(time_iso)))
    except ValueError:
        return str(ULID())


def _identify_old_records(conn: sqlite3.Connection, box: str) -> None:
    """Give every record written before version 3 this box's id, a ULID from its time and a
    sequence number in id order (the append-only trigger is lifted only inside the migration)."""
    conn.execute("INSERT INTO meta (key, value) VALUES ('box', ?)", (box,))
    conn.execute("DROP TRIGGER records_no_update")
    rows = conn.execute("SELECT id, time FROM records ORDER BY id").fetchall()
    conn.executemany("UPDATE records SET box = ?, gid = ?, seq = ? WHERE id = ?",
                     [(box, _ulid_at(t), n, rid) for n, (rid, t) in enumerate(rows, start=1)])
    conn.execute(NO_UPDATE_TRIGGER)


def _places_and_kinds(conn: sqlite3.Connection, box: str) -> None:
    """Version 4: every item's one place becomes its first row in ``stock`` (``base`` = the quantity
    before any record, so quantity = base + records stays true); every old record gets its item's
    place and a kind (``undo`` for a compensating record, ``count`` for an import's stock count,
    else ``log``). Ids, gids, seqs, deltas and undo links are not touched."""
    conn.create_function("edge_name_key", 1, name_key, deterministic=True)
    conn.execute(
        "INSERT INTO stock (sku, location, place_key, quantity, base, pos) "
        "SELECT i.sku, i.location, edge_name_key(i.location), i.quantity, "
        "i.quantity - COALESCE((SELECT SUM(r.delta) FROM records AS r WHERE r.sku = i.sku), 0), 0 FROM items AS i")
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute(
        "UPDATE records SET location = (SELECT i.location FROM items AS i WHERE i.sku = records.sku), "
        "kind = CASE WHEN undoes IS NOT NULL THEN 'undo' WHEN turn_id LIKE 'import:%' THEN 'count' ELSE 'log' END")
    conn.execute(NO_UPDATE_TRIGGER)


#: Schema migrations. ``MIGRATIONS[i]`` is the list of steps taking the database from
#: ``user_version == i`` to ``i + 1``. Never edit a released step; append a new one.
MIGRATIONS: list[list[MigrationStep]] = [
    # version 1: initial schema
    [
        """
        CREATE TABLE items (
            sku      TEXT PRIMARY KEY NOT NULL,
            item     TEXT NOT NULL,
            location TEXT NOT NULL,
            quantity INTEGER NOT NULL,
            unit     TEXT NOT NULL,
            aliases  TEXT NOT NULL DEFAULT ''
        )
        """,
        """
        CREATE TABLE records (
            id        INTEGER PRIMARY KEY AUTOINCREMENT,
            time      TEXT NOT NULL,
            sku       TEXT NOT NULL REFERENCES items(sku),
            delta     INTEGER NOT NULL,
            utterance TEXT NOT NULL,
            turn_id   TEXT NOT NULL,
            undoes    INTEGER NULL REFERENCES records(id)
        )
        """,
        # A record can be undone at most once.
        "CREATE UNIQUE INDEX records_undoes ON records(undoes) WHERE undoes IS NOT NULL",
        """
        CREATE TRIGGER records_no_update BEFORE UPDATE ON records
        BEGIN
            SELECT RAISE(ABORT, 'records is append-only: UPDATE is not allowed');
        END
        """,
        """
        CREATE TRIGGER records_no_delete BEFORE DELETE ON records
        BEGIN
            SELECT RAISE(ABORT, 'records is append-only: DELETE is not allowed');
        END
        """,
    ],
    # version 2: the turn id is an idempotency key, so a turn retried after a crash cannot write
    # its change twice (issue 3, "no acknowledged record is lost, none is doubled"): at most one
    # change per (turn_id, sku) and at most one undo per turn_id. See Store.log / Store.undo.
    [
        "CREATE UNIQUE INDEX records_turn_sku ON records(turn_id, sku) WHERE undoes IS NULL",
        "CREATE UNIQUE INDEX records_turn_undo ON records(turn_id) WHERE undoes IS NOT NULL",
    ],
    # version 3: global identity for a site of several boxes (box id, ULID, per-box sequence);
    # the turn id keys become per box, since two boxes' turn ids may coincide.
    [
        "CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)",
        "ALTER TABLE records ADD COLUMN box TEXT",
        "ALTER TABLE records ADD COLUMN gid TEXT",
        "ALTER TABLE records ADD COLUMN seq INTEGER",
        _identify_old_records,
        "CREATE UNIQUE INDEX records_gid ON records(gid)",
        "CREATE UNIQUE INDEX records_box_seq ON records(box, seq)",
        "DROP INDEX records_turn_sku",
        "DROP INDEX records_turn_undo",
        "CREATE UNIQUE INDEX records_turn_sku ON records(box, turn_id, sku) WHERE undoes IS NULL",
        "CREATE UNIQUE INDEX records_turn_undo ON records(box, turn_id) WHERE undoes IS NOT NULL",
        """
        CREATE TRIGGER records_identity BEFORE INSERT ON records
        WHEN NEW.box IS NULL OR NEW.gid IS NULL OR NEW.seq IS NULL
        BEGIN
            SELECT RAISE(ABORT, 'every record needs box, gid and seq');
        END
        """,
    ],
    # version 4: stock per place (one item in several places), a reorder level, and records that
    # name their place and kind (log, transfer, count, undo); a transfer's two rows share ``op``
    # (the gid of its first row) and are undone as one; a count keeps the value counted.
    [
        "ALTER TABLE items ADD COLUMN reorder_level REAL NULL",
        """
        CREATE TABLE stock (
            sku       TEXT NOT NULL REFERENCES items(sku),
            location  TEXT NOT NULL,
            place_key TEXT NOT NULL,
            quantity  NUMERIC NOT NULL,
            base      NUMERIC NOT NULL DEFAULT 0,
            pos       INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (sku, place_key)
        )
        """,
        "CREATE INDEX stock_place ON stock(place_key)",
        "ALTER TABLE records ADD COLUMN location TEXT NULL",
        "ALTER TABLE records ADD COLUMN kind TEXT NOT NULL DEFAULT 'log'",
        "ALTER TABLE records ADD COLUMN counted NUMERIC NULL",
        "ALTER TABLE records ADD COLUMN op TEXT NULL",
        _places_and_kinds,
        # still one log per turn and SKU; a count or a transfer is one row per turn, SKU and place
        # (an import counts every place, a transfer has two); undos of one turn may be several rows
        # (a transfer undone as one), so the undo key is no longer unique
        "DROP INDEX records_turn_sku",
        "DROP INDEX records_turn_undo",
        "CREATE UNIQUE INDEX records_turn_sku ON records(box, turn_id, sku) WHERE undoes IS NULL AND kind = 'log'",
        "CREATE UNIQUE INDEX records_turn_place ON records(box, turn_id, sku, location) "
        "WHERE undoes IS NULL AND kind <> 'log'",
        "CREATE INDEX records_turn_undo ON records(box, turn_id) WHERE undoes IS NOT NULL",
        "CREATE INDEX records_place ON records(sku, location)",
        "CREATE INDEX records_op ON records(op) WHERE op IS NOT NULL",
        "CREATE INDEX items_low ON items(quantity - reorder_level) WHERE reorder_level IS NOT NULL",
    ],
    # 4 → 5: a place's latest count is found without scanning the place's history (applying
    # 10,000 pulled records took 18 s: bench/fleet.py)
    ["CREATE INDEX records_counts ON records(sku, location) WHERE kind = 'count'"],
    # 5 → 6: other boxes' movements for an SKU this box does not know are kept aside (their box's
    # other records go on) until the item is imported here (edge.stock.pulled)
    [
        """
        CREATE TABLE kept (
            gid       TEXT PRIMARY KEY NOT NULL,
            box       TEXT NOT NULL,
            seq       INTEGER NOT NULL,
            time      TEXT NOT NULL,
            sku       TEXT NOT NULL,
            delta     NUMERIC NOT NULL,
            utterance TEXT NOT NULL,
            turn_id   TEXT NOT NULL,
            undoes    TEXT NULL,
            location  TEXT NULL,
            kind      TEXT NOT NULL,
            counted   NUMERIC NULL,
            op        TEXT NULL,
            UNIQUE (box, seq)
        )
        """,
    ],
    # 6 → 7: questions about a period ("how many gloves did we use last week", edge.stock.history)
    # read a time range, of one SKU or of all, without scanning the history; the columns they sum are
    # in the indexes, so a range is read from the index alone (bench/records_query.py)
    [
        "CREATE INDEX records_time ON records(time, kind, delta, sku, box)",
        "CREATE INDEX records_sku_time ON records(sku, time, kind, delta)",
        # low stock includes what is out or below zero even with no reorder level (edge.stock.low)
        "CREATE INDEX items_quantity ON items(quantity)",
    ],
    # 7 → 8: month-long questions ("what did we log this month", "top used items this month") read
    # 40,000 records and probe each for an undo at 1,000,000 records (116 and 141 ms): per-day and
    # per-hour sums of the records that stand, kept by triggers in the writing transaction
    # (edge.stock.summary, bench/records_query.py)
    SUMMARY_STEPS,
]

#: The schema version this code writes and expects.
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection, path: Path, box: str) -> None:
    """Run the missing steps on ``conn`` (inside the caller's transaction); ``box``: the id for
    records that have none. :class:`edge.stock.places.Refused` for a file newer than this
    code or a failed step (the caller rolls back: nothing is changed)."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise Refused(f"store {path} has schema version {version}, newer than this program's "
                      f"{SCHEMA_VERSION}; upgrade edge or use another store file")
    for target in range(version + 1, SCHEMA_VERSION + 1):
        try:
            for stmt in MIGRATIONS[target - 1]:
                stmt(conn, box) if callable(stmt) else conn.execute(stmt)
        except sqlite3.Error as e:
            raise Refused(f"store {path}: migration from schema version {target - 1} to {target} "
                          f"failed: {e}; nothing was changed (the file is still version {version}); "
                          "fix: back up the file and repair it with the sqlite3 shell, or use another "
                          "store file") from e
        conn.execute(f"PRAGMA user_version = {int(target)}")


def check_box_id(box: str, key: str = "site.box") -> str:
    """``box`` if it matches :data:`BOX_ID_PATTERN`; else :class:`edge.stock.places.Refused` naming ``key``."""
    if not isinstance(box, str) or not re.match(BOX_ID_PATTERN, box):
        raise Refused(f"{key}: {box!r} is not a box id; fix: 1 to 32 characters of a-z, 0-9, '-' "
                      "or '_', starting with a letter or digit (e.g. goods-in)")
    return box


def claim_box(conn: sqlite3.Connection, path: Path, box: str) -> str:
    """Give the file the box id ``box`` (inside the caller's transaction) if none of its records
    has left it; returns the file's id. :class:`edge.stock.places.Refused` when its records
    are on the site or it holds records of ``box``."""
    current = conn.execute("SELECT value FROM meta WHERE key = 'box'").fetchone()[0]
    if box == current:
        return current
    taken = conn.execute("SELECT 1 FROM records WHERE box = ? LIMIT 1", (box,)).fetchone() is not None
    pushed = conn.execute("SELECT value FROM meta WHERE key = 'pushed_seq'").fetchone()
    if (pushed is not None and pushed[0] != "0") or taken:
        raise Refused(
            f"store {path} belongs to box {current!r} "
            f"({f'it holds records of another box {box!r}' if taken else 'its records are on the site'}), "
            f"but site.box is {box!r}; fix: set site.box: {current}, or give box {box!r} a new store "
            "file (store.path)")
    # nothing has left this box yet: its records simply become the new box's
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute("UPDATE records SET box = ? WHERE box = ?", (box, current))
    conn.execute(NO_UPDATE_TRIGGER)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'box'", (box,))
    return box
