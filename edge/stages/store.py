"""The local inventory store: one SQLite file holding the items and an append-only change log.

Two tables:

``items``
    One row per SKU: ``sku`` (primary key), ``item`` (name), ``location`` (e.g. ``"bin 12"``),
    ``quantity`` (integer count in the item's ``unit``, e.g. ``pcs``, ``box``, ``can``) and
    ``aliases`` (spoken names, stored ``;``-separated).
``records``
    One row per stock change: ``id``, ``time`` (ISO 8601, UTC), ``sku``, ``delta`` (signed integer
    change in the item's unit: positive = stock in, negative = stock out), ``utterance`` (the
    transcript that caused it), ``turn_id`` and ``undoes`` (for a compensating record, the ``id``
    of the record it reverts; otherwise NULL). The table is append-only: SQLite triggers abort any
    UPDATE or DELETE, so history is never rewritten. An undo is a new, compensating record.

Durability: the database runs with ``PRAGMA journal_mode=WAL`` and ``PRAGMA synchronous=FULL``.
In WAL mode with ``synchronous=FULL`` SQLite syncs the WAL file at every transaction commit,
which is what makes a committed transaction durable across power loss (SQLite documentation,
"PRAGMA synchronous"; with the default ``NORMAL`` a WAL commit is only synced at the next
checkpoint and the latest commits can be lost on power failure). This holds as long as the
storage honours fsync. :meth:`Store.log` and :meth:`Store.undo` return only after COMMIT, so a
record they return has been written to stable storage.

Global identity (schema version 3, for a site of several boxes, see :mod:`edge.site`): every
record also carries ``box`` (the id of the box that wrote it), ``gid`` (a ULID: 26 characters,
time-ordered, unique across boxes) and ``seq`` (1, 2, 3, ... per box, no gaps). The file's own box
id is in the ``meta`` table. Records written by other boxes are added by :meth:`Store.apply` as
they are pulled from the site; a quantity is always the imported count plus the sum of every
box's records, so merging boxes is adding rows, never overwriting a number.

The schema version is kept in ``PRAGMA user_version``; :mod:`edge.stages.store_schema` lists the
migration steps. To change the schema, append a step there.

All failures the caller can act on are raised as :class:`StoreError`.
"""
from __future__ import annotations

import csv
import io
import re
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from os import PathLike
from pathlib import Path
from typing import Callable, TextIO

from ulid import ULID

from edge.errors import UserError
from edge.stages import csvfile
from edge.stages.csvfile import CSV_COLUMNS, split_aliases
from edge.stages.store_recovery import recover_if_corrupt
from edge.stages.store_schema import MIGRATIONS, NO_UPDATE_TRIGGER, SCHEMA_VERSION
from edge.stages.storefaults import diagnose

__all__ = ["Item", "Record", "Movement", "Store", "StoreError", "CSV_COLUMNS", "LOCAL_BOX", "BOX_ID_PATTERN",
           "check_box_id"]

#: The box id of a store that has never been given one (a box not on a site).
LOCAL_BOX = "local"

#: What a box id may look like: it is part of MQTT topics and of every record's identity.
BOX_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}$"


#: Turn ids of stock-count records written by :meth:`Store.import_csv` start with this.
IMPORT_TURN_PREFIX = "import:"

#: Columns written by :meth:`Store.export_csv`, in order.
EXPORT_COLUMNS = ("id", "time", "sku", "delta", "utterance", "turn_id", "undoes")



class StoreError(UserError):
    """A store operation failed for a reason the caller can report (bad CSV, unknown SKU, a full disk).

    ``reason``: for a failed read or write, one of :data:`edge.stages.storefaults.REASONS`
    (``disk full``, ``read-only``, ``I/O error``, ``corrupt``, ``locked``); None otherwise.
    """

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


def sqlite_failure(error: sqlite3.Error, path: Path) -> StoreError:
    """The :class:`StoreError` for ``error`` raised on the store file ``path``: it says that nothing
    was saved, why (disk full, read-only, I/O error, corrupt) and the fix (see :mod:`edge.stages.storefaults`)."""
    reason, message = diagnose(error, path)
    return StoreError(f"store {path}: nothing was saved: {message}", reason)


