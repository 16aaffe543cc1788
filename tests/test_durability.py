"""Durability of the store (issue 3, point 6): a record is committed before the reply says it was
logged, and SIGKILL at any moment neither loses an acknowledged record nor doubles one.

The kill test runs tests/durability_writer.py as a child process on a real SQLite file, kills it
with SIGKILL at random moments (seeded), restarts it on the same file, and after every kill checks
the file against what the child acknowledged (``ACK`` lines, written only after ``Store.log`` /
``Store.undo`` returned). Two restart policies:

``resume``
    the restarted writer continues after the last operation found in the database;
``retry``
    the restarted writer re-sends every operation it has no acknowledgement for, with the same turn
    id (a client retrying a turn whose reply was lost). The operation in flight at the kill may
    already be committed: the turn-id idempotency key of ``Store.log`` / ``Store.undo`` must stop it
    being written twice.

SIGKILL tests process death only: the page cache survives it. Power loss (what ``synchronous=FULL``
is for) is not simulated here.
"""
from __future__ import annotations

import csv
import io
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from edge.stock.schema import MIGRATIONS, SCHEMA_VERSION
from edge.stock.store import Record, Store, StoreError
from tests.helpers import SESSION_WAKE

try:  # tests/ is on sys.path in pytest's default (prepend) import mode
    from durability_writer import op, op_number, turn_id
except ImportError:
    from tests.durability_writer import op, op_number, turn_id

REPO = Path(__file__).resolve().parents[1]
WRITER = Path(__file__).resolve().parent / "durability_writer.py"
INVENTORY = Path(__file__).resolve().parents[2] / "shared/audio/sessions/inventory.csv"

pytestmark = pytest.mark.skipif(not INVENTORY.is_file(), reason=f"missing {INVENTORY}")

#: Kills per restart policy (two policies: 80 kills in all).
KILLS = 40
#: Share of kills aimed at start-up (interpreter start, open, WAL recovery, migration, first import)
#: instead of the write loop; the delay is then counted from the spawn, not from READY.
EARLY_SHARE = 0.15
#: Delay ranges in seconds. At about 4 ms per commit on this machine's ext4 (fsync per commit),
#: 0.1 s spans up to ~25 writes; 0.25 s from spawn covers the ~0.15 s start-up and the first writes.
LOOP_DELAY_S = (0.0, 0.1)
EARLY_DELAY_S = (0.0, 0.25)
#: Hang guard for reading from / waiting on the child (not a speed requirement).
HANG_S = 60.0


def _inventory_quantities() -> dict[str, int]:
    with INVENTORY.open(newline="", encoding="utf-8-sig") as f:
        return {row["sku"]: int(row["quantity"]) for row in csv.DictReader(f)}


# -- the checker ---------------------------------------------------------------------------------


@dataclass
class Ledger:
    """What the parent knows: the operations (from the seed) and the acknowledgements received."""

    seed: int
    start_quantity: dict[str, int]
    acked: dict[str, int | None] = field(default_factory=dict)  # turn id -> record id (None: nothing to undo)
    unacked_committed: set[str] = field(default_factory=set)  # records found without an ACK, earlier kills

    @property
    def skus(self) -> list[str]:
        return sorted(self.start_quantity)


def check(records: list[Record], quantities: dict[str, int], ledger: Ledger, in_flight: str | None) -> list[str]:
    """Everything wrong with the store's state after a kill; ``[]`` if it is right.

    ``records``: the history by id; ``quantities``: ``items.quantity`` by SKU; ``in_flight``: the turn
    id of the operation the killed writer had started but not acknowledged (``None`` if it had not
    reached its write loop).
    """
    return (_doubled_or_lost(records, ledger) + _unacknowledged(records, ledger, in_flight)
            + _torn(records, quantities, ledger) + _out_of_sequence(records, ledger))


