"""Site sync: push this box's records to the site database, pull the other boxes' into the store.

Offline first: the store is the box's truth for its own records and its outbox for the site. A
push sends this box's records after the highest ``seq`` the server holds for the box, in ``seq``
order, in transactions of ``site.batch`` records, with ``INSERT ... ON CONFLICT (gid) DO NOTHING``:
a push cut off anywhere (server killed, box killed, network gone) is simply repeated. A pull asks
for every other box's records after the highest ``seq`` the store holds for that box and adds them
with :meth:`edge.stock.store.Store.apply` (one SQLite transaction per batch, each place it
touches settled once, idempotent on ``gid``). Neither side keeps a cursor that could disagree with the data: both are ``MAX(seq)``.

:meth:`SiteSync.run` is the long-running loop (``edge site sync``): it listens on the server's
``NOTIFY`` channel, so a record pushed by one box is pulled by the others at once; it looks for
new local records every ``site.poll_ms`` ms. While the server cannot be reached it retries with a
doubling delay and writes the state into the store's ``meta`` table, which ``edge status`` reads
("site offline since 10:42, 12 records waiting").
"""
from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable, Protocol

import psycopg

from edge.site import identity
from edge.site.identity import BoxIdTaken
from edge.site.server import NOTIFY_CHANNEL, SiteError, SiteOffline, connect, require_schema
from edge.stock.places import clean, clean_or_none
from edge.stock.pulled import IMPORT_FIX
from edge.stock.store import Movement, StoreError

if TYPE_CHECKING:
    from edge.config import SiteSettings
    from edge.stock.store import Store

__all__ = ["SiteSync", "SyncListener", "PullHeldBack", "BoxIdTaken", "waiting", "kept_note"]

#: The columns of a movement, in :class:`edge.stock.store.Movement` order.
_COLS = "gid, box, seq, time, sku, delta, utterance, turn_id, undoes, location, kind, counted, op"
# One statement per batch (one array per column, sent in binary: no text escaping): one round trip
# and one NOTIFY trigger run, not one of each per record.
_INSERT = (f"INSERT INTO edge_movements ({_COLS}) SELECT * FROM unnest(%b::text[], %b::text[], %b::bigint[], "
           "%b::text[], %b::text[], %b::float8[], %b::text[], %b::text[], %b::text[], %b::text[], %b::text[], "
           "%b::float8[], %b::text[]) ON CONFLICT (gid) DO NOTHING")
# Every box on the server by a skip-scan of the (box, seq) index, then each box's records after the
# store's cursor from that index: the cost is per box and per record sent, not per record held (a
# join over the whole table read all of it: 133 ms at 300,000 rows).
_PULL = ("WITH RECURSIVE boxes(box) AS (SELECT MIN(box) FROM edge_movements UNION ALL "
         "SELECT (SELECT MIN(e.box) FROM edge_movements AS e WHERE e.box > boxes.box) FROM boxes "
         "WHERE boxes.box IS NOT NULL) "
         "SELECT m.gid, m.box, m.seq, m.time, m.sku, m.delta, m.utterance, m.turn_id, m.undoes, m.location, "
         "m.kind, m.counted, m.op "
         "FROM boxes LEFT JOIN unnest(%(boxes)s::text[], %(seqs)s::bigint[]) AS c(box, seq) ON c.box = boxes.box "
         "CROSS JOIN LATERAL (SELECT * FROM edge_movements AS e WHERE e.box = boxes.box "
         "AND e.seq > COALESCE(c.seq, 0) ORDER BY e.seq LIMIT %(limit)s) AS m "
         "WHERE boxes.box IS NOT NULL AND boxes.box <> %(me)s AND boxes.box <> ALL(%(blocked)s::text[]) "
         "ORDER BY m.box, m.seq LIMIT %(limit)s")


class PullHeldBack(SiteError):
    """Some box's records could not be added (e.g. an undo of a record the store lacks, two boxes
    sharing a box id); every other box's records were. ``pulled``: the records that were added."""

    def __init__(self, message: str, pulled: list[Movement]) -> None:
        super().__init__(message)
        self.pulled = pulled


class SyncListener(Protocol):
    """Told after every successful round (e.g. :class:`edge.site.mqtt.MqttEvents`)."""

    def movements(self, pushed: list[Movement], pulled: list[Movement]) -> None:
        """``pushed``: this box's records the site now holds; ``pulled``: other boxes' records added."""

    def stopped(self, error: SiteError) -> None:
        """The sync stopped for good (another box uses this box id: :class:`BoxIdTaken`)."""


