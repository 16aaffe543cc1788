"""C19 store on a failing card: SIGKILL during writes 200 times; the store's folder on a tiny tmpfs that
fills mid-transaction; a store file with pages overwritten by random bytes while the service was stopped.

Right behaviour: every acknowledged record survives each kill and ``integrity_check`` is ok; on a full
disk the user hears that it was not saved, nothing is acknowledged, the voice path stays up; a corrupt
store at start is moved aside (kept), rebuilt from what can be read plus the last good backup, reported
in ``edge doctor`` and ``edge status``; no crash loop (the next start finds a healthy file).

The kills run the writer of tests/test_durability.py from a fork server (interpreter and store code
loaded once), so 200 kills take seconds, not minutes.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edge.stock import summary
from edge.stock.recovery import backup_path, read_report, report_path
from edge.stock.store import Store, StoreError
from tests.helpers import INVENTORY, REPO, SESSION_WAKE, SESSIONS

try:  # tests/ is on sys.path in pytest's default (prepend) import mode
    from durability_writer import op_number, turn_id
    from test_durability import HANG_S, Ledger, _inventory_quantities, check, snapshot
except ImportError:
    from tests.durability_writer import op_number, turn_id
    from tests.test_durability import HANG_S, Ledger, _inventory_quantities, check, snapshot

WRITER = Path(__file__).resolve().parent / "durability_writer.py"
KILLS = 200
PAGE = 4096


# -- 200 kills -------------------------------------------------------------------------------------

class ForkServer:
    def __init__(self, db: Path, seed: int) -> None:
        self.p = subprocess.Popen([sys.executable, str(WRITER), "--fork-server", str(db), str(INVENTORY), str(seed)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
                                  env={**os.environ, "PYTHONPATH": str(REPO)})

    def ask(self, line: str) -> str:
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait(timeout=60)


def read_acks(path: Path) -> tuple[tuple[int, str, str] | None, list[tuple[str, int | None]]]:
    ready, acks = None, []
    text = path.read_text() if path.exists() else ""
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break  # a line cut by the kill is no acknowledgement
        kind, *rest = line.split()
        if kind == "READY":
            ready = (int(rest[0]), rest[1], rest[2])
        else:
            acks.append((rest[0], None if rest[1] == "-" else int(rest[1])))
    return ready, acks


def wait_for_first_ack(path: Path) -> None:
    """Until the writer acknowledged one operation (it is in its write loop); HANG_S is a hang guard."""
    end = time.monotonic() + HANG_S
    while "\nACK " not in (path.read_text() if path.exists() else ""):
        assert time.monotonic() < end, f"the writer acknowledged nothing in {HANG_S} s (hung?)"
        time.sleep(0.001)


def test_200_sigkills_during_writes_lose_no_acknowledged_record(tmp_path: Path) -> None:
    seed, rng = 19, random.Random(19)
    db = tmp_path / "store.db"
    ledger = Ledger(seed, _inventory_quantities())
    server = ForkServer(db, seed)
    committed_unacked = next_op = acked_total = 0
    try:
        for kill in range(KILLS):
            acks_file = tmp_path / f"acks-{kill}"
            start = "resume" if kill % 2 else str(next_op)  # both restart policies of test_durability
            pid = int(server.ask(f"GO {start} {acks_file}").split()[1])
            delay = rng.uniform(0.0, 0.06)  # lands in start-up, a commit, or between turns
            # The first kill lands before the first inventory import committed, every time (on a
            # busy machine any early kill can): the store must then hold no item at all, not a part.
            # Every other kill waits for the writer's first acknowledgement, so that kills land in
            # the write loop however slow start-up is on a loaded machine.
            if kill % 2 == 1:
                wait_for_first_ack(acks_file)
            time.sleep(0.0 if kill == 0 else delay)
            os.kill(pid, signal.SIGKILL)
            assert server.ask(f"WAIT {pid}").startswith("EXIT"), kill
            ready, acks = read_acks(acks_file)
            in_flight = None
            if ready is not None:
                assert ready[1:] == ("wal", "2"), ready
                in_flight = turn_id(ready[0] + len(acks))
            for t, rid in acks:
                assert ledger.acked.get(t, rid) == rid, f"kill {kill}: turn {t} acknowledged twice differently"
                ledger.acked[t] = rid
                ledger.unacked_committed.discard(t)
            if acks:
                next_op = op_number(acks[-1][0]) + 1
            acked_total += len(acks)
            records, quantities = snapshot(db, via_store=kill % 3 == 0)  # integrity_check ok inside
            problems = check(records, quantities, ledger, in_flight)
            assert problems == [], f"kill {kill}:\n" + "\n".join(problems)
            if in_flight in {r.turn_id for r in records} and in_flight not in ledger.acked:
                ledger.unacked_committed.add(in_flight)
                committed_unacked += 1
    finally:
        server.close()
    assert acked_total > KILLS  # the writers did write between kills
    assert committed_unacked > 0  # a kill landed after COMMIT and before the acknowledgement


# -- a tmpfs that fills mid-transaction ---------------------------------------------------------------

@pytest.fixture
def tmpfs(tmp_path):
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=384k,mode=0755", "tmpfs", str(mnt)],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {r.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)


def test_a_card_that_fills_mid_transaction_acknowledges_nothing_it_did_not_keep(tmpfs, tmp_path) -> None:
    db = tmpfs / "edge.db"
    acked: dict[str, int] = {}
    failures: list[StoreError] = []
    with Store(db) as s:
        s.import_csv(INVENTORY)
        start = {i.sku: i.quantity for i in s.items()}
        skus = sorted(start)
        for n in range(5000):  # long utterances: the WAL grows until the filesystem is full
            tid = f"fill-{n}"
            try:
                r, _ = s.log(skus[n % len(skus)], 1, f"{n} " + "x" * 900, tid)
            except StoreError as e:
                failures.append(e)
                if len(failures) == 3:
                    break
                continue
            acked[tid] = r.id
        assert failures, "the tmpfs never filled"
        assert all(e.reason == "disk full" and "nothing was saved" in str(e) and str(db) in str(e) for e in failures)
        # the voice path stays up: a query is still answered from the full card
        assert s.get(skus[0]).quantity == start[skus[0]] + sum(1 for t in acked if int(t[5:]) % len(skus) == 0)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        kept = dict(conn.execute("SELECT turn_id, id FROM records WHERE turn_id LIKE 'fill-%'"))
        sums = dict(conn.execute("SELECT sku, sum(delta) FROM records GROUP BY sku"))
        qty = dict(conn.execute("SELECT sku, quantity FROM items"))
    assert kept == acked  # every acknowledged write is there, and nothing that was refused
    assert all(qty[k] == start[k] + sums.get(k, 0) for k in start)  # no torn write

    # the user hears it: a voice turn on the full card says nothing was saved (edge ask, same dialog)
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {db}}}\nllm: {{engine: none}}\n")
    r = subprocess.run([sys.executable, "-m", "edge.cli", "ask", "we used three drill bits from drawer four",
                        "--config", str(cfg), "--json"], cwd=REPO, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "Traceback" not in r.stderr, r.stderr
    assert "nothing was saved" in (r.stdout + r.stderr) and "disk" in (r.stdout + r.stderr), (r.stdout, r.stderr)


# -- random bytes over pages while stopped --------------------------------------------------------------

def _fill_store(db: Path, first: int, count: int) -> None:
    with Store(db) as s:
        if not s.items():
            s.import_csv(INVENTORY)
        skus = sorted(i.sku for i in s.items())
        for n in range(first, first + count):
            s.log(skus[n % len(skus)], -1 - n % 5, f"used {n} " + "y" * 150, f"turn-{n}")


def _leaf_pages(db: Path, table: str) -> list[tuple[int, int]]:
    with sqlite3.connect(db) as conn:
        return [(p, n) for p, n in conn.execute(
            "SELECT pageno, ncell FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno", (table,))]


def _smash(db: Path, pages: list[int], seed: int) -> None:
    rng = random.Random(seed)
    with open(db, "r+b") as f:
        for p in pages:
            f.seek((p - 1) * PAGE)
            f.write(rng.randbytes(PAGE))


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _written(db: Path, adjustments: bool = False) -> dict[str, tuple]:
    """gid -> (sku, delta, turn id) of the records; the rebuild's adjustment records only if asked."""
    with sqlite3.connect(db) as conn:
        rows = {g: tuple(rest) for g, *rest in conn.execute("SELECT gid, sku, delta, turn_id FROM records")}
    return {g: r for g, r in rows.items() if r[2].startswith("recovery:") == adjustments}


