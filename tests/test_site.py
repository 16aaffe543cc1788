"""Site sync (edge.site) against a real PostgreSQL 15 started by the test (tests/pgserver.py).

Every box is a store file of its own, written by this test process (as the voice service would),
and synced by its own ``edge site sync`` process. Faults: the server killed mid-push and
restarted, a box's sync SIGKILLed mid-pull, a box offline for hundreds of records. After every
fault the invariants hold: no record lost, none doubled, every box holds the same history and
reports the same stock for every SKU, the server's history equals the union of the boxes'.
"""
from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import psycopg
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from edge.config import ApiSettings, ConfigError, load_settings
from edge.llm.chain import EngineChain, StepSpec
from edge.service.api.app import ServerThread, create_app
from edge.site.server import SiteError, SiteOffline, connect, init_schema, read_password
from edge.site.status import format_site, site_status
from edge.site.sync import SiteSync, waiting
from edge.stages.dialog import act
from edge.stages.nlu.types import Intent
from edge.stages.reply import query_reply
from edge.stock.store import Store
from tests import pgserver
from tests.helpers import INVENTORY, REPO
from tests.netproxy import Proxy
from tests.pgserver import PgServer, wait_for
from tests.site_helpers import (
    HANG_S,
    Box,
    check_site,
    converged,
    new_site_db,
    on_server,
    run_server,
    server_history,
)

server = pytest.fixture(scope="module")(run_server)
dsn = pytest.fixture(new_site_db)

pytestmark = [
    pytest.mark.skipif(not pgserver.available(), reason="PostgreSQL 15 not installed (apt-get install postgresql)"),
    pytest.mark.skipif(not INVENTORY.is_file(), reason=f"missing {INVENTORY}"),
]

def test_init_creates_the_schema_once_and_refuses_a_newer_one(server: PgServer, tmp_path: Path) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE DATABASE initdb_t")
    d = server.dsn.replace("dbname=edge", "dbname=initdb_t")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"store": {"path": str(tmp_path / "e.db")}, "site": {"box": "a", "dsn": d}}))
    runs = [subprocess.run([sys.executable, "-m", "edge.cli", "site", "init", "--json", "--config", str(cfg)],
                           cwd=REPO, capture_output=True, text=True, timeout=HANG_S) for _ in range(2)]
    assert [json.loads(r.stdout) for r in runs] == [{"before": 0, "after": 3}, {"before": 3, "after": 3}]
    with psycopg.connect(d, autocommit=True) as c:
        c.execute("UPDATE edge_site_schema SET version = 99")
        with pytest.raises(SiteError, match="schema version 99, newer than this program's 3; fix: upgrade edge"):
            init_schema(c)
        with pytest.raises(psycopg.Error, match="append-only"):
            c.execute("INSERT INTO edge_movements (gid, box, seq, time, sku, delta, utterance, turn_id) "
                      "VALUES ('g', 'a', 1, 't', 's', 1, 'u', 't')")
            c.execute("DELETE FROM edge_movements")


def test_an_unreachable_server_leaves_the_box_working_and_says_so(tmp_path: Path) -> None:
    box = Box(tmp_path, "goods-in", f"host=127.0.0.1 port={pgserver.free_port()} dbname=edge user=edge")
    box.log(12)
    r = box.sync_once()
    assert r.returncode == 2
    assert "site.dsn: cannot reach the site database" in r.stderr and "fix:" in r.stderr
    with box.store() as s:
        st = site_status(s)
        assert st["state"] == "offline" and st["waiting"] == 12 and st["offline_since"]
        assert re.fullmatch(r"site offline since \d\d:\d\d, 12 records waiting", format_site(st)[0])
        s.log("FUS-5A", 1, "add a fuse", "later")  # still logging
        assert waiting(s) == 13
        # answers come from the local view, and say so
        asked = act(Intent("query_stock", sku="FUS-5A"), s, "how many fuses", "q1")
        assert re.search(r"\. \(Site offline since \d\d:\d\d, 13 records waiting; other boxes' latest records "
                         r"may be missing\.\)$", asked.text)
        logged = act(Intent("log_record", sku="FUS-5A", quantity=2, direction="in"), s, "add two fuses", "q2")
        assert logged.record is not None and "14 records waiting" in logged.text
    r = subprocess.run([sys.executable, "-m", "edge.cli", "status", "--interval", "0", "--config", str(box.config)],
                       cwd=REPO, capture_output=True, text=True, timeout=HANG_S)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^site offline since \d\d:\d\d, 14 records waiting$", r.stdout, re.M), r.stdout
    r = subprocess.run([sys.executable, "-m", "edge.cli", "site", "status", "--json", "--config", str(box.config)],
                       cwd=REPO, capture_output=True, text=True, timeout=HANG_S)
    out = json.loads(r.stdout)
    assert out["waiting"] == 14 and out["server"] is None and "site.dsn" in out["server_error"]


