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

The schema version is kept in ``PRAGMA user_version``; :data:`MIGRATIONS` lists the steps (index
``i`` brings the file from version ``i`` to ``i + 1``). To change the schema, append a step.

All failures the caller can act on are raised as :class:`StoreError`.
"""
from __future__ import annotations

import csv
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from os import PathLike
from pathlib import Path
from typing import Callable, TextIO

from edge.errors import UserError

__all__ = ["Item", "Record", "Store", "StoreError", "MIGRATIONS", "SCHEMA_VERSION", "CSV_COLUMNS"]

#: Columns an inventory CSV must have (in any order; extra columns are ignored).
CSV_COLUMNS = ("sku", "item", "location", "quantity", "unit", "aliases")

#: Turn ids of stock-count records written by :meth:`Store.import_csv` start with this.
IMPORT_TURN_PREFIX = "import:"

#: Columns written by :meth:`Store.export_csv`, in order.
EXPORT_COLUMNS = ("id", "time", "sku", "delta", "utterance", "turn_id", "undoes")

#: Schema migrations. ``MIGRATIONS[i]`` is the list of statements taking the database from
#: ``user_version == i`` to ``i + 1``. Never edit a released step; append a new one.
MIGRATIONS: list[list[str]] = [
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
]

#: The schema version this code writes and expects.
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(UserError):
    """A store operation failed for a reason the caller can report (bad CSV, unknown SKU, ...)."""


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


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _split_aliases(text: str) -> tuple[str, ...]:
    return tuple(a.strip() for a in (text or "").split(";") if a.strip())


def _item(row: sqlite3.Row | tuple) -> Item:
    sku, item, location, quantity, unit, aliases = row
    return Item(sku, item, location, int(quantity), unit, _split_aliases(aliases))


def _record(row: sqlite3.Row | tuple) -> Record:
    rid, time, sku, delta, utterance, turn_id, undoes = row
    return Record(int(rid), time, sku, int(delta), utterance, turn_id, None if undoes is None else int(undoes))


_ITEM_COLS = "sku, item, location, quantity, unit, aliases"
_RECORD_COLS = "id, time, sku, delta, utterance, turn_id, undoes"


class Store:
    """The SQLite store at ``path`` (created with its parent directories if missing).

    Safe to share between threads for a single writer: the connection is opened with
    ``check_same_thread=False`` and every method holds an internal lock. Use as a context manager
    or call :meth:`close`.

    ``clock`` returns the current time (timezone-aware); it defaults to UTC now and exists so
    tests can fix record times.

    Raises :class:`StoreError` if the file cannot be opened, WAL mode cannot be enabled, or the
    file's schema version is newer than this code knows.
    """

    def __init__(self, path: str | PathLike[str], *, clock: Callable[[], datetime] = _utc_now) -> None:
        self.path = Path(path)
        self._clock = clock
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        if self.path.is_dir():
            raise StoreError(f"store {self.path} is a folder; point store.path at a file in it, "
                             f"such as {self.path / 'edge.db'}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: no implicit transactions; every write below uses an explicit
            # BEGIN IMMEDIATE ... COMMIT so the transaction boundaries are exactly what we say.
            conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as e:
            raise StoreError(f"cannot open store {self.path}: {e}") from e
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
            self._migrate()
        except sqlite3.DatabaseError as e:  # e.g. "file is not a database"
            conn.close()
            self._conn = None
            raise StoreError(
                f"cannot open store {self.path}: {e}; fix: point store.path at an edge store "
                "file or at a new file name"
            ) from e
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

    def _migrate(self) -> None:
        conn = self._db()
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
                        conn.execute(stmt)
                except sqlite3.Error as e:
                    # raised inside the transaction: _Tx rolls back, the file keeps its version
                    raise StoreError(
                        f"store {self.path}: migration from schema version {target - 1} to {target} "
                        f"failed: {e}; nothing was changed (the file is still version {version}); "
                        "fix: back up the file and repair it with the sqlite3 shell, or use another "
                        "store file"
                    ) from e
                conn.execute(f"PRAGMA user_version = {int(target)}")

    # -- items -------------------------------------------------------------------------------

    def import_csv(self, path: str | PathLike[str]) -> int:
        """Insert or update items from an inventory CSV; return the number of rows imported.

        The CSV needs a header with the columns :data:`CSV_COLUMNS` (``aliases`` ``;``-separated,
        ``quantity`` a whole number >= 0 in ``unit``). Existing SKUs are overwritten; where the
        quantity changes, the difference is written as a stock-count record (turn id
        ``import:<time>``), which voice ``undo`` never reverts nor reaches past. All rows are
        imported in one transaction, or none.

        Raises :class:`StoreError` naming the file, line and column, and how to fix it, if the
        file cannot be read, a column is missing, a row has the wrong number of fields, a SKU is
        empty or repeated, or a quantity is not a non-negative integer.
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
                        conn.execute(
                            "INSERT INTO records (time, sku, delta, utterance, turn_id, undoes) VALUES (?, ?, ?, ?, ?, NULL)",
                            (self._clock().astimezone(timezone.utc).isoformat(timespec="milliseconds"), sku, quantity - int(old[0]),
                             f"stock count from {path.name}", count_turn))
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
            with path.open(newline="", encoding="utf-8-sig") as f:
                return Store._parse_csv(path, f)
        except OSError as e:
            raise StoreError(f"{path}: cannot read inventory CSV: {e.strerror or e}") from e
        except UnicodeDecodeError as e:
            raise StoreError(f"{path}: not UTF-8 text ({e}); fix: save the file as UTF-8 CSV") from e
        except csv.Error as e:
            raise StoreError(f"{path}: malformed CSV: {e}") from e

    @staticmethod
    def _parse_csv(path: Path, f: TextIO) -> list[tuple[str, str, str, int, str, str]]:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise StoreError(
                f"{path}: line 1: file is empty; fix: add the header row {','.join(CSV_COLUMNS)}"
            )
        names = [h.strip().lower() for h in header]
        for col in CSV_COLUMNS:
            if col not in names:
                raise StoreError(
                    f"{path}: line 1: missing column {col!r} (header is {','.join(header)!r}); "
                    f"fix: the header row must contain {','.join(CSV_COLUMNS)}"
                )
        index = {col: names.index(col) for col in CSV_COLUMNS}
        rows: list[tuple[str, str, str, int, str, str]] = []
        seen: dict[str, int] = {}
        for fields in reader:
            line = reader.line_num
            if not fields or all(not x.strip() for x in fields):
                continue  # blank line
            if len(fields) != len(header):
                raise StoreError(
                    f"{path}: line {line}: {len(fields)} fields but the header has {len(header)}; "
                    "fix: give every row one value per column (quote values containing commas)"
                )
            v = {col: fields[i].strip() for col, i in index.items()}
            if not v["sku"]:
                raise StoreError(f"{path}: line {line}, column 'sku': empty; fix: give the row a SKU")
            for col in ("item", "location", "unit"):
                if not v[col]:
                    raise StoreError(f"{path}: line {line}, column {col!r}: empty; fix: give {v['sku']} "
                                     f"{'a name' if col == 'item' else 'a ' + col} (e.g. "
                                     f"{ {'item': 'M8 bolt', 'location': 'bin 12', 'unit': 'pcs'}[col]!r})")
            if v["sku"] in seen:
                raise StoreError(
                    f"{path}: line {line}, column 'sku': {v['sku']!r} already appears on line "
                    f"{seen[v['sku']]}; fix: keep one row per SKU"
                )
            seen[v["sku"]] = line
            try:
                quantity = int(v["quantity"])
            except ValueError:
                quantity = None
            if quantity is None or quantity < 0:
                raise StoreError(
                    f"{path}: line {line}, column 'quantity': {v['quantity']!r} is not a "
                    "non-negative integer; fix: write a whole number such as 12"
                )
            aliases = ";".join(_split_aliases(v["aliases"]))
            rows.append((v["sku"], v["item"], v["location"], quantity, v["unit"], aliases))
        return rows

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
                    f"SELECT {_RECORD_COLS} FROM records WHERE turn_id = ? AND sku = ? AND undoes IS NULL",
                    (turn_id, sku),
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
        """Revert the most recent change that is not itself an undo and is not undone yet.

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
                    f"SELECT {_RECORD_COLS} FROM records WHERE turn_id = ? AND undoes IS NOT NULL", (turn_id,)
                ).fetchone()
                if row is not None:
                    done = _record(row)
                    return done, self._item_now(conn, done.sku)
                row = conn.execute(
                    "SELECT id, sku, delta FROM records AS r WHERE r.undoes IS NULL "
                    "AND NOT EXISTS (SELECT 1 FROM records AS u WHERE u.undoes = r.id) "
                    "AND r.id > COALESCE((SELECT MAX(id) FROM records WHERE turn_id LIKE ?), 0) "
                    "ORDER BY r.id DESC LIMIT 1", (IMPORT_TURN_PREFIX + "%",)
                ).fetchone()
                if row is None:
                    return None
                original_id, sku, delta = row
                return self._apply(conn, sku, -int(delta), utterance, turn_id, int(original_id))

    def _apply(
        self, conn: sqlite3.Connection, sku: str, delta: int, utterance: str, turn_id: str, undoes: int | None
    ) -> tuple[Record, Item]:
        now = self._clock().astimezone(timezone.utc).isoformat(timespec="milliseconds")
        cur = conn.execute(
            "INSERT INTO records (time, sku, delta, utterance, turn_id, undoes) VALUES (?, ?, ?, ?, ?, ?)",
            (now, sku, delta, utterance, turn_id, undoes),
        )
        rid = int(cur.lastrowid)
        conn.execute("UPDATE items SET quantity = quantity + ? WHERE sku = ?", (delta, sku))
        return Record(rid, now, sku, delta, utterance, turn_id, undoes), self._item_now(conn, sku)

    @staticmethod
    def _item_now(conn: sqlite3.Connection, sku: str) -> Item:
        return _item(conn.execute(f"SELECT {_ITEM_COLS} FROM items WHERE sku = ?", (sku,)).fetchone())

    def records(self) -> list[Record]:
        """The whole history, oldest first (by id)."""
        with self._lock:
            cur = self._db().execute(f"SELECT {_RECORD_COLS} FROM records ORDER BY id")
            return [_record(r) for r in cur.fetchall()]

    def export_csv(self, fileobj: TextIO) -> int:
        """Write the history as CSV (header :data:`EXPORT_COLUMNS`, ``undoes`` empty when None)
        to a text file object (open it with ``newline=""``). Returns the number of records."""
        records = self.records()
        writer = csv.writer(fileobj)
        writer.writerow(EXPORT_COLUMNS)
        for r in records:
            writer.writerow([r.id, r.time, r.sku, r.delta, r.utterance, r.turn_id, "" if r.undoes is None else r.undoes])
        return len(records)


class _Tx:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any exception).

    sqlite3 errors raised inside are re-raised as :class:`StoreError`.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise StoreError(f"cannot start a transaction: {e}") from e
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
            except sqlite3.Error as e:
                self._rollback()
                raise StoreError(f"commit failed: {e}") from e
            return False
        self._rollback()
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"database error: {exc}") from exc
        return False

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