def _doubled_or_lost(records: list[Record], ledger: Ledger) -> list[str]:
    """No turn has two records; every acknowledged record is in the store."""
    by_id = {r.id: r for r in records}
    counts = Counter(r.turn_id for r in records)
    problems = [f"doubled: turn {t} has {c} records" for t, c in sorted(counts.items()) if c > 1]
    for t, rid in sorted(ledger.acked.items()):
        if rid is None:
            if counts[t]:
                problems.append(f"turn {t} was acknowledged as 'nothing to undo' but has a record")
        elif rid not in by_id or by_id[rid].turn_id != t:
            problems.append(f"lost: acknowledged turn {t} (record {rid}) is not in the store")
    return problems


def _unacknowledged(records: list[Record], ledger: Ledger, in_flight: str | None) -> list[str]:
    """At most one unacknowledged record: the one in flight."""
    new = {r.turn_id for r in records if r.turn_id not in ledger.acked} - ledger.unacked_committed
    if new - {in_flight}:
        return [f"records nobody acknowledged and not in flight ({in_flight}): {sorted(new)}"]
    return []


def _torn(records: list[Record], quantities: dict[str, int], ledger: Ledger) -> list[str]:
    """No torn write: quantity == start + the sum of the records' deltas. A store without any item is
    right only while nothing was ever acknowledged: the writer was killed before its first inventory
    import committed (one transaction: all items or none)."""
    if not quantities and not records and not ledger.acked:
        return []
    sums: Counter = Counter()
    for r in records:
        sums[r.sku] += r.delta
    return [f"torn: {sku} quantity {quantities.get(sku)} != {start} + {sums[sku]}"
            for sku, start in sorted(ledger.start_quantity.items()) if quantities.get(sku) != start + sums[sku]]


def _out_of_sequence(records: list[Record], ledger: Ledger) -> list[str]:
    """Every record is the operation its turn id names, in order, and every undo reverts the right one."""
    problems: list[str] = []
    open_logs: list[Record] = []  # logs not undone yet, newest last
    last = -1
    for r in records:
        n = op_number(r.turn_id)
        if n <= last:
            problems.append(f"record {r.id} (turn {r.turn_id}) is out of order or repeated")
            continue
        for m in range(last + 1, n):  # an operation without a record can only be an undo of nothing
            if op(ledger.seed, m, ledger.skus)[0] != "undo" or open_logs:
                problems.append(f"lost: operation {turn_id(m)} ran before {r.turn_id} but has no record")
        last = n
        problems += _record_matches(r, n, ledger, open_logs)
    return problems


def _record_matches(r: Record, n: int, ledger: Ledger, open_logs: list[Record]) -> list[str]:
    """Record ``r`` is operation ``n``: a log of the right SKU and delta, or the undo of the newest open log."""
    kind, sku, delta = op(ledger.seed, n, ledger.skus)
    problems = []
    if r.utterance != f"op-{n}":
        problems.append(f"record {r.id}: utterance {r.utterance!r} != 'op-{n}'")
    if kind == "log":
        if (r.sku, r.delta, r.undoes) != (sku, delta, None):
            problems.append(f"record {r.id}: {(r.sku, r.delta, r.undoes)} != {(sku, delta, None)}")
        open_logs.append(r)
    elif not open_logs:
        problems.append(f"record {r.id}: undo {r.turn_id} with nothing left to undo")
    else:
        target = open_logs.pop()
        if (r.sku, r.delta, r.undoes) != (target.sku, -target.delta, target.id):
            problems.append(f"record {r.id}: undo {(r.sku, r.delta, r.undoes)} does not revert record "
                            f"{target.id} {(target.sku, target.delta)}")
    return problems


# -- running and killing the writer ----------------------------------------------------------------


def _read_until(fd: int, buf: bytearray, done, hung: str) -> None:
    """Read from ``fd`` into ``buf`` until ``done(buf)`` or EOF; ``hung`` is the failure after
    HANG_S s without data (hang guard only)."""
    while not done(buf):
        ready, _, _ = select.select([fd], [], [], HANG_S)
        if not ready:
            raise AssertionError(hung)
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        buf += chunk


def _read_line(fd: int, buf: bytearray) -> None:
    """Read until ``buf`` holds a newline or EOF."""
    _read_until(fd, buf, lambda b: b"\n" in b, f"writer printed nothing for {HANG_S} s (hung?)")