def test_the_password_comes_from_a_private_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pw = tmp_path / "db-password"
    pw.write_text("s3cret\n")
    pw.chmod(0o644)
    with pytest.raises(SiteError, match=r"site.password_file: .* may be read by others .*fix: chmod 600"):
        read_password(pw)
    pw.chmod(0o600)
    assert read_password(pw) == "s3cret"
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path))  # systemd LoadCredential=
    assert read_password(Path("db-password")) == "s3cret"
    with pytest.raises(SiteError, match="cannot read .*missing.*fix:"):
        read_password(Path("missing"))
    with pytest.raises(ConfigError, match="site.dsn holds a password.*site.password_file"):
        load_settings(overrides={"site": {"box": "a", "dsn": "host=x user=edge password=s3cret"}})
    with pytest.raises(ConfigError, match="site.box"):
        load_settings(overrides={"site": {"box": "Goods In", "dsn": "host=x"}})


@pytest.mark.parametrize("mode", [0o700, 0o755])
def test_a_directory_as_the_password_file_is_named_as_a_directory(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "credentials"
    folder.mkdir()
    folder.chmod(mode)  # 0755 was blamed as "may be read by others", 0700 as an unreadable file
    with pytest.raises(SiteError) as e:
        read_password(folder)
    msg = str(e.value)
    assert f"site.password_file: {folder} is a directory; fix: point site.password_file at the file inside it" in msg
    assert "may be read by others" not in msg and "chmod" not in msg.split("fix:")[0]


def test_three_boxes_share_one_stock(dsn: str, tmp_path: Path) -> None:
    boxes = [Box(tmp_path, name, dsn) for name in ("goods-in", "crib", "line")]
    for b in boxes:
        b.start()
    try:
        written = {}
        for _ in range(4):  # interleaved turns on all three boxes while they sync
            for b in boxes:
                written[b.name] = b.log(10, undo_every=4)
        assert wait_for(lambda: converged(dsn, boxes), HANG_S)
        check_site(dsn, boxes, written)
        # a record at one box reaches the others by NOTIFY alone (pull_every_s is an hour here)
        gid = boxes[0].log(1)[-1]
        for b in boxes[1:]:
            assert wait_for(lambda b=b: gid in {m.gid for m in b.store().movements()}, HANG_S)
        # undo at the crib undoes the crib's last record, wherever it has been synced
        with boxes[1].store() as s:
            assert s.undo("undo", "crib-undo") is not None
            undo = s.movements("crib")[-1]
            assert undo.undoes in {m.gid for m in s.movements("crib")}
        assert wait_for(lambda: converged(dsn, boxes), HANG_S)
        check_site(dsn, boxes, {**written, "crib": [m.gid for m in boxes[1].store().movements("crib")]})
    finally:
        for b in boxes:
            b.stop()


def test_a_box_offline_for_10000_records_catches_up(server: PgServer, dsn: str, tmp_path: Path) -> None:
    a, b = Box(tmp_path, "yard", dsn), Box(tmp_path, "crib", dsn)
    server.stop()
    for x in (a, b):
        x.start()
    try:
        written = {"yard": a.log(10_000, undo_every=7), "crib": b.log(5)}
        assert wait_for(lambda: site_status(a.store())["state"] == "offline", HANG_S)
        st = site_status(a.store())
        assert st["waiting"] == 10_000 and format_site(st)[0].endswith("10000 records waiting")
        server.start()  # the boxes reconnect by themselves
        assert wait_for(lambda: converged(dsn, [a, b]), HANG_S)
        check_site(dsn, [a, b], written)
        assert wait_for(lambda: site_status(a.store())["state"] == "online", HANG_S) and waiting(a.store()) == 0
    finally:
        for x in (a, b):
            x.stop()


def test_the_server_killed_mid_push_loses_and_doubles_nothing(server: PgServer, dsn: str, tmp_path: Path) -> None:
    a, b = Box(tmp_path, "goods-in", dsn, batch=20), Box(tmp_path, "line", dsn, batch=20)
    written = {"goods-in": a.log(3000, undo_every=9)}
    a.start()
    try:
        assert wait_for(lambda: on_server(dsn) > 0, HANG_S, step_s=0.005)
        server.kill()  # a crash: no checkpoint, recovery at the next start
        with a.store() as s:
            assert waiting(s) > 0  # the kill landed in the middle of the push
        written["goods-in"] = a.log(20)  # the box keeps logging meanwhile
        server.start()
        b.start()
        assert wait_for(lambda: converged(dsn, [a, b]), HANG_S)
        check_site(dsn, [a, b], written)
    finally:
        for x in (a, b):
            x.stop()


@pytest.mark.parametrize("fault", ["stall", "drop"])
def test_a_network_cut_mid_push_is_survived(server: PgServer, dsn: str, tmp_path: Path, fault: str) -> None:
    proxy = Proxy(server.port)  # box a reaches the server through it, box b directly
    a = Box(tmp_path, "goods-in", dsn.replace(f"port={server.port}", f"port={proxy.port}"), batch=20,
            io_timeout_s=1.0, connect_timeout_s=1)
    b = Box(tmp_path, "line", dsn)
    try:
        written = {"goods-in": a.log(1500, undo_every=6)}
        a.start()
        b.start()
        assert wait_for(lambda: on_server(dsn) > 0, HANG_S, step_s=0.005)
        proxy.set(fault)
        with a.store() as s:
            assert waiting(s) > 0  # cut in the middle of the push
        assert wait_for(lambda: site_status(a.store())["state"] == "offline", HANG_S)
        written["goods-in"] = a.log(50)
        written["line"] = b.log(30)
        proxy.set("pass")
        assert wait_for(lambda: converged(dsn, [a, b]), HANG_S)
        check_site(dsn, [a, b], written)
        assert wait_for(lambda: site_status(a.store())["state"] == "online", HANG_S)
    finally:
        for x in (a, b):
            x.stop()
        proxy.close()


def test_a_box_clock_two_hours_off_changes_nothing(dsn: str, tmp_path: Path) -> None:
    a = Box(tmp_path, "goods-in", dsn)
    b = Box(tmp_path, "line", dsn, clock=lambda: datetime.now(timezone.utc) - timedelta(hours=2))
    written = {}
    for _ in range(3):
        written = {"goods-in": a.log(7, undo_every=3), "line": b.log(7, undo_every=3)}
        for x in (a, b):
            assert x.sync_once().returncode == 0
    assert a.sync_once().returncode == 0
    check_site(dsn, [a, b], written)
    with b.store() as s:  # the line's records are two hours "older", yet in their own order
        line = s.movements("line")
        assert [m.seq for m in line] == list(range(1, len(line) + 1))
        assert max(m.time for m in line) < min(m.time for m in s.movements("goods-in"))
        before = {i.sku: i.quantity for i in s.items()}
        undone, item = s.undo("undo", "late-undo")  # the line's own last record, whatever the clocks say
        mine = [m for m in line if m.undoes is None and m.gid not in {u.undoes for u in line}]
        assert s.movements("line")[-1].undoes == mine[-1].gid
        assert item.quantity == before[item.sku] - mine[-1].delta


def test_a_box_killed_mid_push_resumes_without_doubles(dsn: str, tmp_path: Path) -> None:
    a, b = Box(tmp_path, "goods-in", dsn, batch=10), Box(tmp_path, "crib", dsn)
    written = {"goods-in": a.log(2000, undo_every=5)}
    a.start()
    try:
        assert wait_for(lambda: on_server(dsn) > 0, HANG_S, step_s=0.005)
        a.stop(signal.SIGKILL)
        assert 0 < on_server(dsn) < 2000  # killed in the middle of its push
        written["goods-in"] = a.log(10)
        a.start()
        b.start()
        assert wait_for(lambda: converged(dsn, [a, b]), HANG_S)
        check_site(dsn, [a, b], written)
    finally:
        for x in (a, b):
            x.stop()


def test_a_box_killed_mid_pull_resumes_without_doubles(dsn: str, tmp_path: Path) -> None:
    a, b = Box(tmp_path, "goods-in", dsn), Box(tmp_path, "crib", dsn, batch=10)
    written = {"goods-in": a.log(2000, undo_every=5), "crib": b.log(30)}
    assert a.sync_once().returncode == 0
    b.start()
    try:
        assert wait_for(lambda: len(b.store().movements("goods-in")) > 0, HANG_S, step_s=0.005)
        b.stop(signal.SIGKILL)
        with b.store() as s:  # the store is whole: every applied batch complete, quantities match
            held = s.movements("goods-in")
            assert 0 < len(held) < 2000 and [m.seq for m in held] == list(range(1, len(held) + 1))
        b.start()
        assert wait_for(lambda: converged(dsn, [b]), HANG_S)
        assert a.sync_once().returncode == 0  # a (no sync loop here) pulls the crib's records
        check_site(dsn, [a, b], written)
    finally:
        b.stop()


def test_two_boxes_taking_the_last_items_are_both_recorded_and_flagged(dsn: str, tmp_path: Path) -> None:
    a, b = Box(tmp_path, "goods-in", dsn), Box(tmp_path, "line", dsn)
    with a.store() as s:
        have = s.get("SPN-10").quantity
    for x in (a, b):  # both boxes see `have` spanners and take them all before either syncs
        with x.store() as s:
            s.log("SPN-10", -have, f"take {have} spanners", f"{x.name}-last")
    for x in (a, b, a):
        assert x.sync_once().returncode == 0
    check_site(dsn, [a, b], {})
    for x in (a, b):
        with x.store() as s:
            item = s.get("SPN-10")
            assert item.quantity == -have
            assert query_reply(item) == f"The records say -{have} 10 mm spanners on shelf E; please count them."
            st = site_status(s)
            assert st["negative"] == [{"sku": "SPN-10", "item": item.item, "location": item.location,
                                       "quantity": -have}]
            assert any(f"the records say -{have}; please count them" in line for line in format_site(st))
    # and on /metrics of the box's API (read from the store at every scrape)
    engine = EngineChain([StepSpec("grammar")]).start()
    api = ServerThread(create_app(engine, ApiSettings(), site_store=a.db), "127.0.0.1", 0).start()
    try:
        text = httpx.get(f"{api.url}/metrics", timeout=HANG_S).text
    finally:
        api.stop()
        engine.close()
    got = {(x.name, tuple(sorted(x.labels.items()))): x.value
           for f in text_string_to_metric_families(text) for x in f.samples}
    assert got[("edge_stock_negative_items", ())] == 1.0
    assert got[("edge_stock_negative", (("location", "shelf E"), ("sku", "SPN-10")))] == -have
    assert got[("edge_site_online", ())] == 1.0 and got[("edge_site_records_waiting", ())] == 0.0
    assert got[("edge_site_records", (("box", "line"),))] == 1.0


def test_sync_refuses_a_store_of_another_box_and_a_shared_box_id(dsn: str, tmp_path: Path) -> None:
    a = Box(tmp_path, "crib", dsn)
    a.log(3)
    assert a.sync_once().returncode == 0
    twin = Box(tmp_path / "twin", "crib", dsn)  # a second box configured with the same site.box
    twin.log(1)
    r = twin.sync_once()
    assert r.returncode == 2 and "site sync stopped: another box uses the id crib" in r.stderr
    with Store(tmp_path / "other.db", box="line") as s, pytest.raises(SiteError, match="belongs to box 'line'"):
        SiteSync(s, a.settings())
    with pytest.raises(SiteOffline, match="site.dsn"):
        connect(a.settings().model_copy(update={"dsn": f"host=127.0.0.1 port={pgserver.free_port()} dbname=x"}))


def test_a_lost_store_is_restored_by_resync_and_status_shows_each_box(dsn: str, tmp_path: Path) -> None:
    a, b = Box(tmp_path, "crib", dsn), Box(tmp_path, "line", dsn)
    written = {"crib": a.log(40, undo_every=6), "line": b.log(12)}
    for x in (a, b, a):
        assert x.sync_once().returncode == 0
    for p in a.db.parent.glob("edge.db*"):  # the crib's SD card dies: a new store, the same CSV
        p.unlink()
    with a.store() as s:
        s.import_csv(INVENTORY)
    r = a.sync_once()
    # a new store file is another install of the box id: stopped, and resync is the fix for a lost store
    assert r.returncode == 2 and "another box uses the id crib" in r.stderr and "edge site resync' here" in r.stderr
    r = subprocess.run([sys.executable, "-m", "edge.cli", "site", "resync", "--json", "--config", str(a.config)],
                       cwd=REPO, capture_output=True, text=True, timeout=HANG_S)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"restored": 40, "pushed": 0, "pulled": 12, "site_lacks": 0}
    written["crib"] = a.log(5)  # the sequence carries on after the restored records
    with a.store() as s:
        assert [m.seq for m in s.movements("crib")] == list(range(1, 46))
    for x in (a, b):
        assert x.sync_once().returncode == 0
    check_site(dsn, [a, b], written)
    r = subprocess.run([sys.executable, "-m", "edge.cli", "site", "status", "--json", "--config", str(b.config)],
                       cwd=REPO, capture_output=True, text=True, timeout=HANG_S)
    st = json.loads(r.stdout)
    assert st["state"] == "online" and st["waiting"] == 0 and st["boxes"] == {"crib": 45, "line": 12}
    assert {k: (v["seq"], v["lag"]) for k, v in st["server"].items()} == {"crib": (45, 0), "line": (12, 0)}
    # a replaced store that was used before resync is refused, nothing changed
    for p in b.db.parent.glob("edge.db*"):
        p.unlink()
    with b.store() as s:
        s.import_csv(INVENTORY)
        s.log("FUS-5A", 1, "add a fuse", "after-loss")
        before = s.movements()
    r = subprocess.run([sys.executable, "-m", "edge.cli", "site", "resync", "--config", str(b.config)],
                       cwd=REPO, capture_output=True, text=True, timeout=HANG_S)
    assert r.returncode == 2 and "are not the site's" in r.stderr and "fix: move the store file" in r.stderr
    with b.store() as s:
        assert s.movements() == before


