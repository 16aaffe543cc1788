"""Why an SQLite store could not be read or written, in words a user can act on, and
:class:`StoreError`, the error every store operation raises (imports only :mod:`edge.errors`).

:func:`diagnose` turns a ``sqlite3`` error into ``(reason, message)``. ``reason`` is one of
:data:`REASONS` (``disk full``, ``read-only``, ``I/O error``, ``corrupt``, ``locked``) or None; the
message names the file (the store, or the ``-wal``/``-shm`` file or folder at fault) and the fix.
SQLite reports a full disk sometimes as ``SQLITE_FULL``, sometimes as an I/O error while it grows
its shared-memory file, so the free space of the store's filesystem is looked at as well.
"""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from edge.errors import UserError

#: The reasons :func:`diagnose` gives, worded as the user hears them.
REASONS = ("disk full", "read-only", "I/O error", "corrupt", "locked")

#: Less free space than this (bytes) on the store's filesystem counts as a full disk: SQLite needs a
#: 32 KiB shared-memory file and one 4 KiB page per changed table or index in the WAL.
FULL_BELOW_BYTES = 64 * 1024

# primary result codes (https://sqlite.org/rescode.html)
_PERM, _BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 3, 5, 6, 8, 10, 11, 13, 14, 26


def free_bytes(folder: Path) -> int | None:
    """Bytes available to an unprivileged writer on the filesystem holding ``folder``; None if unknown."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def _owner(p: Path) -> str:
    st = p.stat()
    return f"owner uid {st.st_uid}, mode {st.st_mode & 0o777:04o}"


def _read_only_culprit(path: Path) -> str:
    """What keeps ``path`` read-only: the filesystem, a leftover -wal/-shm file, the file or its folder."""
    try:
        if os.statvfs(path.parent).f_flag & os.ST_RDONLY:
            return (f"the filesystem holding {path} is mounted read-only; fix: remount it read-write "
                    f"(mount -o remount,rw) or move store.path to a writable filesystem")
    except OSError:
        pass
    sides = [s for s in (Path(f"{path}-wal"), Path(f"{path}-shm")) if s.exists() and not os.access(s, os.W_OK)]
    if path.exists() and not os.access(path, os.W_OK):
        # the store file itself first: SQLite gives a new -wal/-shm the store's own mode, so a
        # read-only store has read-only side files too, and a chown of those would change nothing
        files = " ".join(map(str, [path, *sides]))
        also = f" (nor are {' and '.join(s.name for s in sides)}, made with its mode)" if sides else ""
        return (f"the store {path} ({_owner(path)}) is not writable by this user{also}; fix: chmod u+w {files} "
                f"when the service user owns {'them' if sides else 'it'}, else chown {'them' if sides else 'it'} "
                f"to the service user")
    if sides:
        store_uid = path.stat().st_uid if path.exists() else None
        if all(s.stat().st_uid == store_uid for s in sides):  # the store's owner: their mode is at fault
            fix = f"chmod u+w {' '.join(map(str, sides))}"
        else:
            fix = f"give them to the service user (chown --reference={path} {' '.join(map(str, sides))})"
        return (f"the leftover {' and '.join(f'{s} ({_owner(s)})' for s in sides)} "
                f"{'is' if len(sides) == 1 else 'are'} not writable by this user and keep the store read-only; "
                f"fix: stop every edge process and {fix}; do not delete a -wal file, it holds committed records")
    if not os.access(path.parent, os.W_OK):
        return (f"its folder {path.parent} ({_owner(path.parent)}) is not writable by this user, so SQLite "
                f"cannot create {path.name}-wal and {path.name}-shm; fix: chown the folder to the service user")
    return f"{path} cannot be written; fix: check the owner and mode of it, its -wal/-shm files and its folder"


def diagnose(error: sqlite3.Error, path: Path) -> tuple[str | None, str]:
    """``(reason, message)`` for ``error`` raised on the store at ``path``; see the module docstring."""
    code = getattr(error, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    name = getattr(error, "sqlite_errorname", None) or type(error).__name__
    what = f"{error} [{name}]"
    free = free_bytes(path.parent)
    if primary == _FULL or (primary in (_IOERR, _CANTOPEN) and free is not None and free < FULL_BELOW_BYTES):
        left = "" if free is None else f" ({free // 1024} KiB free)"
        return "disk full", (f"disk full: cannot write {path}{left}: {what}; fix: free space on that "
                             f"filesystem (df -h {path.parent}) or move store.path to a bigger one")
    if primary in (_READONLY, _PERM) or (primary == _CANTOPEN and path.exists()):
        return "read-only", f"read-only: {_read_only_culprit(path)} ({what})"
    if primary == _IOERR:
        return "I/O error", (f"I/O error on {path}: {what}; the card or disk may be failing; fix: look at "
                             f"'dmesg' for storage errors, copy the store to healthy storage and point "
                             f"store.path at the copy")
    if primary in (_CORRUPT, _NOTADB):
        return "corrupt", (f"{path} is corrupt: {what}; fix: stop the service, keep a copy of the file, "
                           f"recover what is readable with 'sqlite3 {path} .recover | sqlite3 {path}.recovered' "
                           f"and point store.path at the result (or restore the last backup)")
    if primary in (_BUSY, _LOCKED):
        return "locked", (f"{path} is locked by another process: {what}; fix: stop the other edge process "
                          f"using this store (one writer at a time)")
    return None, f"{path}: {what}"


class StoreError(UserError):
    """A store operation failed for a reason the caller can report (bad CSV, unknown SKU, a full disk).

    ``reason``: for a failed read or write, one of :data:`edge.stock.faults.REASONS`
    (``disk full``, ``read-only``, ``I/O error``, ``corrupt``, ``locked``); None otherwise.
    """

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


def sqlite_failure(error: sqlite3.Error, path: Path) -> StoreError:
    """The :class:`StoreError` for ``error`` raised on the store file ``path``: it says that nothing
    was saved, why (disk full, read-only, I/O error, corrupt) and the fix (see :mod:`edge.stock.faults`)."""
    reason, message = diagnose(error, path)
    return StoreError(f"store {path}: nothing was saved: {message}", reason)