_OWN = (f"SELECT {_COLS} FROM edge_movements "
        "WHERE box = %s AND seq > %s ORDER BY seq LIMIT %s")


def _moved(row: tuple) -> Movement:
    """A server row as a :class:`Movement` (the server's double precision back to the store's numbers)."""
    gid, box, seq, time_, sku, delta, utterance, turn_id, undoes, location, kind, counted, op = row
    return Movement(gid, box, seq, time_, sku, clean(delta), utterance, turn_id, undoes, location, kind,
                    clean_or_none(counted), op)


def _columns(moves: list[Movement]) -> list[list]:
    """``moves`` as one list per column of :data:`_COLS` (numbers as floats: the server's double precision)."""
    return [[m.gid for m in moves], [m.box for m in moves], [m.seq for m in moves], [m.time for m in moves],
            [m.sku for m in moves], [float(m.delta) for m in moves], [m.utterance for m in moves],
            [m.turn_id for m in moves], [m.undoes for m in moves], [m.location for m in moves],
            [m.kind for m in moves], [None if m.counted is None else float(m.counted) for m in moves],
            [m.op for m in moves]]


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def kept_note(k: dict) -> str:
    """The line for one entry of :meth:`edge.stock.store.Store.kept_aside`: what is kept, why, the fix."""
    n = k["records"]
    return (f"  {n} record{'' if n == 1 else 's'} of box {k['box']} for SKU {k['sku']!r} kept aside: this box "
            f"does not know the item, so its stock here leaves them out; {IMPORT_FIX}")


def waiting(store: Store) -> int:
    """How many of this box's records the site has not acknowledged yet (a count of records)."""
    return store.unpushed()


def _contiguous(moves: list[Movement], held: dict[str, int]) -> list[Movement]:
    """The movements that follow on what the store holds, per box without a gap (a gap can only be
    a transaction not yet visible; the next pull fetches the rest)."""
    nxt = dict(held)
    out = []
    for m in moves:
        if m.seq == nxt.get(m.box, 0) + 1:
            out.append(m)
            nxt[m.box] = m.seq
    return out