def test_a_sku_one_box_lacks_is_kept_aside_and_the_rest_of_that_box_arrives(dsn: str, tmp_path: Path) -> None:
    wider = tmp_path / "inventory-plus.csv"  # the tool crib has one more item than the others
    # only the new row: importing the whole CSV again would be a stock count of every item
    wider.write_text("sku,item,location,quantity,unit,aliases\nWDG-1,widget,bin 99,5,pcs,widgets\n", encoding="utf-8")
    a, b, c = Box(tmp_path, "goods-in", dsn), Box(tmp_path, "line", dsn), Box(tmp_path, "crib", dsn)
    with c.store() as s:
        s.import_csv(wider)
        s.log("WDG-1", -2, "take two widgets", "w1")
    written = {"crib": c.log(3), "line": b.log(4), "goods-in": a.log(2)}
    for x in (b, c):
        assert x.sync_once().returncode == 0
    kept = "'WDG-1' kept aside"
    a.start()
    try:
        # the crib's other records arrive; the widget's is kept, and the status says so and how to fix it
        # the state is written after the round that moved the records: wait for both
        assert wait_for(lambda: len(a.store().movements("line")) == 4 and len(a.store().movements("crib")) == 3
                        and site_status(a.store())["state"] == "online", HANG_S)
        st = site_status(a.store())
        assert st["state"] == "online" and st["kept_aside"] == [{"sku": "WDG-1", "box": "crib", "records": 1}]
        assert any(kept in line and "fix: add the item" in line for line in format_site(st))
        assert wait_for(lambda: any(kept in line for line in a.errors), HANG_S)  # told in the log
        with a.store() as s:
            s.import_csv(wider)
            assert len(s.movements("crib")) == 4 and s.get("WDG-1").quantity == 3 and s.kept_aside() == []
        written["goods-in"] = a.log(1)
        assert wait_for(lambda: converged(dsn, [a]), HANG_S)
    finally:
        a.stop()
    assert sum(kept in line for line in a.errors) == 1  # once, not every round
    with b.store() as s:  # the line adds the item too (the crib must not: for it the row is a stock count)
        s.import_csv(wider)
    for x in (b, c, a):
        assert x.sync_once().returncode == 0
    check_site(dsn, [a, b, c], written, extra_items={"WDG-1": 5})