class _Guard:
    """The store's lock (re-entrant: one thread at a time) that also turns any ``sqlite3`` error
    leaving it into a :class:`StoreError` naming the file, so no caller sees a ``sqlite3`` traceback."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, exc_type, exc, tb) -> None:
        self._lock.release()
        if isinstance(exc, sqlite3.Error):
            raise sqlite_failure(exc, self.path) from exc


@dataclass(frozen=True)
class Item:
    """One inventory item. ``quantity`` is an integer count in ``unit`` (e.g. ``pcs``, ``box``)."""

    sku: str
    item: str
    location: str
    quantity: int
    unit: str
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class Record:
    """One stock change.

    ``time``: ISO 8601 in UTC (e.g. ``2025-01-31T09:15:02.123+00:00``). ``delta``: signed change
    in the item's unit (positive = in, negative = out). ``undoes``: for a compensating record,
    the ``id`` of the record it reverts; ``None`` otherwise.
    """

    id: int
    time: str
    sku: str
    delta: int
    utterance: str
    turn_id: str
    undoes: int | None


@dataclass(frozen=True)
class Movement:
    """One record as the site sees it: global identity instead of the file's row id.

    ``gid``: ULID (26 characters, time-ordered, unique across boxes). ``box``: the id of the box
    that wrote it. ``seq``: its number among that box's records (1, 2, ...). ``time``: ISO 8601,
    UTC, the writing box's clock. ``delta``: signed change in the item's unit. ``undoes``: the
    ``gid`` of the record it reverts (always the same box's), or ``None``.
    """

    gid: str
    box: str
    seq: int
    time: str
    sku: str
    delta: int
    utterance: str
    turn_id: str
    undoes: str | None


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _item(row: sqlite3.Row | tuple) -> Item:
    sku, item, location, quantity, unit, aliases = row
    return Item(sku, item, location, int(quantity), unit, split_aliases(aliases))


def _record(row: sqlite3.Row | tuple) -> Record:
    rid, time, sku, delta, utterance, turn_id, undoes = row
    return Record(int(rid), time, sku, int(delta), utterance, turn_id, None if undoes is None else int(undoes))


_ITEM_COLS = "sku, item, location, quantity, unit, aliases"
_RECORD_COLS = "id, time, sku, delta, utterance, turn_id, undoes"
_MOVEMENT_SELECT = ("SELECT r.gid, r.box, r.seq, r.time, r.sku, r.delta, r.utterance, r.turn_id, u.gid "
                    "FROM records AS r LEFT JOIN records AS u ON u.id = r.undoes")


def _movement(row: tuple) -> Movement:
    gid, box, seq, time, sku, delta, utterance, turn_id, undoes = row
    return Movement(gid, box, int(seq), time, sku, int(delta), utterance, turn_id, undoes)


def check_box_id(box: str, key: str = "site.box") -> str:
    """``box`` if it matches :data:`BOX_ID_PATTERN`; else :class:`StoreError` naming ``key``."""
    if not isinstance(box, str) or not re.match(BOX_ID_PATTERN, box):
        raise StoreError(f"{key}: {box!r} is not a box id; fix: 1 to 32 characters of a-z, 0-9, '-' "
                         "or '_', starting with a letter or digit (e.g. goods-in)")
    return box


class Store:
    """The SQLite store at ``path`` (created with its parent directories if missing).

    Safe to share between threads for a single writer: the connection is opened with
    ``check_same_thread=False`` and every method holds an internal lock. Use as a context manager
    or call :meth:`close`.

    ``clock`` returns the current time (timezone-aware); it defaults to UTC now and exists so
    tests can fix record times.

    ``box``: this box's id on a site (:data:`BOX_ID_PATTERN`); ``None`` keeps the file's own id
    (:data:`LOCAL_BOX` for a new file). A file whose records have never been pushed to a site
    takes a new id (its records are relabelled); one that has pushed records keeps its id.

    Raises :class:`StoreError` if the file cannot be opened, WAL mode cannot be enabled, the
    file's schema version is newer than this code knows, or ``box`` is malformed or differs from
    the id of a file that has already pushed records to a site.

    ``recover``: back up an intact file, or move a corrupt one aside and rebuild it first
    (:mod:`edge.stages.store_recovery`; the voice service does this); ``recovery`` is then the
    rebuild's report (None when nothing was rebuilt).
    """

    def __init__(self, path: str | PathLike[str], *, clock: Callable[[], datetime] = _utc_now,
                 box: str | None = None, recover: bool = False) -> None:
        self.path = Path(path)
        self.recovery = recover_if_corrupt(self.path) if recover else None  # see edge.stages.store_recovery
        self._clock = clock
        if box is not None:
            check_box_id(box)
        self._lock = _Guard(self.path)
        self._conn: sqlite3.Connection | None = None
        if self.path.is_dir():
            raise StoreError(f"store {self.path} is a folder; point store.path at a file in it, "
                             f"such as {self.path / 'edge.db'}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: no implicit transactions; every write below uses an explicit
            # BEGIN IMMEDIATE ... COMMIT so the transaction boundaries are exactly what we say.
            conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        except OSError as e:
            raise StoreError(f"cannot open store {self.path}: {e}") from e
        except sqlite3.Error as e:
            reason, message = diagnose(e, self.path)
            raise StoreError(f"cannot open store {self.path}: {message}", reason) from e
        self._conn = conn
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(
                    f"cannot enable WAL journal mode on {self.path} (got {mode!r}); "
                    "the store needs a regular file on a local filesystem"
                )
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=5000")
            self._migrate(box or LOCAL_BOX)
            self.box = self._claim_box(box)
        except sqlite3.DatabaseError as e:  # e.g. "file is not a database", a full disk, a read-only file
            conn.close()
            self._conn = None
            reason, message = diagnose(e, self.path)
            fix = "" if reason else "; fix: point store.path at an edge store file or at a new file name"
            raise StoreError(f"cannot open store {self.path}: {message}{fix}", reason) from e
        except BaseException:
            conn.close()
            self._conn = None
            raise

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close the database. Idempotent; other methods raise :class:`StoreError` afterwards."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"store {self.path} is closed")
        return self._conn

    @property
    def schema_version(self) -> int:
        """The file's ``PRAGMA user_version``."""
        with self._lock:
            return int(self._db().execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self, box: str) -> None:
        conn = self._db()
        if int(conn.execute("PRAGMA user_version").fetchone()[0]) == SCHEMA_VERSION:
            return  # the usual case: no write transaction, so opening never waits for another writer
        with _Tx(conn):
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"store {self.path} has schema version {version}, newer than this program's "
                    f"{SCHEMA_VERSION}; upgrade edge or use another store file"
                )
            for target in range(version + 1, SCHEMA_VERSION + 1):
                try:
                    for stmt in MIGRATIONS[target - 1]:
                        stmt(conn, box) if callable(stmt) else conn.execute(stmt)
                except sqlite3.Error as e:
                    # raised inside the transaction: _Tx rolls back, the file keeps its version
                    raise StoreError(
                        f"store {self.path}: migration from schema version {target - 1} to {target} "
                        f"failed: {e}; nothing was changed (the file is still version {version}); "
                        "fix: back up the file and repair it with the sqlite3 shell, or use another "
                        "store file"
                    ) from e
                conn.execute(f"PRAGMA user_version = {int(target)}")

    def _claim_box(self, box: str | None) -> str:
        conn = self._db()
        current = conn.execute("SELECT value FROM meta WHERE key = 'box'").fetchone()[0]
        if box is None or box == current:  # the usual case: no write transaction
            return current
        with _Tx(conn):
            current = conn.execute("SELECT value FROM meta WHERE key = 'box'").fetchone()[0]
            if box is None or box == current:
                return current
            taken = conn.execute("SELECT 1 FROM records WHERE box = ? LIMIT 1", (box,)).fetchone() is not None
            if self._meta_get(conn, "pushed_seq", "0") != "0" or taken:
                raise StoreError(
                    f"store {self.path} belongs to box {current!r} "
                    f"({f'it holds records of another box {box!r}' if taken else 'its records are on the site'}), "
                    f"but site.box is {box!r}; fix: set site.box: {current}, or give box {box!r} a new store "
                    "file (store.path)")
            # nothing has left this box yet: its records simply become the new box's
            conn.execute("DROP TRIGGER records_no_update")
            conn.execute("UPDATE records SET box = ? WHERE box = ?", (box, current))
            conn.execute(NO_UPDATE_TRIGGER)
            conn.execute("UPDATE meta SET value = ? WHERE key = 'box'", (box,))
            return box

    @staticmethod
    def _meta_get(conn: sqlite3.Connection, key: str, default: str | None = None) -> str | None:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else row[0]

    def meta(self, key: str, default: str | None = None) -> str | None:
        """The value stored under ``key`` in the file's ``meta`` table (site sync state), or ``default``."""
        with self._lock:
            return self._meta_get(self._db(), key, default)

    def set_meta(self, **values: str) -> None:
        """Store ``key=value`` pairs in the ``meta`` table in one committed transaction."""
        with self._lock:
            conn = self._db()
            with _Tx(conn):
                conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
                                 "SET value = excluded.value", [(k, str(v)) for k, v in values.items()])

    # -- items -------------------------------------------------------------------------------

    def import_csv(self, path: str | PathLike[str]) -> int:
        """Insert or update items from an inventory CSV; return the number of rows imported.

        The CSV needs a header with the columns :data:`CSV_COLUMNS` (``aliases`` ``;``-separated,
        ``quantity`` a whole number from 0 to :data:`edge.stages.csvfile.MAX_IMPORT_QUANTITY` in
        ``unit``), in UTF-8 (UTF-16/32 with a byte-order mark are read too), at most
        :data:`~edge.stages.csvfile.MAX_CSV_BYTES`, :data:`~edge.stages.csvfile.MAX_CSV_ROWS` rows and
        :data:`~edge.stages.csvfile.MAX_FIELD_CHARS` characters a field, with no NUL or control character. Existing SKUs are overwritten; where the
        quantity changes, the difference is written as a stock-count record (turn id
        ``import:<time>``), which voice ``undo`` never reverts nor reaches past. All rows are
        imported in one transaction, or none.

        Raises :class:`StoreError` naming the file, line and column, and how to fix it, if the
        file cannot be read, is too large or not Unicode text, a column is missing, a row has the
        wrong number of fields, a field is too long or holds a control character, a SKU is empty or
        repeated, there are too many rows, or a quantity is not an integer in the range above.
        """
        path = Path(path)
        rows = self._read_csv(path)
        count_turn = f"{IMPORT_TURN_PREFIX}{self._clock().strftime('%Y%m%dT%H%M%S%f')}"
        with self._lock:
            conn = self._db()
            with _Tx(conn):
                # a quantity that changes for a known SKU is a stock count: it goes into the
                # history as a record, so quantity = first import + sum of records stays true
                for sku, _item, _loc, quantity, _unit, _aliases in rows:
                    old = conn.execute("SELECT quantity FROM items WHERE sku = ?", (sku,)).fetchone()
                    if old is not None and int(old[0]) != quantity:
                        self._insert(conn, sku, quantity - int(old[0]), f"stock count from {path.name}", count_turn, None)
                conn.executemany(
                    f"INSERT INTO items ({_ITEM_COLS}) VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(sku) DO UPDATE SET item=excluded.item, location=excluded.location, "
                    "quantity=excluded.quantity, unit=excluded.unit, aliases=excluded.aliases",
                    rows,
                )
        return len(rows)

    @staticmethod
    def _read_csv(path: Path) -> list[tuple[str, str, str, int, str, str]]:
        try:
            return csvfile.parse_inventory(io.StringIO(csvfile.read_text(path), newline=""))
        except OSError as e:
            raise StoreError(f"{path}: cannot read inventory CSV: {e.strerror or e}") from e
        except ValueError as e:  # the csvfile checks: the message starts with the line and column
            raise StoreError(f"{path}: {e}") from e

    def items(self) -> list[Item]:
        """All items, ordered by SKU."""
        with self._lock:
            cur = self._db().execute(f"SELECT {_ITEM_COLS} FROM items ORDER BY sku")
            return [_item(r) for r in cur.fetchall()]

    def get(self, sku: str) -> Item | None:
        """The item with this SKU, or ``None``."""
        with self._lock:
            row = self._db().execute(f"SELECT {_ITEM_COLS} FROM items WHERE sku = ?", (sku,)).fetchone()
            return None if row is None else _item(row)

    # -- records -----------------------------------------------------------------------------

    def log(self, sku: str, delta: int, utterance: str, turn_id: str) -> tuple[Record, Item]:
        """Record a stock change of ``delta`` (units of the item, + in / - out) and apply it.

        The record insert and the quantity update happen in one transaction, committed (and, with
        WAL + synchronous=FULL, synced to disk) before this returns. Returns the new record and
        the updated item. The store does not stop quantities going below zero; that is the
        caller's decision.

        Idempotent per ``(turn_id, sku)``: if this turn already logged a change for ``sku`` (a
        retry after a crash or a lost reply), nothing is written and the existing record is
        returned with the item as it is now, so a retried turn is never counted twice.

        Raises :class:`StoreError` if ``sku`` is unknown, ``delta`` is not a non-zero ``int``,
        this turn already logged a *different* delta for ``sku``, or the write fails.
        """
        if isinstance(delta, bool) or not isinstance(delta, int):
            raise StoreError(f"delta must be an int, got {type(delta).__name__} {delta!r}")
        if delta == 0:
            raise StoreError("delta must be non-zero")
        with self._lock:
            conn = self._db()
            with _Tx(conn):  # BEGIN IMMEDIATE: the check below and the insert are one write
                if conn.execute("SELECT 1 FROM items WHERE sku = ?", (sku,)).fetchone() is None:
                    raise StoreError(f"unknown sku {sku!r}; import it with import_csv first")
                row = conn.execute(
                    f"SELECT {_RECORD_COLS} FROM records WHERE box = ? AND turn_id = ? AND sku = ? AND undoes IS NULL",
                    (self.box, turn_id, sku),
                ).fetchone()
                if row is not None:
                    done = _record(row)
                    if done.delta != delta:
                        raise StoreError(
                            f"turn {turn_id!r} already logged {done.delta:+d} for {sku} (record "
                            f"{done.id}), not {delta:+d}; fix: a retry must repeat the same change, "
                            "a new change needs a new turn_id"
                        )
                    return done, self._item_now(conn, sku)
                return self._apply(conn, sku, delta, utterance, turn_id, None)

    def undo(self, utterance: str, turn_id: str) -> tuple[Record, Item] | None:
        """Revert this box's most recent change that is not itself an undo and is not undone yet.

        Only this box's own records are candidates: records pulled from other boxes of the site are
        theirs to undo.

        Writes a compensating record (``delta`` = minus the original's, ``undoes`` = its id) and
        updates the quantity in one committed transaction; the original stays in the history.
        Undos in successive turns walk back through earlier records. Returns the compensating
        record and the updated item, or ``None`` if there is nothing to undo.

        Idempotent per ``turn_id``: if this turn already wrote an undo (a retry after a crash),
        nothing more is reverted and that compensating record is returned with the item as it
        is now. One turn undoes at most one change.

        Raises :class:`StoreError` if the write fails.
        """
        with self._lock:
            conn = self._db()
            with _Tx(conn):
                row = conn.execute(
                    f"SELECT {_RECORD_COLS} FROM records WHERE box = ? AND turn_id = ? AND undoes IS NOT NULL",
                    (self.box, turn_id)).fetchone()
                if row is not None:
                    done = _record(row)
                    return done, self._item_now(conn, done.sku)
                row = conn.execute(
                    "SELECT id, sku, delta FROM records AS r WHERE r.box = ? AND r.undoes IS NULL "
                    "AND NOT EXISTS (SELECT 1 FROM records AS u WHERE u.undoes = r.id) "
                    "AND r.seq > COALESCE((SELECT MAX(seq) FROM records WHERE box = ? AND turn_id LIKE ?), 0) "
                    "ORDER BY r.seq DESC LIMIT 1", (self.box, self.box, IMPORT_TURN_PREFIX + "%")
                ).fetchone()
                if row is None:
                    return None
                original_id, sku, delta = row
                return self._apply(conn, sku, -int(delta), utterance, turn_id, int(original_id))

    def _apply(
        self, conn: sqlite3.Connection, sku: str, delta: int, utterance: str, turn_id: str, undoes: int | None
    ) -> tuple[Record, Item]:
        rid, now = self._insert(conn, sku, delta, utterance, turn_id, undoes)
        conn.execute("UPDATE items SET quantity = quantity + ? WHERE sku = ?", (delta, sku))
        return Record(rid, now, sku, delta, utterance, turn_id, undoes), self._item_now(conn, sku)

    def _insert(self, conn: sqlite3.Connection, sku: str, delta: int, utterance: str, turn_id: str,
                undoes: int | None) -> tuple[int, str]:
        """Insert one of this box's records with its global identity; (row id, time)."""
        at = self._clock().astimezone(timezone.utc)
        now = at.isoformat(timespec="milliseconds")
        seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM records WHERE box = ?", (self.box,)).fetchone()[0]
        cur = conn.execute(
            "INSERT INTO records (time, sku, delta, utterance, turn_id, undoes, box, gid, seq) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (now, sku, delta, utterance, turn_id, undoes, self.box, str(ULID.from_datetime(at)), int(seq)),
        )
        return int(cur.lastrowid), now

    @staticmethod
    def _item_now(conn: sqlite3.Connection, sku: str) -> Item:
        return _item(conn.execute(f"SELECT {_ITEM_COLS} FROM items WHERE sku = ?", (sku,)).fetchone())

    def records(self) -> list[Record]:
        """The whole history, oldest first (by id)."""
        with self._lock:
            cur = self._db().execute(f"SELECT {_RECORD_COLS} FROM records ORDER BY id")
            return [_record(r) for r in cur.fetchall()]

    # -- site: global identity -------------------------------------------------------------

    def movements(self, box: str | None = None, after_seq: int = 0, limit: int | None = None) -> list[Movement]:
        """Records as :class:`Movement`: all boxes' in file order (``box=None``), or one box's
        with ``seq > after_seq`` in ``seq`` order, at most ``limit`` of them."""
        with self._lock:
            if box is None:
                sql, args = f"{_MOVEMENT_SELECT} ORDER BY r.id", ()
            else:
                sql, args = f"{_MOVEMENT_SELECT} WHERE r.box = ? AND r.seq > ? ORDER BY r.seq", (box, after_seq)
            if limit is not None:
                sql, args = f"{sql} LIMIT ?", (*args, int(limit))
            return [_movement(r) for r in self._db().execute(sql, args).fetchall()]

    def cursors(self) -> dict[str, int]:
        """The highest ``seq`` held for every box, this one included: ``{box: seq}``."""
        with self._lock:
            return {b: int(n) for b, n in self._db().execute("SELECT box, MAX(seq) FROM records GROUP BY box")}

    def apply(self, movements: list[Movement], *, restore: bool = False) -> int:
        """Add other boxes' movements (pulled from the site) and their deltas to the quantities,
        all in one committed transaction; returns how many were new.

        Idempotent on ``gid``: a movement already held is skipped. Each box's movements must come
        in ``seq`` order without gaps, after those already held. ``restore=True`` also takes this
        box's own movements (a lost store rebuilt from the site, ``edge site resync``).

        Raises :class:`StoreError` (nothing applied) for a movement of this box (unless
        ``restore``), a gap in a box's sequence, an unknown SKU (fix: import the site's inventory
        CSV on this box) or an undo of a record this file does not hold.
        """
        with self._lock:
            conn = self._db()
            with _Tx(conn):
                return sum(self._apply_one(conn, m, restore) for m in movements)

    def _apply_one(self, conn: sqlite3.Connection, m: Movement, restore: bool) -> int:
        if conn.execute("SELECT 1 FROM records WHERE gid = ?", (m.gid,)).fetchone() is not None:
            return 0
        if m.box == self.box and not restore:
            raise StoreError(f"movement {m.gid} claims to be from this box ({self.box}) but this store "
                             "does not hold it; fix: two boxes share site.box: give each its own")
        held = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM records WHERE box = ?", (m.box,)).fetchone()[0]
        if m.seq != held + 1:
            raise StoreError(f"movement {m.gid} is number {m.seq} of box {m.box}, but this store holds "
                             f"up to {held}; movements must be applied in order")
        if conn.execute("SELECT 1 FROM items WHERE sku = ?", (m.sku,)).fetchone() is None:
            raise StoreError(f"movement {m.gid} of box {m.box} is for SKU {m.sku!r}, which this box does not know; "
                             "fix: add the item on this box with 'edge inventory import FILE', FILE a CSV "
                             "holding its row (only new rows: a row of a known item is a stock count)")
        undoes = None
        if m.undoes is not None:
            row = conn.execute("SELECT id FROM records WHERE gid = ?", (m.undoes,)).fetchone()
            if row is None:
                raise StoreError(f"movement {m.gid} of box {m.box} undoes {m.undoes}, which this store does not hold")
            undoes = int(row[0])
        conn.execute("INSERT INTO records (time, sku, delta, utterance, turn_id, undoes, box, gid, seq) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (m.time, m.sku, m.delta, m.utterance, m.turn_id, undoes, m.box, m.gid, m.seq))
        conn.execute("UPDATE items SET quantity = quantity + ? WHERE sku = ?", (m.delta, m.sku))
        return 1

    def unpushed(self) -> int:
        """How many of this box's records the site has not acknowledged yet (a count of records;
        the sync writes the acknowledged ``seq`` as ``pushed_seq`` in the ``meta`` table)."""
        with self._lock:  # one index lookup: the sync loop asks every few hundred ms
            mine = self._db().execute("SELECT COALESCE(MAX(seq), 0) FROM records WHERE box = ?", (self.box,)).fetchone()[0]
        return int(mine) - int(self.meta("pushed_seq", "0") or 0)

    def site_offline(self) -> tuple[str, int] | None:
        """``(since, records waiting)`` while the site sync reports the site unreachable or failing
        (``since``: ISO 8601 UTC), ``None`` when online or not on a site."""
        if self.meta("site_state") not in ("offline", "error"):
            return None
        return self.meta("site_offline_since") or "", self.unpushed()

    def negatives(self) -> list[Item]:
        """Items whose quantity is below zero (more left than the records had: count them), by SKU."""
        return [i for i in self.items() if i.quantity < 0]

    def export_csv(self, fileobj: TextIO) -> int:
        """Write the history as CSV (header :data:`EXPORT_COLUMNS`, ``undoes`` empty when None)
        to a text file object (open it with ``newline=""``). Returns the number of records.

        Text cells that a spreadsheet would run as a formula get a leading ``'``
        (:func:`edge.stages.csvfile.safe_cell`); numbers are written as they are."""
        records = self.records()
        writer = csv.writer(fileobj)
        writer.writerow(EXPORT_COLUMNS)
        for r in records:
            writer.writerow([csvfile.safe_cell(v) for v in (r.id, r.time, r.sku, r.delta, r.utterance, r.turn_id,
                                                            "" if r.undoes is None else r.undoes)])
        return len(records)


class _Tx:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any exception, a failed COMMIT included).

    sqlite3 errors go on as they are: the store's lock (:class:`_Guard`) turns them into a
    :class:`StoreError` naming the file and the reason.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
            except sqlite3.Error:
                self._rollback()  # a COMMIT that failed on a full disk can leave the transaction open
                raise
            return False
        self._rollback()
        return False

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