def _read_to_eof(fd: int, buf: bytearray) -> None:
    _read_until(fd, buf, lambda b: False, f"writer pipe not closed {HANG_S} s after SIGKILL")


@dataclass
class Run:
    early: bool
    ready: tuple[int, str, str] | None  # first op, journal_mode, synchronous (None: killed before READY)
    acks: list[tuple[str, int | None]]


def run_and_kill(db: Path, seed: int, start: str, rng: random.Random, log: Path) -> Run:
    """Start the writer on ``db``, SIGKILL it after a random delay, return what it printed."""
    with log.open("wb") as err:
        p = subprocess.Popen([sys.executable, str(WRITER), str(db), str(INVENTORY), str(seed), start],
                             stdout=subprocess.PIPE, stderr=err, cwd=REPO)
    try:
        fd = p.stdout.fileno()
        buf = bytearray()
        early = rng.random() < EARLY_SHARE
        if early:
            delay = rng.uniform(*EARLY_DELAY_S)
        else:
            _read_line(fd, buf)  # READY
            delay = rng.uniform(*LOOP_DELAY_S)
        time.sleep(delay)  # the child keeps writing into the pipe meanwhile (64 KiB >> 0.1 s of ACKs)
        os.kill(p.pid, signal.SIGKILL)
        rc = p.wait(timeout=HANG_S)
        _read_to_eof(fd, buf)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
    assert rc == -signal.SIGKILL, f"writer ended by itself (exit {rc}) before the kill:\n{log.read_text()}"
    ready, acks = None, []
    for line in bytes(buf).decode().splitlines():
        kind, *rest = line.split()
        if kind == "READY":
            ready = (int(rest[0]), rest[1], rest[2])
        else:
            assert kind == "ACK" and len(rest) == 2, f"malformed writer line {line!r}"
            acks.append((rest[0], None if rest[1] == "-" else int(rest[1])))
    return Run(early, ready, acks)


def snapshot(db: Path, via_store: bool) -> tuple[list[Record], dict[str, int]]:
    """The records and quantities in ``db`` after a kill, plus an integrity check.

    ``via_store``: read through :class:`Store` (WAL recovery, migration check; its close checkpoints
    the WAL). Otherwise a read-only connection, which leaves the killed writer's WAL in place so the
    next writer has to recover it itself, as a restarted daemon would.
    """
    if via_store:
        with Store(db) as s:
            assert s.schema_version == SCHEMA_VERSION
            records = s.records()
            quantities = {i.sku: i.quantity for i in s.items()}
    else:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            records = [Record(*row) for row in conn.execute(
                "SELECT id, time, sku, delta, utterance, turn_id, undoes FROM records ORDER BY id")]
            quantities = dict(conn.execute("SELECT sku, quantity FROM items"))
        finally:
            conn.close()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()
    return records, quantities