def _stock(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT sku, quantity FROM items"))


def _consistent(db: Path) -> None:
    start = _inventory_quantities()
    with Store(db) as s:
        sums: dict[str, int] = {}
        for r in s.records():
            sums[r.sku] = sums.get(r.sku, 0) + r.delta
        assert {i.sku: i.quantity for i in s.items()} == {k: v + sums.get(k, 0) for k, v in start.items()}


def test_a_corrupt_store_at_start_is_kept_aside_and_rebuilt_from_backup_and_readable_rows(tmp_path) -> None:
    db = tmp_path / "edge.db"
    _fill_store(db, 0, 60)
    Store(db, recover=True).close()  # a good start: the backup is taken
    assert backup_path(db).is_file()
    _fill_store(db, 60, 120)  # written after the last start, not in the backup
    truth, last_stock = _written(db), _stock(db)
    backed = _written(backup_path(db))
    leaves = _leaf_pages(db, "records")
    assert len(leaves) >= 6
    hit = [leaves[len(leaves) // 2], leaves[-2]]  # one page in the middle, one near the end
    _smash(db, [p for p, _ in hit], seed=5)
    damaged_sha = _sha(db)

    with Store(db, recover=True) as s:  # the start after the damage
        report = s.recovery
        assert report is not None and report["backup"] == str(backup_path(db))
        rebuilt = [r.turn_id for r in s.records()]
    aside = Path(report["moved_to"])
    assert aside.is_file() and _sha(aside) == damaged_sha  # kept as it was
    now = _written(db)
    assert set(now.items()) <= set(truth.items())  # nothing invented, nothing changed
    assert set(backed) <= set(now)  # everything of the backup
    lost = set(truth) - set(now)
    assert len(lost) <= sum(n for _, n in hit)  # only rows on the smashed pages are gone
    assert len(now) - len(backed) > 0 and report["records_read_from_damaged"] == len(now) - len(backed)
    assert len(rebuilt) == report["records"] == len(now) + report["adjustments"]
    # the stock is what the box last knew; the records lost are one adjustment per item, so the
    # history still sums to the stock
    assert _stock(db) == last_stock
    gaps: dict[str, int] = {}
    for g in lost:
        gaps[truth[g][0]] = gaps.get(truth[g][0], 0) + truth[g][1]
    adjust = {sku: delta for sku, delta, _ in _written(db, adjustments=True).values()}
    assert adjust == {k: v for k, v in gaps.items() if v} and report["adjustments"] == len(adjust)
    _consistent(db)
    conn = sqlite3.connect(db)  # the running sums are those of the records kept (recomputed, not salvaged)
    kept = conn.execute("SELECT * FROM record_days ORDER BY day, sku").fetchall()
    summary.rebuild(conn)
    assert kept and conn.execute("SELECT * FROM record_days ORDER BY day, sku").fetchall() == kept
    conn.rollback()
    conn.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert read_report(db) == report

    # reported by the doctor and the status
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {db}}}\nllm: {{engine: none}}\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    doc = subprocess.run([sys.executable, "-m", "edge.cli", "doctor", "--config", str(cfg), "--check", "store",
                          "--json", "--no-audio-probe"], cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    (line,) = json.loads(doc.stdout)["checks"]
    assert line["status"] == "warn" and "rebuilt" in line["message"] and str(aside) in line["message"], line
    st = subprocess.run([sys.executable, "-m", "edge.cli", "status", "--config", str(cfg), "--json"], cwd=REPO,
                        capture_output=True, text=True, timeout=120, env=env)
    assert json.loads(st.stdout)["store_recovery"]["moved_to"] == str(aside), st.stderr

    # no crash loop: the next start finds a healthy file and rebuilds nothing
    with Store(db, recover=True) as s:
        assert s.recovery is None
    assert [p.name for p in tmp_path.glob("edge.db.corrupt-*") if not p.name.endswith(("-wal", "-shm"))] == [aside.name]


def test_no_backup_and_every_page_smashed_still_starts(tmp_path) -> None:
    db = tmp_path / "edge.db"
    _fill_store(db, 0, 80)
    truth, last_stock = _written(db), _stock(db)
    leaves = _leaf_pages(db, "records")
    _smash(db, [leaves[1][0]], seed=7)  # no backup: what can be read is all there is
    with Store(db, recover=True) as s:
        report = s.recovery
        assert report["backup"] is None and s.items()
    now = _written(db)
    assert set(now.items()) <= set(truth.items()) and 0 < len(now) < len(truth)
    assert len(truth) - len(now) <= leaves[1][1]
    assert _stock(db) == last_stock and report["adjustments"] == 0  # no backup: no start count to sum from
    # then the whole file after its first page, with a backup of an earlier start: the backup is it
    Store(db, recover=True).close()
    before = _written(db)
    size = db.stat().st_size
    with open(db, "r+b") as f:
        f.seek(PAGE)
        f.write(os.urandom(size - PAGE))
    with Store(db, recover=True) as s:
        assert s.recovery["records"] == len(before)
    assert _written(db) == before


def test_the_voice_service_starts_on_a_corrupt_store_and_answers(tmp_path) -> None:
    db = tmp_path / "edge.db"
    _fill_store(db, 0, 40)
    Store(db, recover=True).close()
    _smash(db, [_leaf_pages(db, "records")[2][0]], seed=9)
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {db}}}\nllm: {{engine: none}}\n")
    r = subprocess.run([sys.executable, "-m", "edge.cli", "run", "--input", str(SESSIONS / "query_m8_bolts.wav"),
                        "--config", str(cfg), "--output-dir", str(tmp_path / "out"), "--json"], cwd=REPO,
                       capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr[-3000:]
    assert "was corrupt and has been rebuilt" in r.stderr
    events = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    replies = [e["text"] for e in events if e["type"] == "reply"]
    assert len(replies) == 1 and "M8 bolts" in replies[0], events
    assert report_path(db).is_file()
