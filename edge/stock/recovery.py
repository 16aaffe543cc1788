"""A damaged store file at start: kept aside, rebuilt from what can be read plus the last good backup.

:func:`recover_if_corrupt` runs before the store is opened by the voice service (``edge run``):

- a store whose ``PRAGMA integrity_check`` is ``ok`` is copied to ``<store>.backup`` (SQLite's online
  backup into a temporary file, fsynced, renamed into place), so the backup is the state of the last
  good start;
- a store that is corrupt (SQLite says ``SQLITE_CORRUPT`` / ``SQLITE_NOTADB``, or the check lists
  problems) is renamed to ``<store>.corrupt-<UTC time>`` (with its ``-wal``/``-shm``; never deleted),
  and a new file is built: the backup if it passes the check (else the current schema, empty), then
  every row that can still be read from the damaged file is added (append-only ``records`` by id, a
  row already there wins; other tables by key, the damaged file's newer row wins). An item whose row
  could not be read keeps the backup's quantity plus the deltas of the records added to it; an item
  whose last known quantity differs from backup + the records kept (records lost with the damage)
  gets one adjustment record (turn id ``recovery:<time>``), so ``quantity = first count + sum of
  records`` still holds. (A box on a site should run ``edge site resync`` after a rebuild: it
  restores the box's records the site holds.) The result replaces the store, and
  ``<store>.recovery.json`` (:func:`report_path`) says what happened; ``edge doctor`` and
  ``edge status`` show it.

Errors other than corruption (a locked, read-only or full store) are left to the store's own open,
which names them. A rebuild that cannot be written raises :class:`edge.errors.UserError` (exit 2,
which the unit's ``RestartPreventExitStatus`` lists: no restart storm).
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from edge.errors import UserError
from edge.stock import summary
from edge.stock.order import next_gid
from edge.stock.schema import MIGRATIONS, SCHEMA_VERSION

__all__ = ["recover_if_corrupt", "backup", "damage", "backup_path", "report_path", "read_report"]

log = logging.getLogger("edge.store")

#: Turn ids of the records a rebuild writes where records were lost (so the history sums to the stock).
RECOVERY_TURN_PREFIX = "recovery:"
#: Tables whose rows are never replaced by a rebuild (history).
APPEND_ONLY = frozenset({"records"})
#: Rowids looked up one by one past a damaged page before the rest of a table is given up.
MAX_PROBES = 100_000

_CORRUPT_CODES = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB


def backup_path(db: Path) -> Path:
    """``<store>.backup``: the store as it was at the last start that found it intact."""
    return db.with_name(db.name + ".backup")


def report_path(db: Path) -> Path:
    """``<store>.recovery.json``: what the last rebuild did (absent if there never was one)."""
    return db.with_name(db.name + ".recovery.json")


def read_report(db: str | os.PathLike[str]) -> dict | None:
    """The last rebuild's report for the store ``db`` (see the module docstring), or None."""
    try:
        return json.loads(report_path(Path(db)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def damage(db: Path) -> str | None:
    """What is wrong with the SQLite file ``db`` (its integrity check or SQLite's error), or None when
    it is intact, absent, empty, or cannot be checked for a reason other than corruption."""
    if not db.is_file() or db.stat().st_size == 0:
        return None
    try:
        conn = sqlite3.connect(str(db), isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        rows = [r[0] for r in conn.execute("PRAGMA integrity_check(20)")]
    except sqlite3.DatabaseError as e:
        code = getattr(e, "sqlite_errorcode", None)
        return f"{e} [{getattr(e, 'sqlite_errorname', '')}]" if code is not None and code & 0xFF in _CORRUPT_CODES else None
    finally:
        conn.close()
    return None if rows == ["ok"] else "; ".join(rows[:5])


def backup(db: Path) -> Path | None:
    """Copy the intact store ``db`` to :func:`backup_path` atomically; None when it could not be written
    (a full disk): a start never fails for its backup."""
    target, tmp = backup_path(db), db.with_name(db.name + ".backup.tmp")
    try:
        src = sqlite3.connect(str(db))
        try:
            dst = sqlite3.connect(str(tmp))
            try:
                src.backup(dst)
                dst.execute("PRAGMA journal_mode=DELETE")
            finally:
                dst.close()
        finally:
            src.close()
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
        return target
    except (OSError, sqlite3.Error) as e:
        log.warning("store %s: backup not written: %s", db, e)
        try:
            tmp.unlink(missing_ok=True)
        except OSError:  # a read-only folder: the store's own open names it
            pass
        return None


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]


def _tables(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]


def _top_rowid(conn: sqlite3.Connection, table: str) -> int | None:
    try:
        row = conn.execute(f'SELECT max(rowid) FROM "{table}"').fetchone()
    except sqlite3.DatabaseError:
        return None
    return None if row is None or row[0] is None else int(row[0])


def _readable_rows(conn: sqlite3.Connection, table: str, cols: list[str]) -> tuple[list[tuple], int]:
    """Every row of ``table`` that can be read, in rowid order, and how many lookups hit damage.

    A range scan stops at a damaged page; from there each rowid is looked up alone (a point lookup
    descends from the root, so it reaches the intact pages after the damaged one) until one reads,
    then the scan goes on."""
    names = ", ".join(f'"{c}"' for c in cols)
    scan = f'SELECT rowid, {names} FROM "{table}" WHERE rowid > ? ORDER BY rowid'
    one = f'SELECT rowid, {names} FROM "{table}" WHERE rowid = ?'
    top = _top_rowid(conn, table)
    rows: list[tuple] = []
    last, hits = 0, 0
    while True:
        try:
            for row in conn.execute(scan, (last,)):
                rows.append(row[1:])
                last = row[0]
            return rows, hits
        except sqlite3.DatabaseError:
            hits += 1
        for _ in range(MAX_PROBES):
            last += 1
            if top is not None and last > top:
                return rows, hits
            try:
                row = conn.execute(one, (last,)).fetchone()
            except sqlite3.DatabaseError:
                hits += 1
                continue
            if row is not None:
                rows.append(row[1:])
                break
        else:
            return rows, hits


def _salvage(aside: Path) -> tuple[dict[str, tuple[list[str], list[tuple]]], int]:
    """Readable rows per table of the damaged file (opened read-only: the kept copy is not changed)."""
    found: dict[str, tuple[list[str], list[tuple]]] = {}
    hits = 0
    for uri in (f"file:{aside}?mode=ro", f"file:{aside}?immutable=1"):
        try:
            conn = sqlite3.connect(uri, uri=True)
        except sqlite3.Error:
            continue
        try:
            for table in _tables(conn):
                cols = _columns(conn, table)
                rows, h = _readable_rows(conn, table, cols)
                found[table], hits = (cols, rows), hits + h
            return found, hits
        except sqlite3.DatabaseError:  # the schema itself cannot be read
            continue
        finally:
            conn.close()
    return found, hits


def _fresh(conn: sqlite3.Connection, box: str) -> None:
    """The current schema on the empty file of ``conn`` (the store's own migration steps)."""
    conn.execute("BEGIN")
    for steps in MIGRATIONS:
        for stmt in steps:
            stmt(conn, box) if callable(stmt) else conn.execute(stmt)
    conn.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}")
    conn.execute("COMMIT")


def _merge(conn: sqlite3.Connection, found: dict[str, tuple[list[str], list[tuple]]],
           expected: dict[str, int] | None) -> dict[str, int]:
    """Add the salvaged rows to the new file; returns rows added per table. ``expected``: the
    backup's quantities (None without a backup), to which the added records' deltas are added."""
    added: dict[str, int] = {}
    new_deltas: dict[str, int] = {}
    salvaged_skus: set[str] = set()
    conn.execute("BEGIN")
    for table in _tables(conn):
        if table not in found or table in summary.DERIVED:  # recomputed from the records below
            continue
        cols, rows = found[table]
        common = [c for c in cols if c in set(_columns(conn, table))]
        idx = [cols.index(c) for c in common]
        verb = "INSERT OR IGNORE" if table in APPEND_ONLY else "INSERT OR REPLACE"
        sql = f'{verb} INTO "{table}" ({", ".join(common)}) VALUES ({", ".join("?" * len(common))})'
        n = 0
        for row in rows:
            values = [row[i] for i in idx]
            try:
                cur = conn.execute(sql, values)
            except sqlite3.Error:  # a row the damage garbled (wrong type, broken constraint)
                continue
            n += cur.rowcount > 0
            if cur.rowcount > 0 and table == "records" and "sku" in common and "delta" in common:
                sku, delta = values[common.index("sku")], values[common.index("delta")]
                new_deltas[sku] = new_deltas.get(sku, 0) + int(delta)
            if table == "items" and "sku" in common:
                salvaged_skus.add(values[common.index("sku")])
        added[table] = n
    for sku, delta in new_deltas.items():  # an item row lost with the damage: backup + what was added
        if sku not in salvaged_skus:
            conn.execute("UPDATE items SET quantity = quantity + ? WHERE sku = ?", (delta, sku))
    if expected is not None:
        added["adjustments"] = _adjust(conn, {k: v + new_deltas.get(k, 0) for k, v in expected.items()})
    summary.rebuild(conn)
    conn.execute("COMMIT")
    return added


def _adjust(conn: sqlite3.Connection, expected: dict[str, int]) -> int:
    """One record per item whose last known quantity differs from backup + the records kept (records
    lost with the damage), so the history still sums to the stock; returns how many were written."""
    have = {c for c in _columns(conn, "records")}
    if not {"box", "gid", "seq", "time", "sku", "delta", "utterance", "turn_id"} <= have:
        return 0
    box = (conn.execute("SELECT value FROM meta WHERE key = 'box'").fetchone() or ("local",))[0]
    at = datetime.now(timezone.utc)
    n = 0
    for sku, qty in conn.execute("SELECT sku, quantity FROM items ORDER BY sku").fetchall():
        gap = int(qty) - expected.get(sku, int(qty))
        if gap == 0:
            continue
        seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM records WHERE box = ?", (box,)).fetchone()[0]
        conn.execute("INSERT INTO records (time, sku, delta, utterance, turn_id, undoes, box, gid, seq) "
                     "VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)",
                     (at.isoformat(timespec="milliseconds"), sku, gap,
                      "store rebuilt after corruption: records lost with the damaged pages",
                      f"{RECOVERY_TURN_PREFIX}{at:%Y%m%dT%H%M%SZ}", box, next_gid(conn, at), int(seq)))
        n += 1
    return n


def _move_aside(db: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    aside = db.with_name(f"{db.name}.corrupt-{stamp}")
    os.replace(db, aside)
    for side in ("-wal", "-shm"):  # the WAL may hold committed records: it goes with its file
        if Path(f"{db}{side}").exists():
            os.replace(f"{db}{side}", f"{aside}{side}")
    return aside


def _rebuild(db: Path, what: str) -> dict:
    aside = _move_aside(db)
    found, hits = _salvage(aside)
    tmp = db.with_name(db.name + ".rebuilding")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm"), Path(f"{tmp}-journal")):
        p.unlink(missing_ok=True)
    good = backup_path(db) if backup_path(db).is_file() and damage(backup_path(db)) is None else None
    if good is not None:
        shutil.copyfile(good, tmp)
    conn = sqlite3.connect(str(tmp), isolation_level=None)
    try:
        if good is None:
            meta = dict((r[0], r[1]) for r in found.get("meta", ([], []))[1] if len(r) >= 2)
            _fresh(conn, str(meta.get("box", "local")))
        before = conn.execute("SELECT count(*) FROM records").fetchone()[0]
        expected = dict(conn.execute("SELECT sku, quantity FROM items")) if good is not None else None
        added = _merge(conn, found, expected)
        after = conn.execute("SELECT count(*) FROM records").fetchone()[0]
        if [r[0] for r in conn.execute("PRAGMA integrity_check")] != ["ok"]:
            raise sqlite3.DatabaseError("the rebuilt file fails its integrity check")
    finally:
        conn.close()
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, db)
    return {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"), "store": str(db),
            "damage": what, "moved_to": str(aside), "backup": None if good is None else str(good),
            "records_from_backup": int(before), "records_read_from_damaged": int(added.get("records", 0)),
            "records": int(after), "adjustments": int(added.get("adjustments", 0)), "rows_read": {t: len(r) for t, (_, r) in found.items()},
            "damaged_lookups": hits}


def recover_if_corrupt(db: str | os.PathLike[str]) -> dict | None:
    """Back up an intact store, or rebuild a corrupt one (see the module docstring).

    Returns the rebuild's report (also written to :func:`report_path`), or None when the file was
    intact. Raises :class:`edge.errors.UserError` naming the file when a rebuild cannot be written.
    """
    db = Path(db)
    what = damage(db)
    if what is None:
        if db.is_file() and db.stat().st_size > 0:
            backup(db)
        return None
    log.warning("store %s is corrupt (%s): moving it aside and rebuilding it", db, what)
    try:
        report = _rebuild(db, what)
        tmp = report_path(db).with_suffix(".tmp")
        tmp.write_text(json.dumps(report, indent=1), encoding="utf-8")
        os.replace(tmp, report_path(db))
    except (OSError, sqlite3.Error) as e:
        raise UserError(f"store {db} is corrupt ({what}) and could not be rebuilt: {e}; fix: free space "
                        f"next to it, keep the {db.name}.corrupt-* file, and start again (or restore "
                        f"{backup_path(db)} by hand)") from e
    backup(db)
    log.warning("store %s rebuilt: %d records (%d from the backup %s, %d read from the damaged file); "
                "the damaged file is kept as %s", db, report["records"], report["records_from_backup"],
                report["backup"], report["records_read_from_damaged"], report["moved_to"])
    return report