@pytest.mark.parametrize("policy", ["resume", "retry"])
def test_sigkill_never_loses_or_doubles_an_acknowledged_record(tmp_path: Path, policy: str) -> None:
    seed = 3 if policy == "resume" else 4
    rng = random.Random(seed)
    db = tmp_path / "store.db"
    ledger = Ledger(seed, _inventory_quantities())
    stats = Counter()
    next_op = 0  # retry: the first operation without an acknowledgement
    for kill in range(KILLS):
        start = "resume" if policy == "resume" else str(next_op)
        run = run_and_kill(db, seed, start, rng, tmp_path / f"writer-{kill}.log")
        where = f"{policy} kill {kill} (seed {seed}, start {start})"
        in_flight = None
        if run.ready is not None:
            first, mode, sync = run.ready
            assert (mode, sync) == ("wal", "2"), f"{where}: writer connection journal_mode={mode} synchronous={sync}"
            expected = list(range(first, first + len(run.acks)))
            assert [op_number(t) for t, _ in run.acks] == expected, f"{where}: ACKs out of sequence"
            in_flight = turn_id(first + len(run.acks))
        for t, rid in run.acks:
            if t in ledger.acked and ledger.acked[t] != rid:
                pytest.fail(f"{where}: turn {t} acknowledged as record {ledger.acked[t]}, now as {rid}")
            if t in ledger.unacked_committed:  # retry policy: the in-flight write of an earlier kill
                stats["retries of a committed turn"] += 1
            ledger.acked[t] = rid
            ledger.unacked_committed.discard(t)
        if run.acks:
            next_op = op_number(run.acks[-1][0]) + 1

        records, quantities = snapshot(db, via_store=kill % 2 == 0)
        wal = db.with_name(db.name + "-wal")
        stats["restarts on the killed writer's WAL"] += wal.exists() and wal.stat().st_size > 0
        problems = check(records, quantities, ledger, in_flight)
        assert problems == [], f"{where}:\n" + "\n".join(problems)

        committed = {r.turn_id for r in records}
        stats["early kills"] += run.early
        stats["kills before READY"] += run.ready is None
        stats["acknowledgements"] += len(run.acks)
        if in_flight in committed and in_flight not in ledger.acked:
            stats["kills with the write in flight committed, not acknowledged"] += 1
            ledger.unacked_committed.add(in_flight)
        elif in_flight is not None and in_flight not in committed:
            stats["kills between turns or before the commit"] += 1
    stats["records"] = len(records)
    stats["kills"] = KILLS
    print(f"\n{policy}: " + ", ".join(f"{k}: {v}" for k, v in sorted(stats.items())))
    assert len(records) > KILLS  # the loop did write between kills
    # the window that matters was hit (about 4 in 10 kills land in a commit's fsync): committed, not acknowledged
    assert stats["kills with the write in flight committed, not acknowledged"] > 0, stats
    if policy == "retry":  # and such a turn was re-sent, and not written twice (check() above)
        assert stats["retries of a committed turn"] > 0, stats


def _ops_in_process(db: Path, seed: int, count: int) -> Ledger:
    """Run operations 0..count-1 in this process, acknowledging each (no kill)."""
    ledger = Ledger(seed, _inventory_quantities())
    with Store(db) as s:
        s.import_csv(INVENTORY)
        for n in range(count):
            kind, sku, delta = op(seed, n, ledger.skus)
            if kind == "undo":
                res = s.undo(f"op-{n}", turn_id(n))
                ledger.acked[turn_id(n)] = None if res is None else res[0].id
            else:
                ledger.acked[turn_id(n)] = s.log(sku, delta, f"op-{n}", turn_id(n))[0].id
    return ledger


