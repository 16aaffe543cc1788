"""The local inventory store: one SQLite file holding the items, their stock per place and an
append-only change log.

Tables: ``items`` (one row per SKU: ``sku``, ``item`` name, ``location`` its first place,
``quantity`` the total in ``unit``, ``aliases`` ``;``-separated, ``reorder_level``); ``stock`` (one
row per SKU and place, see :mod:`edge.stock.places`); ``records`` (one row per stock change:
``id``, ``time`` ISO 8601 UTC, ``sku``, ``delta`` signed, ``utterance``, ``turn_id``, ``undoes``,
``location``, ``kind``, ``counted``, ``op``, and the global identity ``box``, ``gid`` (a ULID),
``seq`` per box); ``meta`` (the box id, site sync state). ``records`` is append-only: SQLite
triggers abort any UPDATE or DELETE; an undo is a new, compensating record.

Durability: ``PRAGMA journal_mode=WAL`` and ``PRAGMA synchronous=FULL``: SQLite syncs the WAL at
every commit, so a committed transaction survives power loss (SQLite documentation, "PRAGMA
synchronous"; with ``NORMAL`` the latest commits can be lost) as long as the storage honours fsync.
Every write method returns only after COMMIT.

A site of several boxes (:mod:`edge.site`) exchanges records by gid; :meth:`Store.apply` adds the
other boxes' records. A place's quantity is its base (the imported count) or its latest stock
count, plus the records after it, so every box that holds the same records holds the same stock.

The values it holds are :mod:`edge.stock.types`. The schema version (8) is ``PRAGMA user_version``; :mod:`edge.stock.schema` lists the
migration steps. All failures the caller can act on are raised as :class:`StoreError`.
"""
from __future__ import annotations

import io
import sqlite3
from contextlib import contextmanager
from datetime import datetime, timezone
from functools import partial
from os import PathLike
from pathlib import Path
from typing import Callable, Iterator, TextIO

from edge.stages.names import name_key
from edge.stock import csvfile, low, order, places, pulled
from edge.stock.csvfile import CSV_COLUMNS, InventoryRow, split_aliases
from edge.stock.faults import StoreError, diagnose, sqlite_failure
from edge.stock.importer import ImportReport, import_inventory
from edge.stock.periods import Calendar
from edge.stock.places import IMPORT_TURN_PREFIX, add_place, clean, clean_or_none, places_of, settle
from edge.stock.recovery import recover_if_corrupt
from edge.stock.schema import LOCAL_BOX, SCHEMA_VERSION, check_box_id, claim_box, migrate
from edge.stock.tx import Guard, Tx
from edge.stock.types import (
    ITEM_COLS,
    MOVEMENT_SELECT,
    RECORD_COLS,
    RECORD_KINDS,
    Item,
    Movement,
    Record,
    movement_of,
    record_of,
)
from edge.stock.undo import CountSettled, Covered, later_counts

__all__ = ["Item", "Record", "Movement", "Store", "StoreError", "CountSettled", "Covered", "CSV_COLUMNS", "RECORD_KINDS",
           "check_quantity"]

#: Columns written by :meth:`Store.export_csv`, in order.
EXPORT_COLUMNS = ("id", "time", "sku", "delta", "utterance", "turn_id", "undoes", "location", "kind", "counted")


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


_Refusals = partial(places.refusals_as, StoreError)  # a Refused leaving the block is a StoreError


def check_quantity(value: object, unit: str, what: str = "delta") -> int | float:
    """:func:`edge.stock.places.check_quantity`, raising :class:`StoreError`."""
    with _Refusals():
        return places.check_quantity(value, unit, what)