def test_the_sync_loop_survives_a_store_locked_past_its_busy_timeout(dsn: str, tmp_path: Path) -> None:
    a, b = Box(tmp_path, "crib", dsn), Box(tmp_path, "line", dsn)
    lock = sqlite3.connect(a.db, isolation_level=None)
    try:
        try:
            lock.execute("BEGIN IMMEDIATE")  # another writer holds the crib's store for a long time ...
            a.start()  # ... from before its sync starts: opening the store needs no write lock
            written = {"line": b.log(3)}
            assert b.sync_once().returncode == 0  # NOTIFY: the crib's sync tries to add them and must wait
            assert wait_for(lambda: any("database is locked" in line for line in a.errors), HANG_S)
            assert a.proc.poll() is None  # reported, not fatal
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        written["crib"] = a.log(2)
        assert wait_for(lambda: converged(dsn, [a]), HANG_S)
        assert b.sync_once().returncode == 0  # the line (no sync loop here) pulls the crib's records
        check_site(dsn, [a, b], written)
    finally:
        a.stop()


def test_a_password_login_reads_the_password_file(dsn: str, tmp_path: Path) -> None:
    role = pgserver.PASSWORD_ROLE
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'db-s3cret'")
        c.execute(f"GRANT SELECT, INSERT ON edge_movements, edge_site_schema TO {role}")
    pw = tmp_path / "site-db-password"
    pw.write_text("db-s3cret\n")
    pw.chmod(0o600)
    a = Box(tmp_path, "crib", dsn.replace("user=edge", f"user={role}"), password_file=str(pw))
    gids = a.log(3)
    r = a.sync_once()  # a user without the table of box ids is told the grant
    assert r.returncode == 2 and f"GRANT SELECT, INSERT, DELETE ON edge_boxes TO {role}" in r.stderr, r.stderr
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"GRANT SELECT, INSERT, DELETE ON edge_boxes TO {role}")
    r = a.sync_once()
    assert r.returncode == 0, r.stderr
    assert {m.gid for m in server_history(dsn)} == set(gids)
    pw.write_text("wrong\n")
    r = a.sync_once()
    assert r.returncode == 2 and "site.dsn: cannot reach the site database" in r.stderr
    assert "password authentication failed" in r.stderr and "site.password_file" in r.stderr