def test_checker_catches_a_lost_a_doubled_and_a_torn_record(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    ledger = _ops_in_process(db, seed=5, count=30)
    records, quantities = snapshot(db, via_store=True)
    assert any(r.undoes is not None for r in records) and len(records) >= 20
    assert check(records, quantities, ledger, None) == []

    victim = next(r for r in records[5:] if r.undoes is None)
    lost = [r for r in records if r is not victim]
    qty_lost = {**quantities, victim.sku: quantities[victim.sku] - victim.delta}  # consistent, but lost
    assert any(p.startswith("lost: acknowledged") for p in check(lost, qty_lost, ledger, None))

    doubled = records + [Record(records[-1].id + 1, victim.time, victim.sku, victim.delta, victim.utterance,
                                victim.turn_id, None)]
    qty_doubled = {**quantities, victim.sku: quantities[victim.sku] + victim.delta}
    assert any(p.startswith("doubled") for p in check(doubled, qty_doubled, ledger, None))

    torn = {**quantities, victim.sku: quantities[victim.sku] + 1}
    assert any(p.startswith("torn") for p in check(records, torn, ledger, None))

    unacked = dict(ledger.acked)
    del unacked[records[-1].turn_id]
    ledger_unacked = Ledger(ledger.seed, ledger.start_quantity, unacked)
    assert check(records, quantities, ledger_unacked, records[-1].turn_id) == []  # the one in flight
    assert any("nobody acknowledged" in p for p in check(records, quantities, ledger_unacked, None))


# -- the idempotency key ------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path):
    with Store(tmp_path / "s.db") as s:
        s.import_csv(INVENTORY)
        yield s


def test_a_retried_log_is_written_once(store: Store) -> None:
    rec, item = store.log("BLT-M8-30", -5, "take five m8 bolts", "turn-1")
    assert item.quantity == 135
    again, item2 = store.log("BLT-M8-30", -5, "take five m8 bolts", "turn-1")
    assert again == rec and item2.quantity == 135
    assert store.records() == [rec]
    # the same turn may change another item (one record per (turn_id, sku))
    other, item3 = store.log("FUS-5A", 2, "and two fuses", "turn-1")
    assert other.id != rec.id and item3.quantity == 62
    assert len(store.records()) == 2


def test_a_retry_with_a_different_delta_is_refused(store: Store) -> None:
    store.log("SPN-10", 3, "add three spanners", "turn-7")
    with pytest.raises(StoreError) as ei:
        store.log("SPN-10", 4, "add four spanners", "turn-7")
    msg = str(ei.value)
    assert "turn-7" in msg and "+3" in msg and "+4" in msg and "new turn_id" in msg
    assert [r.delta for r in store.records()] == [3]
    assert store.get("SPN-10").quantity == 9


def test_a_retried_undo_reverts_only_one_record(store: Store) -> None:
    first, _ = store.log("FUS-5A", 5, "add five fuses", "turn-1")
    second, _ = store.log("DRL-BIT-6", -3, "take three drill bits", "turn-2")
    u, item = store.undo("undo that", "turn-3")
    assert u.undoes == second.id and item.quantity == 25
    u_again, item_again = store.undo("undo that", "turn-3")  # the retry
    assert u_again == u and item_again.quantity == 25
    assert store.get("FUS-5A").quantity == 65  # the first record was not undone too
    u2, _ = store.undo("undo", "turn-4")  # a new turn walks back further
    assert u2.undoes == first.id
    assert [r.turn_id for r in store.records()] == ["turn-1", "turn-2", "turn-3", "turn-4"]


def test_the_idempotency_key_holds_in_the_file_too(store: Store) -> None:
    store.log("GOG-SAF", 1, "add one goggles", "turn-1")
    conn = sqlite3.connect(store.path)
    try:  # the key is per box (two boxes of a site may use the same turn id): same box, new gid and seq
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            conn.execute("INSERT INTO records (time, sku, delta, utterance, turn_id, box, gid, seq) "
                         "VALUES ('2025-01-01T00:00:00.000+00:00', 'GOG-SAF', 1, 'x', 'turn-1', ?, "
                         "'01JAAAAAAAAAAAAAAAAAAAAAAA', 99)", (store.box,))
    finally:
        conn.close()


# -- pragmas and migrations ------------------------------------------------------------------------


def test_the_store_connection_is_wal_with_synchronous_full(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)  # an empty version-0 file in the default rollback-journal mode
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()
    with Store(db) as s:
        c = s._db()  # synchronous is per connection: check the store's own
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert c.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    other = sqlite3.connect(db)  # WAL is persistent in the file
    try:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        other.close()


def test_a_version_0_file_is_migrated(tmp_path: Path) -> None:
    db = tmp_path / "v0.db"
    db.write_bytes(b"")  # a zero-length file is an empty SQLite database, user_version 0
    with Store(db) as s:
        assert s.schema_version == SCHEMA_VERSION == len(MIGRATIONS)
        s.import_csv(INVENTORY)
        rec, item = s.log("TIE-CBL-200", -25, "take 25 cable ties", "turn-1")
        assert item.quantity == 275
    conn = sqlite3.connect(db)
    try:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    finally:
        conn.close()
    assert {"items", "records", "records_undoes", "records_turn_sku", "records_turn_undo",
            "records_no_update", "records_no_delete"} <= names


def _version_1_file(db: Path, records: list[tuple]) -> None:
    """A file as version 1 of the code left it, with two items and ``records``."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        for stmt in MIGRATIONS[0]:
            conn.execute(stmt)
        conn.execute("INSERT INTO items VALUES ('FUS-5A', 'fuse', 'drawer 1', 60, 'pcs', 'fuses')")
        conn.execute("INSERT INTO items VALUES ('SPN-10', 'spanner', 'wall', 6, 'pcs', '')")
        conn.executemany("INSERT INTO records (time, sku, delta, utterance, turn_id, undoes) "
                         "VALUES ('2025-01-31T09:15:02.123+00:00', ?, ?, ?, ?, ?)", records)
        conn.execute("PRAGMA user_version = 1")
    finally:
        conn.close()


def test_a_version_1_file_is_migrated_with_its_data(tmp_path: Path) -> None:
    db = tmp_path / "v1.db"
    _version_1_file(db, [("FUS-5A", 5, "add five fuses", "a1", None), ("FUS-5A", -5, "undo", "a2", 1),
                         ("SPN-10", 2, "add two spanners", "a3", None)])
    with Store(db) as s:
        assert s.schema_version == SCHEMA_VERSION
        assert [(r.id, r.sku, r.delta, r.turn_id, r.undoes) for r in s.records()] == [
            (1, "FUS-5A", 5, "a1", None), (2, "FUS-5A", -5, "a2", 1), (3, "SPN-10", 2, "a3", None)]
        again, item = s.log("SPN-10", 2, "add two spanners", "a3")  # a retry of an old turn
        assert again.id == 3 and item.quantity == 6
        assert len(s.records()) == 3


def test_a_migration_that_fails_names_the_step_and_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "v1dup.db"
    # version 1 did not enforce the idempotency key: the same turn logged twice for one SKU
    _version_1_file(db, [("FUS-5A", 5, "add five fuses", "a1", None), ("FUS-5A", 5, "add five fuses", "a1", None)])
    with pytest.raises(StoreError) as ei:
        Store(db)
    msg = str(ei.value)
    assert str(db) in msg and "from schema version 1 to 2" in msg and "UNIQUE" in msg
    assert "still version 1" in msg and "fix:" in msg
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM records").fetchone()[0] == 2
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'records_turn_sku'").fetchone()[0] == 0
    finally:
        conn.close()


def test_a_file_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "future.db"
    Store(db).close()
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError) as ei:
        Store(db)
    msg = str(ei.value)
    assert str(db) in msg and f"schema version {SCHEMA_VERSION + 1}" in msg
    assert f"this program's {SCHEMA_VERSION}" in msg and "upgrade edge" in msg
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1  # untouched
    finally:
        conn.close()


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "notes.db"
    db.write_text("shopping list: bolts, gloves, fuses\n" * 20)
    with pytest.raises(StoreError) as ei:
        Store(db)
    assert str(db) in str(ei.value) and "not a database" in str(ei.value) and "store.path" in str(ei.value)


# -- export ------------------------------------------------------------------------------------------


def test_records_export_csv_round_trip(tmp_path: Path) -> None:
    db = tmp_path / "edge.db"
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {db}}}\n")
    utterances = ['take 25 cable ties, "urgent"', "add twelve\nfuses", "加十二个保险丝", " =1+2 ", "undo"]
    with Store(db) as s:
        s.import_csv(INVENTORY)
        s.log("TIE-CBL-200", -25, utterances[0], "t1")
        s.log("FUS-5A", 12, utterances[1], "t2")
        s.log("FUS-5A", 12, utterances[2], "t3")
        s.log("SPN-10", 1, utterances[3], "t4")
        s.undo(utterances[4], "t5")
        expected = s.records()
    r = subprocess.run([sys.executable, "-m", "edge.cli", "records", "export", "--csv", "--config", str(cfg)],
                       cwd=REPO, capture_output=True, timeout=HANG_S)
    assert r.returncode == 0, r.stderr.decode()
    rows = list(csv.reader(io.StringIO(r.stdout.decode("utf-8"), newline="")))
    assert rows[0] == ["id", "time", "sku", "delta", "utterance", "turn_id", "undoes", "location", "kind", "counted"]
    back = [Record(int(i), t, sku, int(d), u, tid, int(un) if un else None, loc, kind, int(c) if c else None)
            for i, t, sku, d, u, tid, un, loc, kind, c in rows[1:]]
    assert back == expected
    assert [r.utterance for r in back] == utterances