class Store:
    """The SQLite store at ``path`` (created with its parent directories if missing).

    Safe to share between threads for a single writer (every method holds an internal lock). Use
    as a context manager or call :meth:`close`. ``clock``: the current time (timezone-aware, for tests).

    ``box``: this box's id on a site (:data:`edge.stock.schema.BOX_ID_PATTERN`); ``None`` keeps
    the file's own id (:data:`edge.stock.schema.LOCAL_BOX` for a new file). A file whose records have never been pushed to a site
    takes a new id (its records are relabelled); one that has pushed records keeps its id.

    Raises :class:`StoreError` if the file cannot be opened, WAL mode cannot be enabled, the
    file's schema version is newer than this code knows, or ``box`` is malformed or differs from
    the id of a file that has already pushed records to a site.
    ``recover``: back up an intact file, or move a corrupt one aside and rebuild it first
    (:mod:`edge.stock.recovery`); ``recovery`` is the rebuild's report, or None. ``calendar``: the
    zone, first weekday and clock of questions about periods (:class:`edge.stock.periods.Calendar`;
    default the system's zone, Monday and ``clock``).
    """

    def __init__(self, path: str | PathLike[str], *, clock: Callable[[], datetime] = _utc_now,
                 box: str | None = None, recover: bool = False, calendar: Calendar | None = None) -> None:
        self.path = Path(path)
        self.calendar = calendar or Calendar(clock=clock)  # the zone and week the records' periods are read in
        self.recovery = recover_if_corrupt(self.path) if recover else None  # see edge.stock.recovery
        self._clock = clock
        if box is not None:
            with _Refusals():
                check_box_id(box)
        self._lock = Guard(self.path, sqlite_failure)
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
        with Tx(conn), _Refusals():  # a failed step rolls back: the file keeps its version
            migrate(conn, self.path, box)

    def _claim_box(self, box: str | None) -> str:
        conn = self._db()
        current = conn.execute("SELECT value FROM meta WHERE key = 'box'").fetchone()[0]
        if box is None or box == current:  # the usual case: no write transaction
            return current
        with Tx(conn), _Refusals():
            return claim_box(conn, self.path, box)

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
            with Tx(conn):
                conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
                                 "SET value = excluded.value", [(k, str(v)) for k, v in values.items()])

    # -- items -------------------------------------------------------------------------------

    def import_csv(self, path: str | PathLike[str], *, prune: bool = False) -> ImportReport:
        """Insert or update items from an inventory CSV (:func:`edge.stock.csvfile.parse_inventory`:
        columns :data:`CSV_COLUMNS`, optional ``reorder_level``, one row per SKU and place, with its
        bounds). Known SKUs are overwritten; where a known place's quantity changes, a stock-count
        record is written (turn id ``import:<time>``, the counted value kept), which voice ``undo``
        never reverts nor reaches past. Items the file does not list are kept, or with ``prune``
        removed when no record names them. Other boxes' movements kept aside for a new SKU are added
        (:mod:`edge.stock.pulled`). One transaction, or none. Returns the
        :class:`edge.stock.importer.ImportReport` (rows, left-out items, names that sound alike).

        Raises :class:`StoreError` naming the file, line and column, and the fix, for any refusal of
        the CSV checks, and for names or aliases of two SKUs that compare equal
        (:func:`edge.stages.names.name_key`; both lines and names given).
        """
        path = Path(path)
        rows = self._read_csv(path)
        count_turn = f"{IMPORT_TURN_PREFIX}{self._clock().strftime('%Y%m%dT%H%M%S%f')}"
        with self._lock:
            conn = self._db()
            utterance = f"stock count from {path.name}"

            def write_count(sku: str, delta: int | float, place: str, counted: int | float) -> int:
                return self._insert(conn, sku, delta, utterance, count_turn, None, place, "count", counted=counted)[0]

            try:
                with Tx(conn), _Refusals():
                    report = import_inventory(conn, rows, write_count, prune)
                    pulled.release_kept(conn, self.box, RECORD_KINDS, Movement)  # other boxes' movements of the new items
                    return report
            except ValueError as e:  # two SKUs' names compare equal: nothing was written
                raise StoreError(f"{path}: {e}") from e

    @staticmethod
    def _read_csv(path: Path) -> list[InventoryRow]:
        try:
            return csvfile.parse_inventory(io.StringIO(csvfile.read_text(path), newline=""))
        except OSError as e:
            raise StoreError(f"{path}: cannot read inventory CSV: {e.strerror or e}") from e
        except ValueError as e:  # the csvfile checks: the message starts with the line and column
            raise StoreError(f"{path}: {e}") from e

    def items(self) -> list[Item]:
        """All items with their places, ordered by SKU (a whole-inventory read: not for a turn)."""
        with self._lock:
            conn = self._db()
            stock: dict[str, list[tuple[str, int | float]]] = {}
            for sku, loc, q in conn.execute("SELECT sku, location, quantity FROM stock ORDER BY sku, pos, rowid"):
                stock.setdefault(sku, []).append((loc, clean(q)))
            cur = conn.execute(f"SELECT {ITEM_COLS} FROM items ORDER BY sku")
            return [self._item(r, tuple(stock.get(r[0], ()))) for r in cur.fetchall()]

    def items_version(self) -> int:
        """Changes whenever the item list does (an import, a new place): one read tells whether to
        read :meth:`items` again."""
        with self._lock:
            return int(self._meta_get(self._db(), "items_version", "0") or 0)

    def get(self, sku: str) -> Item | None:
        """The item with this SKU with its places, or ``None`` (two indexed reads)."""
        with self._lock:
            conn = self._db()
            row = conn.execute(f"SELECT {ITEM_COLS} FROM items WHERE sku = ?", (sku,)).fetchone()
            return None if row is None else self._item(row, places_of(conn, sku))

    @staticmethod
    def _item(row: tuple, stock: tuple[tuple[str, int | float], ...]) -> Item:
        sku, item, location, quantity, unit, aliases, level = row
        return Item(sku, item, location, clean(quantity), unit, split_aliases(aliases), stock, clean_or_none(level))

    def place_contents(self, location: str, limit: int = 5) -> tuple[list[tuple[Item, int | float]], int]:
        """What is stored at ``location`` (compared by name key): up to ``limit`` ``(item, quantity
        there)`` by SKU, and how many items are there in all. Indexed; never reads the whole inventory."""
        with self._lock:
            rows, total = places.at_place(self._db(), location, limit)
            return [(self.get(sku), q) for sku, q in rows], total

    def low_stock(self, limit: int = 5) -> tuple[list[Item], int]:
        """Items that are low (:func:`edge.stock.low.why`: below zero, out of stock, or at or below their
        reorder level), none left first, then lowest margin: up to ``limit`` and how many in all."""
        with self._lock:
            skus, total = low.low(self._db(), limit)
            return [self.get(s) for s in skus], total

    # -- records -----------------------------------------------------------------------------

    def log(self, sku: str, delta: int | float, utterance: str, turn_id: str,
            location: str | None = None) -> tuple[Record, Item]:
        """Record a stock change of ``delta`` (units of the item, + in / - out) at ``location``
        (one of its places by name key; None for an item in one place; a positive delta may add a
        new place) in one committed transaction (WAL + synchronous=FULL: synced when this returns).
        Returns the record and the updated item. Quantities may go below zero (the caller decides).

        Idempotent per ``(turn_id, sku, location)``: a retried turn gets the existing record back.

        Raises :class:`StoreError` for an unknown SKU, a zero or invalid ``delta``
        (:func:`check_quantity`), no place for an item in several, a place the item is not at (for
        a negative delta), a different delta already logged by this turn there, or a failed write.
        """
        return self.log_many([(sku, delta, location)], utterance, turn_id)[0]

    def log_many(self, changes: list[tuple[str, int | float, str | None]], utterance: str,
                 turn_id: str) -> list[tuple[Record, Item]]:
        """Several :meth:`log` changes ``(sku, delta, location)`` in one transaction: all are
        written or none. Returns ``(record, item)`` per change, in order. Raises as :meth:`log`."""
        with self._lock:
            conn = self._db()
            with Tx(conn), _Refusals():  # BEGIN IMMEDIATE: the checks below and the inserts are one write
                return [self._log_one(conn, sku, delta, location, utterance, turn_id)
                        for sku, delta, location in changes]

    def _log_one(self, conn: sqlite3.Connection, sku: str, delta: object, location: str | None,
                 utterance: str, turn_id: str) -> tuple[Record, Item]:
        delta = places.check_quantity(delta, places.unit_of(conn, sku))
        if delta == 0:
            raise StoreError("delta must be non-zero")
        place = places.place_for(conn, sku, location, create=delta > 0)
        done = self._done(conn, turn_id, sku, place, "log")
        if done is not None:
            if (done.delta, done.location) != (delta, place):
                raise StoreError(
                    f"turn {turn_id!r} already logged {done.delta:+} for {sku} at {done.location} (record "
                    f"{done.id}), not {delta:+} at {place}; fix: a retry must repeat the same change, "
                    "a new change needs a new turn_id")
            return done, self._item_now(conn, sku)
        return self._write(conn, sku, delta, utterance, turn_id, None, place, "log")

    def transfer(self, sku: str, quantity: int | float, from_location: str, to_location: str,
                 utterance: str, turn_id: str) -> tuple[Record, Record, Item]:
        """Move ``quantity`` (> 0) of ``sku`` from one of its places to another (added when new): one
        operation of two records (kind ``transfer``, sharing ``op``), committed together and undone
        as one. Returns (the record out of ``from_location``, the record into ``to_location``, the
        item). Idempotent per turn (a retry returns the records written). Raises
        :class:`StoreError` for an unknown SKU or place, the same place twice, a quantity that is
        not positive or not valid (:func:`check_quantity`), or a failed write."""
        with self._lock:
            conn = self._db()
            with Tx(conn), _Refusals():
                q = places.check_quantity(quantity, places.unit_of(conn, sku), "quantity")
                if q <= 0:
                    raise StoreError(f"a transfer moves a positive quantity, not {q}")
                src = places.place_for(conn, sku, from_location, create=False)
                if name_key(src) == name_key(to_location):
                    raise StoreError(f"a transfer needs two places; {sku} would move from {src} to itself")
                done = self._done(conn, turn_id, sku, src, "transfer")
                if done is not None and done.op is not None:
                    out, into = self._op_records(conn, done.op)[:2]
                    return out, into, self._item_now(conn, sku)
                dst = add_place(conn, sku, to_location)
                rid, now, gid = self._insert(conn, sku, -q, utterance, turn_id, None, src, "transfer", op=None,
                                             own_op=True)
                settle(conn, rid)
                out = Record(rid, now, sku, -q, utterance, turn_id, None, src, "transfer", None, gid)
                into, item = self._write(conn, sku, q, utterance, turn_id, None, dst, "transfer", op=gid)
                return out, into, item

    def count(self, sku: str, counted: int | float, utterance: str, turn_id: str,
              location: str | None = None) -> tuple[Record, Item]:
        """A stock count: ``counted`` of ``sku`` are at ``location`` (None: the item's only place).

        Writes a ``count`` record whose ``delta`` is counted − recorded (zero when they agree) and
        ``counted`` the value; the place then holds the counted value (on every box of a site,
        whichever order records arrive in: see :mod:`edge.stock.places`). Idempotent per
        ``(turn_id, sku, location)``. Raises :class:`StoreError` as :meth:`log` (a negative count too)."""
        with self._lock:
            conn = self._db()
            with Tx(conn), _Refusals():
                c = places.check_quantity(counted, places.unit_of(conn, sku), "counted quantity")
                if c < 0:
                    raise StoreError(f"a count cannot be negative ({c})")
                place = places.place_for(conn, sku, location, create=True)
                done = self._done(conn, turn_id, sku, place, "count")
                if done is not None:
                    return done, self._item_now(conn, sku)
                now = places.quantity_at(conn, sku, place)
                return self._write(conn, sku, clean(c - now), utterance, turn_id, None, place, "count", counted=c)

    def undo(self, utterance: str, turn_id: str, sku: str | None = None) -> tuple[Record, Item] | None:
        """Revert this box's most recent change (of ``sku`` when given) that is neither an undo nor undone (a transfer's
        two rows as one), never reaching past the latest import's stock count; other boxes' records
        are theirs to undo. Writes a compensating record per row (``delta`` negated, ``undoes`` its
        id, kind ``undo``) in one committed transaction. Returns the (first) compensating record and
        the item, or ``None`` with nothing to undo. Idempotent per ``turn_id`` (one undo per turn: a
        retry gets that undo back). Raises :class:`CountSettled` (nothing written) when a later stock
        count at its place already settled it (:mod:`edge.stock.undo`), :class:`StoreError` if the write fails.
        """
        with self._lock:
            conn = self._db()
            with Tx(conn):
                row = conn.execute(
                    f"SELECT {RECORD_COLS} FROM records WHERE box = ? AND turn_id = ? AND undoes IS NOT NULL "
                    "ORDER BY id LIMIT 1", (self.box, turn_id)).fetchone()
                if row is not None:
                    done = record_of(row)
                    return done, self._item_now(conn, done.sku)
                row = conn.execute(
                    f"SELECT {RECORD_COLS} FROM records AS r WHERE r.box = ? AND r.undoes IS NULL "
                    "AND NOT EXISTS (SELECT 1 FROM records AS u WHERE u.undoes = r.id) "
                    "AND r.seq > COALESCE((SELECT MAX(seq) FROM records WHERE box = ? AND turn_id LIKE ?), 0) "
                    "AND (? IS NULL OR r.sku = ?) "
                    "ORDER BY r.seq DESC LIMIT 1", (self.box, self.box, IMPORT_TURN_PREFIX + "%", sku, sku)
                ).fetchone()
                if row is None:
                    return None
                return self._revert(conn, record_of(row), utterance, turn_id)

    def undo_record(self, record_id: int, utterance: str, turn_id: str) -> tuple[Record, Item]:
        """Revert the record ``record_id`` of this box, whichever it is (the console's undo): a
        compensating record as :meth:`undo` writes (a transfer's two rows as one). Returns the
        (first) compensating record and the updated item.

        Raises :class:`StoreError` naming why for an unknown record, an undo record, a record
        already undone (naming the undo), another box's record, or a failed write;
        :class:`CountSettled` when a later stock count at its place already settled it."""
        with self._lock:
            conn = self._db()
            with Tx(conn):
                return self._revert(conn, self._undoable(conn, record_id), utterance, turn_id)

    def _undoable(self, conn, record_id: int) -> Record:
        """The record ``record_id`` when this box may revert it (see :meth:`undo_record`), else
        :class:`StoreError` naming why."""
        row = conn.execute(f"SELECT {RECORD_COLS}, box FROM records WHERE id = ?", (int(record_id),)).fetchone()
        if row is None:
            raise StoreError(f"there is no record {record_id}")
        rec, box = record_of(row[:-1]), row[-1]
        if rec.undoes is not None:
            raise StoreError(f"record {rec.id} is itself an undo (of record {rec.undoes}); "
                             "fix: log the change again instead")
        if box != self.box:
            raise StoreError(f"record {rec.id} was written by box {box!r}; only that box can undo it")
        for r in self._op_records(conn, rec.op) if rec.op else [rec]:
            undone = conn.execute("SELECT id FROM records WHERE undoes = ?", (r.id,)).fetchone()
            if undone is not None:
                raise StoreError(f"record {r.id} is already undone (by record {undone[0]})")
        return rec

    def amend(self, record_id: int, delta: int | float, utterance: str, turn_id: str) -> tuple[Record, Record, Item]:
        """Correct this box's log ``record_id`` to ``delta`` (the same item and place) in one committed
        transaction: its undo, as :meth:`undo` writes it, and the corrected log. Returns (the undo, the
        corrected log, the item). Raises :class:`StoreError` for a record that is not one of this box's
        logs or is already undone, a zero or invalid ``delta``, or a failed write (nothing written);
        :class:`CountSettled` when a later stock count settled it."""
        with self._lock:
            conn = self._db()
            with Tx(conn), _Refusals():
                rec = self._undoable(conn, record_id)
                if rec.kind != "log":
                    raise StoreError(f"record {rec.id} is a {rec.kind}, not a log; only a log is corrected")
                undo, _item = self._revert(conn, rec, utterance, turn_id)
                new, item = self._log_one(conn, rec.sku, delta, rec.location, utterance, turn_id)
                return undo, new, item

    def settled_by_count(self, record_id: int) -> list[Covered]:
        """Why an undo of record ``record_id`` would be refused as :class:`CountSettled` (a later
        stock count at its place, per place: :mod:`edge.stock.undo`); empty when it would not."""
        with self._lock:
            conn = self._db()
            row = conn.execute(f"SELECT {RECORD_COLS} FROM records WHERE id = ?", (int(record_id),)).fetchone()
            if row is None:
                return []
            rec = record_of(row)
            return later_counts(conn, self._op_records(conn, rec.op) if rec.op else [rec])

    def _revert(self, conn: sqlite3.Connection, rec: Record, utterance: str, turn_id: str) -> tuple[Record, Item]:
        rows = self._op_records(conn, rec.op) if rec.op else [rec]
        covered = later_counts(conn, rows)
        if covered:  # a later count already settled the stock: reverting would leave one nothing explains
            raise CountSettled(covered, self.box, self._item_now(conn, rec.sku))
        first: tuple[Record, Item] | None = None
        op = None
        for r in rows:
            out = self._write(conn, r.sku, -r.delta, utterance, turn_id, r.id, r.location, "undo", op=op,
                              own_op=len(rows) > 1 and op is None)
            if first is None:
                first, op = out, (out[0].op if len(rows) > 1 else None)
        assert first is not None
        return first[0], self._item_now(conn, first[0].sku)

    def _write(self, conn: sqlite3.Connection, sku: str, delta: int | float, utterance: str, turn_id: str,
               undoes: int | None, location: str | None, kind: str, *, counted: int | float | None = None,
               op: str | None = None, own_op: bool = False) -> tuple[Record, Item]:
        rid, now, gid = self._insert(conn, sku, delta, utterance, turn_id, undoes, location, kind,
                                     counted=counted, op=op, own_op=own_op)
        settle(conn, rid)
        return (Record(rid, now, sku, delta, utterance, turn_id, undoes, location, kind, counted,
                       gid if own_op else op), self._item_now(conn, sku))

    def _insert(self, conn: sqlite3.Connection, sku: str, delta: int | float, utterance: str, turn_id: str,
                undoes: int | None, location: str | None = None, kind: str = "log", *,
                counted: int | float | None = None, op: str | None = None, own_op: bool = False) -> tuple[int, str, str]:
        """Insert one of this box's records with its global identity; (row id, time, gid).
        ``own_op``: the record starts an operation (its ``op`` is its own gid)."""
        at = self._clock().astimezone(timezone.utc)
        now = at.isoformat(timespec="milliseconds")  # a label: the order is the gid's (edge.stock.order)
        order.note_step_back(conn, self.box, at)
        gid = order.next_gid(conn, at)
        seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM records WHERE box = ?", (self.box,)).fetchone()[0]
        cur = conn.execute(
            "INSERT INTO records (time, sku, delta, utterance, turn_id, undoes, box, gid, seq, location, kind, "
            "counted, op) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (now, sku, delta, utterance, turn_id, undoes, self.box, gid, int(seq), location, kind, counted,
             gid if own_op else op),
        )
        return int(cur.lastrowid), now, gid

    def _done(self, conn: sqlite3.Connection, turn_id: str, sku: str, place: str, kind: str) -> Record | None:
        """This turn's record of ``kind`` for ``sku`` (a log at any place: one log per turn and SKU)."""
        row = conn.execute(
            f"SELECT {RECORD_COLS} FROM records WHERE box = ? AND turn_id = ? AND sku = ? AND undoes IS NULL "
            "AND kind = ? AND (kind = 'log' OR location = ?)", (self.box, turn_id, sku, kind, place)).fetchone()
        return None if row is None else record_of(row)

    @staticmethod
    def _op_records(conn: sqlite3.Connection, op: str) -> list[Record]:
        return [record_of(r) for r in conn.execute(f"SELECT {RECORD_COLS} FROM records WHERE op = ? ORDER BY id", (op,))]

    def _item_now(self, conn: sqlite3.Connection, sku: str) -> Item:
        return self._item(conn.execute(f"SELECT {ITEM_COLS} FROM items WHERE sku = ?", (sku,)).fetchone(),
                          places_of(conn, sku))

    def records(self, last: int | None = None) -> list[Record]:
        """The whole history, or its ``last`` records (one indexed read), oldest first (by id)."""
        q = f"SELECT * FROM (SELECT {RECORD_COLS} FROM records ORDER BY id DESC LIMIT ?) ORDER BY id"
        with self._lock:
            return [record_of(r) for r in self._db().execute(q, (-1 if last is None else last,))]

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The open connection under the store's lock, for read-only queries (:mod:`edge.stock.history`).
        Raises :class:`StoreError` when the store is closed."""
        with self._lock:
            yield self._db()

    def operation(self, op: str) -> list[Record]:
        """The records of the operation ``op`` (a transfer's two rows, or their undo), by id."""
        with self._lock:
            return self._op_records(self._db(), op)

    # -- site: global identity -------------------------------------------------------------

    def movements(self, box: str | None = None, after_seq: int = 0, limit: int | None = None) -> list[Movement]:
        """Records as :class:`Movement`: all boxes' in file order (``box=None``), or one box's
        with ``seq > after_seq`` in ``seq`` order, at most ``limit`` of them."""
        with self._lock:
            if box is None:
                sql, args = f"{MOVEMENT_SELECT} ORDER BY r.id", ()
            else:
                sql, args = f"{MOVEMENT_SELECT} WHERE r.box = ? AND r.seq > ? ORDER BY r.seq", (box, after_seq)
            if limit is not None:
                sql, args = f"{sql} LIMIT ?", (*args, int(limit))
            return [movement_of(r) for r in self._db().execute(sql, args).fetchall()]

    def cursors(self) -> dict[str, int]:
        """The highest ``seq`` held for every box, this one included: ``{box: seq}``."""
        with self._lock:
            return {b: int(n) for b, n in self._db().execute(pulled.CURSORS)}

    def apply(self, movements: list[Movement], *, restore: bool = False) -> int:
        """Add other boxes' movements (pulled from the site) and their deltas to the quantities,
        all in one committed transaction, each place touched settled once
        (:func:`edge.stock.pulled.apply_batch`); returns how many were new.

        Idempotent on ``gid``: a movement already held is skipped. Each box's movements must come
        in ``seq`` order without gaps, after those already held. ``restore=True`` also takes this
        box's own movements (a lost store rebuilt from the site, ``edge site resync``).

        A movement for an SKU this box does not know is kept aside (:meth:`kept_aside`) until the
        item is imported. Raises :class:`StoreError` (nothing applied) for a movement of this box
        (unless ``restore``), a gap in a box's sequence, an unknown SKU with ``restore`` or an undo
        of a record this file does not hold.
        """
        with self._lock:
            conn = self._db()
            with Tx(conn), _Refusals():
                return len(pulled.apply_batch(conn, self.box, movements, restore, RECORD_KINDS))

    def kept_aside(self) -> list[dict]:
        """Other boxes' movements kept aside for SKUs this box does not know: ``[{"sku", "box", "records"}]``."""
        with self._lock:
            return pulled.kept_aside(self._db())

    def unpushed(self) -> int:
        """How many of this box's records the site has not acknowledged yet (a count of records;
        the sync writes the acknowledged ``seq`` as ``pushed_seq`` in the ``meta`` table)."""
        with self._lock:  # one index lookup: the sync loop asks every few hundred ms
            mine = self._db().execute("SELECT COALESCE(MAX(seq), 0) FROM records WHERE box = ?", (self.box,)).fetchone()[0]
        return int(mine) - int(self.meta("pushed_seq", "0") or 0)

    def site_offline(self) -> tuple[str, int, str] | None:
        """``(since, records waiting, why stopped)`` while the site sync reports the site unreachable
        or failing (``since``: ISO 8601 UTC; why stopped: "" unless the sync stopped, e.g. another box
        uses this box id), ``None`` when online or not on a site."""
        state = self.meta("site_state")
        if state not in ("offline", "error", "stopped"):
            return None
        return self.meta("site_offline_since") or "", self.unpushed(), (self.meta("site_stopped") or "") * (state == "stopped")

    def clock_step_back(self) -> dict | None:
        """The latest step of the wall clock back behind this box's previous record:
        ``{"at", "from"}`` (ISO 8601 UTC) and ``"back_s"`` (s), or None (:mod:`edge.stock.order`)."""
        with self._lock:
            return order.last_step_back(self._db())

    def negatives(self) -> list[Item]:
        """Items whose quantity is below zero (more left than the records had: count them), by SKU."""
        with self._lock:
            skus = [r[0] for r in self._db().execute("SELECT sku FROM items WHERE quantity < 0 ORDER BY sku")]
        return [i for i in (self.get(s) for s in skus) if i is not None]

    def export_csv(self, fileobj: TextIO) -> int:
        """Write the history as CSV (header :data:`EXPORT_COLUMNS`, empty cells for None) to a text
        file object (opened with ``newline=""``); returns the number of records. Text cells a
        spreadsheet would run as a formula get a leading ``'`` (:func:`edge.stock.csvfile.safe_cell`)."""
        records = self.records()
        return csvfile.write_rows(fileobj, EXPORT_COLUMNS, [(
            r.id, r.time, r.sku, r.delta, r.utterance, r.turn_id, "" if r.undoes is None else r.undoes,
            r.location or "", r.kind, "" if r.counted is None else r.counted) for r in records])
