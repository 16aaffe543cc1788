"""A failed write is heard: when the store cannot commit during a voice turn (disk full, read-only,
leftover -wal/-shm of another user) the user hears that nothing was saved, the turn's events say so,
``edge run --input`` exits non-zero and the message names the reason and the file; a store with
damaged pages is one line naming the fix, never a ``sqlite3`` traceback.

The failures are real: a tiny tmpfs filled to the last byte, a read-only bind mount, files owned by
another user (``nobody``) met by the service running as root without the capability to override
file permissions (``setpriv``), random bytes over the store's pages.
"""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from edge.stock.store import Store
from tests.helpers import INVENTORY, REPO, SESSION_WAKE, SESSIONS

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs and switching users needs root")


#: run a child as root that obeys file permissions like any service user
NO_OVERRIDE = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-chown,-fowner", "--"]


def edge(*args, obey_permissions: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "edge.cli", *map(str, args)]
    return subprocess.run(NO_OVERRIDE + cmd if obey_permissions else cmd, cwd=REPO, capture_output=True,
                          text=True, timeout=300, env=env)


@pytest.fixture
def tmpfs(tmp_path):
    """A 256 KiB tmpfs mounted for this test (unmounted after)."""
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0755", "tmpfs", str(mnt)],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {r.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)


def config(folder: Path, db: Path) -> Path:
    cfg = folder / "edge.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {db}}}\nllm: {{engine: none}}\n")
    return cfg


def fill(folder: Path) -> None:
    """Write zeros into ``folder`` until its filesystem has no byte left."""
    with open(folder / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
        try:  # the last partial page
            while True:
                f.write(b"\0")
        except OSError:
            pass
    assert os.statvfs(folder).f_bavail == 0


def run_turns(cfg: Path, out: Path, wav: Path) -> tuple[subprocess.CompletedProcess, list[dict]]:
    r = edge("run", "--input", wav, "--config", cfg, "--output-dir", out, "--json")
    events = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    return r, [e for e in events if e["type"] != "state"]


def assert_heard_not_saved(r, events, out: Path, db: Path, reason: str, spoken: str) -> list[dict]:
    """The first turn's write failed and was said; returns the replies of the later turns."""
    assert r.returncode == 2, (r.returncode, r.stderr[-3000:])
    assert "Traceback" not in r.stderr, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("edge: ") and "not saved" in last and reason in last and str(db) in last, last
    errors = [e for e in events if e["type"] == "error"]
    replies = [e for e in events if e["type"] == "reply"]
    assert len(errors) == 1 and errors[0]["stage"] == "store", events
    assert reason in errors[0]["message"] and str(db) in errors[0]["message"], errors
    turns = [e for e in events if e["type"] == "wake"]
    assert len(replies) == len(turns) == [e["type"] for e in events].count("turn_end"), events
    said = replies[0]
    assert said["turn_id"] == errors[0]["turn_id"], events
    assert "nothing was saved" in said["text"] and spoken in said["text"], said
    assert (out / Path(said["audio"]).name).stat().st_size > 10_000  # the apology was synthesized
    # no other audio: a reply prepared during the pause ("Logged 3 drill bits") went with the failed write
    claimed = sorted(Path(e["audio"]).name for e in replies if e.get("audio"))
    assert sorted(p.name for p in out.glob("*.wav")) == claimed, (claimed, list(out.iterdir()))
    return replies[1:]


def stock(db: Path, sku: str) -> tuple[int, int]:
    """``(quantity of sku, number of records)``, read with a fresh connection."""
    with Store(db) as s:
        return s.get(sku).quantity, len(s.records())


@needs_root
def test_disk_full_during_voice_turns_is_heard_and_nothing_is_acknowledged(tmpfs, tmp_path):
    db = tmpfs / "edge.db"
    with Store(db) as s:
        s.import_csv(INVENTORY)
    before = stock(db, "DRL-BIT-6")
    # another reader keeps the -wal and -shm files open, so the store opens; then the card fills up
    held = sqlite3.connect(db)
    held.execute("SELECT count(*) FROM items").fetchone()
    fill(tmpfs)
    out = tmp_path / "out"
    r, events = run_turns(config(tmp_path, db), out, SESSIONS / "two_turns_log_then_undo.wav")
    held.close()
    later = assert_heard_not_saved(r, events, out, db, "disk full", "disk is full")
    # the voice path stays up: the next turn ("undo that") is understood and answered
    assert [e["text"] for e in later] == ["There is nothing to undo."], later
    assert "df -h" in r.stderr  # the fix
    (tmpfs / "filler").unlink()
    assert stock(db, "DRL-BIT-6") == before  # nothing half-written


@needs_root
def test_a_store_on_a_read_only_filesystem_is_heard_naming_the_mount(tmpfs, tmp_path):
    with Store(tmpfs / "edge.db") as s:
        s.import_csv(INVENTORY)
    held = sqlite3.connect(tmpfs / "edge.db")  # keeps the -wal and -shm files, as a running reader does
    held.execute("SELECT count(*) FROM items").fetchone()
    ro = tmp_path / "ro"  # the same folder, mounted read-only (a card the kernel switched to read-only)
    ro.mkdir()
    subprocess.run(["mount", "--bind", str(tmpfs), str(ro)], check=True, timeout=30)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], check=True, timeout=30)
        db = ro / "edge.db"
        out = tmp_path / "out"
        r, events = run_turns(config(tmp_path, db), out, SESSIONS / "log_drill_bits_used.wav")
    finally:
        subprocess.run(["umount", "-l", str(ro)], capture_output=True, timeout=30)
        held.close()
    assert_heard_not_saved(r, events, out, db, "read-only", "read-only")
    assert "mounted read-only" in r.stderr and "remount" in r.stderr


