"""The store's SQLite schema: the migration steps, kept in ``PRAGMA user_version`` order.

``MIGRATIONS[i]`` takes a file from ``user_version == i`` to ``i + 1``; a step is an SQL statement
or a function of (connection, box id). :class:`edge.stages.store.Store` runs the missing steps in
one transaction when it opens a file. Never edit a released step; append a new one.
"""
from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Callable, Union

from ulid import ULID

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "NO_UPDATE_TRIGGER", "MigrationStep"]

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
]

#: The schema version this code writes and expects.
SCHEMA_VERSION = len(MIGRATIONS)
