"""Which store file is which box: one box id (``site.box``) belongs to one store file.

Every store file gets a random install id (32 hex digits, in its ``meta`` table) the first time it
syncs; the site's ``edge_boxes`` table lists the install ids that have used each box id. Two
store files with one box id (a second box set up with the same ``site.box``) are told apart at
once: a second install id for a box id stops the sync of both boxes (:class:`BoxIdTaken`), which
the sync keeps as its state ``stopped`` for ``edge status``, the console, MQTT and the voice.

A cloned SD card copies the install id too; the copies are told apart as soon as both have
written: the site's record number ``n`` of the box is then not this store's record ``n``. The
store that finds this takes a new install id and registers it, so the other box stops as well,
and nothing is sent or marked sent from a store whose records the site does not hold as its own.

``edge site resync`` on the box that keeps the id (after the other box got its own) claims the id
for its store file again: the other install ids are forgotten, once its records are the site's.
"""
from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import psycopg

from edge.site.server import NOTIFY_CHANNEL, SiteError

if TYPE_CHECKING:
    from edge.stock.store import Store

__all__ = ["BoxIdTaken", "install_id", "register", "check_others", "diverged", "split_off", "adopt"]


class BoxIdTaken(SiteError):
    """Another store file uses the box id ``box``: the sync stops (not retried) until the operator
    fixes it. ``said``: the short form for a voice reply and MQTT ("site sync stopped: another box
    uses the id goods-in"); the message adds how it was found and the fix (``detail``)."""

    def __init__(self, box: str, detail: str) -> None:
        self.said = f"site sync stopped: another box uses the id {box}"
        super().__init__(f"{self.said}{detail}")


def _fix(box: str) -> str:
    return (f"fix: give each box its own site.box (a copied box also a new store file: move store.path aside "
            f"and import the inventory again), then run 'edge site resync' on the box that keeps {box!r}; "
            "if this box's store was lost and replaced, run 'edge site resync' here")


def install_id(store: Store, *, renew: bool = False) -> str:
    """The store file's install id, made (or with ``renew`` replaced) and kept in its ``meta`` table."""
    got = None if renew else store.meta("install")
    if not got:
        got = uuid.uuid4().hex
        store.set_meta(install=got)
    return got


def register(conn: psycopg.Connection, box: str, install: str) -> None:
    """Add ``(box, install)`` to ``edge_boxes`` if new; a new row wakes the other boxes (NOTIFY),
    so a box already using ``box`` finds the clash at once. :class:`SiteError` with the fix when the
    site's user may not use the table."""
    try:
        cur = conn.execute("INSERT INTO edge_boxes (box, install) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                           (box, install))
    except psycopg.errors.InsufficientPrivilege as e:
        user = conn.info.user
        raise SiteError(f"site.dsn: the user {user} may not use the table edge_boxes (which store file uses which "
                        f"box id, server schema 3); fix: on the site database run GRANT SELECT, INSERT, DELETE ON "
                        f"edge_boxes TO {user}") from e
    if cur.rowcount:
        conn.execute(f"NOTIFY {NOTIFY_CHANNEL}")


def check_others(conn: psycopg.Connection, box: str, install: str) -> None:
    """:class:`BoxIdTaken` when another install id has used ``box``."""
    row = conn.execute("SELECT install, first_seen FROM edge_boxes WHERE box = %s AND install <> %s "
                       "ORDER BY first_seen DESC LIMIT 1", (box, install)).fetchone()
    if row is not None:
        raise BoxIdTaken(box, f" (store file {row[0][:8]}…, first seen {row[1].isoformat(timespec='seconds')}; this "
                              f"store file is {install[:8]}…); nothing more is sent from this box; {_fix(box)}")


def diverged(conn: psycopg.Connection, store: Store, box: str, seq: int) -> BoxIdTaken | None:
    """The clash when the site's record ``seq`` of ``box`` is not this store's (a copy of the store
    wrote its own), else None. ``seq`` 0: nothing to compare."""
    if seq <= 0:
        return None
    row = conn.execute("SELECT gid FROM edge_movements WHERE box = %s AND seq = %s", (box, seq)).fetchone()
    mine = store.movements(box, after_seq=seq - 1, limit=1)
    if row is None or (mine and mine[0].gid == row[0]):
        return None
    waiting = store.unpushed()
    return BoxIdTaken(box, f": the site's record number {seq} of {box} is not this store's (a copy of this box's "
                           f"store, e.g. a cloned SD card, wrote its own); {waiting} record{'' if waiting == 1 else 's'} "
                           f"of this box {'is' if waiting == 1 else 'are'} not on the site and nothing more is sent; "
                           f"{_fix(box)}")


def split_off(conn: psycopg.Connection, store: Store, box: str) -> None:
    """This store file is a copy of another box's: give it its own install id and register it, so
    both boxes stop (autocommit, outside any push transaction)."""
    register(conn, box, install_id(store, renew=True))


def adopt(conn: psycopg.Connection, box: str, install: str) -> None:
    """Claim ``box`` for ``install`` alone (``edge site resync``, after its records were found to be
    the site's): forget the other install ids of ``box``."""
    with conn.transaction():
        conn.execute("DELETE FROM edge_boxes WHERE box = %s AND install <> %s", (box, install))
        register(conn, box, install)