class SiteSync:
    """Sync of one box's ``store`` with the site database described by ``site``.

    ``clock`` gives the time written into the sync state (timezone-aware; tests may fix it).
    ``listener`` is told what each round moved (MQTT events). Not thread-safe: one thread runs
    :meth:`sync_once` or :meth:`run`.

    Raises :class:`SiteError` if the store's box id is not ``site.box`` (open the store with
    ``Store(path, box=site.box)``).
    """

    def __init__(self, store: Store, site: SiteSettings, *, clock: Callable[[], datetime] = _utc_now,
                 listener: SyncListener | None = None) -> None:
        if store.box != site.box:
            raise SiteError(f"site.box is {site.box!r} but the store {store.path} belongs to box {store.box!r}; "
                            f"fix: open the store with box={site.box!r}")
        self.store = store
        self.site = site
        self._clock = clock
        self.listener = listener
        self._noted = float("-inf")  # monotonic s of the last site_last_sync write
        self._conn: psycopg.Connection | None = None
        self.news: list[str] = []  # lines to tell once (records kept aside), drained by run()
        self._kept_told: set[tuple[str, str]] = set()
        self._adopting = False  # edge site resync: the box id is claimed once the records are found the site's

    # -- connection and state -----------------------------------------------------------------

    def close(self) -> None:
        """Close the database connection (the next sync reconnects). Idempotent."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            conn = connect(self.site)
            timer = self._watch(conn)
            try:
                require_schema(conn)
                if not self._adopting:  # at sync start: a box id another store file uses stops here
                    install = identity.install_id(self.store)
                    identity.register(conn, self.store.box, install)
                    identity.check_others(conn, self.store.box, install)
                conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
            except psycopg.OperationalError as e:
                conn.close()
                raise SiteOffline(f"site.dsn: the site database stopped answering ({' '.join(str(e).split())})") from e
            except BaseException:
                conn.close()
                raise
            finally:
                timer.cancel()
            self._conn = conn
        return self._conn

    def _now(self) -> str:
        return self._clock().astimezone(timezone.utc).isoformat(timespec="seconds")

    def _mark_online(self, moved: int) -> None:
        # last_sync is written on a state change and then at most every 5 s: each write is an fsync
        if self.store.meta("site_state") != "online" or (moved and time.monotonic() - self._noted >= 5.0):
            self.store.set_meta(site_state="online", site_last_sync=self._now(), site_error="")
            self._noted = time.monotonic()

    def _note_failure(self, e: SiteError) -> None:
        try:
            self._mark_offline("offline" if isinstance(e, SiteOffline) else "error", " ".join(str(e).split()))
        except (StoreError, sqlite3.Error):
            pass  # the store is busy: the state is written on the next failure or success

    def _mark_offline(self, state: str, error: str) -> None:
        if self.store.meta("site_state") == state and self.store.meta("site_error") == error:
            return
        since = self.store.meta("site_offline_since") if self.store.meta("site_state") in ("offline", "error") else None
        self.store.set_meta(site_state=state, site_offline_since=since or self._now(), site_error=error)

    @contextlib.contextmanager
    def _deadline(self) -> Iterator[psycopg.Connection]:
        """The connection, cut if the block takes longer than ``site.io_timeout_s`` s.

        A stalled network (packets dropped, a proxy that stops forwarding) leaves a query waiting
        forever: TCP keepalives are answered by whatever holds the socket. Shutting the socket
        down from a timer wakes the waiting call with an OperationalError (= offline)."""
        conn = self._connection()
        timer = self._watch(conn)
        try:
            yield conn
        finally:
            timer.cancel()

    def _watch(self, conn: psycopg.Connection) -> threading.Timer:
        fd = conn.pgconn.socket

        def cut() -> None:
            with contextlib.suppress(OSError):
                s = socket.socket(fileno=os.dup(fd))
                s.shutdown(socket.SHUT_RDWR)
                s.close()

        timer = threading.Timer(self.site.io_timeout_s, cut)
        timer.daemon = True
        timer.start()
        return timer

    # -- one round ----------------------------------------------------------------------------

    def push(self) -> list[Movement]:
        """Send this box's records the server lacks, in ``seq`` order; returns those sent.

        Raises :class:`SiteOffline` when the connection fails, :class:`BoxIdTaken` when another
        store file uses this box id (nothing is sent or marked sent then), :class:`SiteError` when
        the server holds more records of this box than the store (a lost store: resync).
        """
        box, sent = self.store.box, []
        mine = self.store.cursors().get(box, 0)
        while True:
            with self._deadline() as conn, conn.transaction():
                # one pusher per box at a time, so the box's rows on the server are always 1..n
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"edge-box:{box}",))
                identity.check_others(conn, box, identity.install_id(self.store))  # registered at sync start
                done = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM edge_movements WHERE box = %s",
                                    (box,)).fetchone()[0]
                clash = identity.diverged(conn, self.store, box, min(done, mine))
                if clash is None and done > mine:
                    raise SiteError(f"the site holds records up to number {done} of box {box!r}, this store only "
                                    f"up to {mine}; fix: if this box's store was lost or replaced, run 'edge site "
                                    f"resync' to restore its records from the site; if two boxes use site.box "
                                    f"{box!r}, give each its own")
                moves = [] if clash else self.store.movements(box, after_seq=done, limit=self.site.batch)
                if moves:
                    conn.execute(_INSERT, _columns(moves))
            if clash is not None:  # the site's records of this box are another store's: that box stops too
                with self._deadline() as conn:
                    identity.split_off(conn, self.store, box)
                raise clash
            acked = moves[-1].seq if moves else done
            if acked != int(self.store.meta("pushed_seq", "0") or 0):
                self.store.set_meta(pushed_seq=str(acked))
            sent += moves
            if len(moves) < self.site.batch:
                return sent

    def pull(self) -> list[Movement]:
        """Add the other boxes' records the store lacks, per box in ``seq`` order; returns those added.

        Each batch of ``site.batch`` records is one store transaction; if the store refuses a record,
        the batch is applied box by box, so that box's records wait and the others' do not. A
        record for an SKU this box does not know is kept aside, not refused
        (:meth:`edge.stock.store.Store.kept_aside`).

        Raises :class:`SiteOffline` when the connection fails, :class:`PullHeldBack` (after adding
        everything else) when a box's records cannot be added: the message names the record and
        the fix.
        """
        got: list[Movement] = []
        blocked: dict[str, str] = {}
        while True:
            held = self.store.cursors()
            boxes = sorted(held)
            with self._deadline() as conn:
                rows = conn.execute(_PULL, {"boxes": boxes, "seqs": [held[b] for b in boxes], "me": self.store.box,
                                            "blocked": sorted(blocked), "limit": self.site.batch}).fetchall()
            moves = _contiguous([_moved(r) for r in rows], held)
            got += self._apply(moves, blocked)
            if len(rows) < self.site.batch or not moves:
                break
        if blocked:
            raise PullHeldBack("pull from the site held back: " + "; ".join(
                f"box {b}: {e}" for b, e in blocked.items()), got)
        return got

    def _apply(self, moves: list[Movement], blocked: dict[str, str]) -> list[Movement]:
        """Add ``moves`` in one store transaction (each place settled once); if the store refuses
        one, again box by box, so only the refused box's records wait (named in ``blocked``)."""
        try:
            self.store.apply(moves)
            return moves
        except StoreError:
            pass
        got = []
        for box in sorted({m.box for m in moves}):
            mine = [m for m in moves if m.box == box]
            try:
                self.store.apply(mine)
                got += mine
            except StoreError as e:
                blocked[box] = str(e)
        return got

    def resync(self) -> dict:
        """Rebuild this box's view from the site: restore this box's own records the store lacks
        (a lost or replaced store), push what only the store holds, pull everything else, then
        compare both histories.

        Returns ``{"restored", "pushed", "pulled"}`` (counts of records) and ``"site_lacks"``
        (records here that the site does not hold: their boxes push them again, e.g. after the
        site database was restored from an older backup). Raises :class:`SiteOffline` when the
        site is unreachable and :class:`SiteError` when this store's own records are not the
        site's (nothing is changed then).
        """
        box = self.store.box
        try:
            self._adopting = True
            try:
                restored = self._restore_own(box)  # raises unless this store's records are the site's
                with self._deadline() as conn:
                    identity.adopt(conn, box, identity.install_id(self.store))
            finally:
                self._adopting = False
            self.close()  # the next connection checks the box id as every sync start does
            pushed, pulled = self.sync_once()
            with self._deadline() as conn:
                on_site = {r[0] for r in conn.execute("SELECT gid FROM edge_movements")}
        except psycopg.OperationalError as e:
            self.close()
            raise SiteOffline(f"site.dsn: lost the site database during resync ({' '.join(str(e).split())}); "
                              "run it again when the site is back") from e
        lacks = sum(1 for m in self.store.movements() if m.gid not in on_site)
        return {"restored": restored, "pushed": pushed, "pulled": pulled, "site_lacks": lacks}

    def _restore_own(self, box: str) -> int:
        held = [m.gid for m in self.store.movements(box)]
        with self._deadline() as conn:
            site = [r[0] for r in conn.execute("SELECT gid FROM edge_movements WHERE box = %s AND seq <= %s "
                                               "ORDER BY seq", (box, len(held)))]
        if site != held[:len(site)]:
            raise SiteError(f"this store's records of box {box!r} are not the site's (it was replaced and used "
                            "before a resync); nothing was changed; fix: move the store file (store.path) aside, "
                            "import the inventory CSV into a new one, run 'edge site resync', then log again "
                            "what was logged here since")
        restored = 0
        while True:  # the site's records of this box after the store's, in batches
            mine = self.store.cursors().get(box, 0)
            with self._deadline() as conn:
                rows = conn.execute(_OWN, (box, mine, self.site.batch)).fetchall()
            try:
                self.store.apply([_moved(r) for r in rows], restore=True)
            except StoreError as e:
                raise SiteError(f"resync stopped: {e}") from e
            restored += len(rows)
            if rows:
                self.store.set_meta(pushed_seq=str(rows[-1][2]))
            if len(rows) < self.site.batch:
                return restored

    def sync_once(self, *, pull_first: bool = False) -> tuple[int, int]:
        """Push, then pull (``pull_first``: pull, then push, as after a NOTIFY: the records another
        box just pushed are not kept waiting behind this box's push); returns (records sent,
        records received) and records the state.

        Raises :class:`SiteOffline` (state "offline") when the server cannot be reached,
        :class:`PullHeldBack` (state "error") when some box's records could not be added (all
        others were), and :class:`SiteError` (state "error") when the server refuses the data; the
        store is unchanged by a failed round except for what earlier committed batches added.
        """
        sent: list[Movement] = []
        try:
            if pull_first:
                try:
                    got = self.pull()
                except PullHeldBack:  # the rest was pulled: push still, then report it
                    sent = self.push()
                    raise
                sent = self.push()
            else:
                sent = self.push()
                got = self.pull()
        except PullHeldBack as e:
            self._mark_offline("error", " ".join(str(e).split()))
            if self.listener is not None and (sent or e.pulled):
                self.listener.movements(sent, e.pulled)
            raise
        except BoxIdTaken as e:
            self.stopped(e)
            raise
        except psycopg.OperationalError as e:
            self.close()
            err = SiteOffline(f"site.dsn: lost the site database ({' '.join(str(e).split())}); "
                              "the box keeps working offline and catches up on reconnect")
            self._mark_offline("offline", str(err))
            raise err from e
        except SiteOffline as e:
            self.close()
            self._mark_offline("offline", str(e))
            raise
        except (SiteError, psycopg.Error) as e:
            self.close()
            self._mark_offline("error", " ".join(str(e).split()))
            raise e if isinstance(e, SiteError) else SiteError(f"site sync failed: {e}") from e
        self._mark_online(len(sent) + len(got))
        if got:
            self._tell_kept()
        if self.listener is not None and (sent or got):
            self.listener.movements(sent, got)
        return len(sent), len(got)

    def stopped(self, e: BoxIdTaken) -> None:
        """Keep the state ``stopped`` (with why) for ``edge status``, the console and the voice, and
        tell the listener (MQTT), once per reason."""
        self.close()
        if self.store.meta("site_state") == "stopped" and self.store.meta("site_error") == str(e):
            return
        self.store.set_meta(site_state="stopped", site_offline_since=self._now(), site_error=str(e), site_stopped=e.said)
        if self.listener is not None and hasattr(self.listener, "stopped"):
            self.listener.stopped(e)

    def _tell_kept(self) -> None:
        """Queue in :attr:`news` a line for each SKU and box newly kept aside (told once)."""
        now = {(k["sku"], k["box"]): k for k in self.store.kept_aside()}
        self.news += [kept_note(now[key]).strip() for key in sorted(now.keys() - self._kept_told)]
        self._kept_told = set(now)

    # -- the loop -----------------------------------------------------------------------------

    def _woken(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` s for a NOTIFY from the server; True if one came."""
        conn = self._connection()
        try:
            return any(True for _ in conn.notifies(timeout=timeout_s, stop_after=1))
        except psycopg.OperationalError as e:
            self.close()
            raise SiteOffline(f"site.dsn: lost the site database ({' '.join(str(e).split())})") from e

    def run(self, stop: threading.Event, on_error: Callable[[SiteError], None] | None = None) -> None:
        """Sync until ``stop`` is set: at once, then on every NOTIFY, on new local records (looked
        for every ``site.poll_ms`` ms) and every ``site.pull_every_s`` s. Failures are recorded in
        the store's state, passed to ``on_error`` and retried after a delay doubling from 0.5 s up
        to ``site.retry_max_s`` s; they never end the loop, except :class:`BoxIdTaken` (raised: another
        store file uses this box id; the state is ``stopped``). Records held back (a record the store
        refuses) are retried on the same doubling delay while everything else syncs on. Records
        kept aside for an SKU this box does not know are told to ``on_error`` once per SKU and box."""
        delay, next_full, last_held = 0.5, 0.0, ""  # next_full: monotonic s of the next full round
        while not stop.is_set():
            try:
                if time.monotonic() >= next_full:
                    self.sync_once()
                    next_full = time.monotonic() + self.site.pull_every_s
                woke = self._woken(self.site.poll_ms / 1000.0)
                if woke or waiting(self.store) > 0:
                    self.sync_once(pull_first=woke)
                    next_full = time.monotonic() + self.site.pull_every_s if woke else next_full
                delay = 0.5
                while self.news and on_error is not None:
                    on_error(SiteError(self.news.pop(0)))
            except BoxIdTaken as e:  # not retried: two boxes writing as one would corrupt the site's history
                self.stopped(e)
                raise
            except PullHeldBack as e:
                # the connection is fine: keep syncing the rest at full speed, retry the held-back
                # box's records after the doubling delay (the item may have been added meanwhile)
                if on_error is not None and str(e) != last_held:
                    on_error(e)
                last_held, next_full = str(e), time.monotonic() + delay
                delay = min(delay * 2, self.site.retry_max_s)
            except (SiteError, StoreError, sqlite3.Error) as e:
                next_full = 0.0
                if isinstance(e, SiteError):
                    self._note_failure(e)
                else:  # the store busy past its timeout (another writer) or failing: retry, never die
                    e = SiteError(f"store {self.store.path}: {e}")
                if on_error is not None:
                    on_error(e)
                stop.wait(delay)
                delay = min(delay * 2, self.site.retry_max_s)
        self.close()
