"""Transactions and a lock for one SQLite connection (a leaf of the store).

:class:`Tx` is ``BEGIN IMMEDIATE`` … ``COMMIT`` with a rollback on any exception; :class:`Guard`
is a re-entrant lock that also turns any ``sqlite3`` error leaving it into the caller's error type.
"""
from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Callable

__all__ = ["Tx", "Guard"]


class Guard:
    """The store's lock (re-entrant: one thread at a time) that also turns any ``sqlite3`` error
    leaving it into ``convert(error, path)`` (the store's StoreError), so no caller sees a ``sqlite3`` traceback."""

    def __init__(self, path: Path, convert: Callable[[sqlite3.Error, Path], Exception]) -> None:
        self.path = path
        self._convert = convert
        self._lock = threading.RLock()

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, exc_type, exc, tb) -> None:
        self._lock.release()
        if isinstance(exc, sqlite3.Error):
            raise self._convert(exc, self.path) from exc


class Tx:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any exception, a failed COMMIT included).

    sqlite3 errors go on as they are: the store's lock (:class:`Guard`) turns them into the
    caller's error naming the file and the reason.
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