WRITER = """
import os, sys
from edge.stock.store import Store
s = Store(sys.argv[1])
s.log("DRL-BIT-6", -1, "one drill bit used", "t-root")
print("ready", flush=True)
sys.stdin.readline()  # killed here, connection open: the -wal and -shm files stay behind
"""


@needs_root
def test_leftover_wal_and_shm_of_another_user_are_named(tmp_path):
    db = tmp_path / "edge.db"
    with Store(db) as s:
        s.import_csv(INVENTORY)
    # a process dies holding the store: its -wal (with a committed record) and -shm stay behind
    p = subprocess.Popen([sys.executable, "-c", WRITER, str(db)], cwd=REPO, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert p.stdout.readline().strip() == "ready"
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
    wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
    assert wal.exists() and shm.exists()
    for side in (wal, shm):  # they belong to another user (an operator's sqlite3 shell, say)
        os.chown(side, 65534, 65534)
    cfg = config(tmp_path, db)
    r = edge("ask", "I used three drill bits", "--config", cfg, obey_permissions=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("edge: ") and "read-only" in line and "chown" in line, line
    assert f"{wal} (owner uid 65534, mode 0644)" in line and str(shm) in line, line
    assert "do not delete" in line  # the -wal holds the record the killed process committed
    # after the fix the store works again, and the killed process's committed record is there
    for side in (wal, shm):
        os.chown(side, 0, 0)
    r = edge("ask", "I used three drill bits", "--config", cfg, obey_permissions=True)
    assert r.returncode == 0, r.stderr
    with Store(db) as s:
        records = [(x.turn_id, x.delta) for x in s.records()]
    assert len(records) == 2 and records[0] == ("t-root", -1) and records[1][1] == -3, records


@needs_root
def test_a_read_only_store_is_named_with_chmod_not_its_side_files(tmp_path):
    db = tmp_path / "edge.db"
    with Store(db) as s:
        s.import_csv(INVENTORY)
    db.chmod(0o444)  # SQLite then makes its -wal and -shm read-only too
    r = edge("ask", "I used three drill bits", "--config", config(tmp_path, db), obey_permissions=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert f"the store {db} (owner uid 0, mode 0444) is not writable" in line, line
    assert f"chmod u+w {db}" in line and "leftover" not in line and "chown --reference" not in line, line
    db.chmod(0o644)
    for side in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        if side.exists():
            side.chmod(0o644)
    assert edge("ask", "I used three drill bits", "--config", config(tmp_path, db), obey_permissions=True).returncode == 0


def corrupt(db: Path) -> None:
    """Random bytes over every page after the first (the header and schema stay readable)."""
    size = db.stat().st_size
    with open(db, "r+b") as f:
        f.seek(4096)
        f.write(os.urandom(size - 4096))


@pytest.mark.parametrize("command", [("ask", "how many drill bits are there"), ("records", "export", "--csv")])
def test_a_store_with_damaged_pages_is_one_line_with_the_fix(tmp_path, command):
    db = tmp_path / "edge.db"
    with Store(db) as s:
        s.import_csv(INVENTORY)
        s.log("DRL-BIT-6", -3, "three drill bits used", "t1")
    corrupt(db)
    r = edge(*command, "--config", config(tmp_path, db))
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and "sqlite3." not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edge: "), r.stderr
    assert "corrupt" in lines[0] and str(db) in lines[0] and ".recover" in lines[0], lines[0]
