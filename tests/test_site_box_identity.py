"""One box id, one store file (edge.site.identity): two real boxes with the same ``site.box`` on a
real PostgreSQL (tests/pgserver.py), each synced by its own ``edge site sync`` process; the alert
over a real Mosquitto; what ``edge status``, the console and the voice say."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from edge.site.status import format_site, site_status
from edge.site.sync import waiting
from edge.stock.store import Store
from tests import mqttbroker, pgserver
from tests.helpers import INVENTORY, REPO, say_to_store
from tests.pgserver import wait_for
from tests.site_helpers import HANG_S, Box, new_site_db, on_server, run_server, server_history
from tests.test_console import Running, engine  # noqa: F401  (fixture)

server = pytest.fixture(scope="module")(run_server)
dsn = pytest.fixture(new_site_db)

pytestmark = [
    pytest.mark.skipif(not pgserver.available(), reason="PostgreSQL 15 not installed (apt-get install postgresql)"),
    pytest.mark.skipif(not INVENTORY.is_file(), reason=f"missing {INVENTORY}"),
]

STOPPED = "site sync stopped: another box uses the id goods-in"


def _clone(src: Box, root: Path, dsn: str, **site) -> Box:
    """A second box whose SD card is a copy of ``src``'s (its store file copied byte for byte)."""
    twin = Box(root, "goods-in", dsn, **site)
    for p in twin.db.parent.glob("edge.db*"):
        p.unlink()
    for p in src.db.parent.glob("edge.db*"):
        shutil.copyfile(p, twin.db.parent / p.name)
    return twin


def _state(box: Box) -> dict:
    with box.store() as s:
        return site_status(s)


def test_a_cloned_sd_card_stops_both_boxes_and_marks_nothing_sent(dsn: str, tmp_path: Path) -> None:
    a = Box(tmp_path / "a", "goods-in", dsn)
    a.log(2)
    assert a.sync_once().returncode == 0
    b = _clone(a, tmp_path / "b", dsn)
    a.log(1)  # record 3 of goods-in on box a
    assert a.sync_once().returncode == 0
    b.turns = iter(range(100, 200))
    mine = b.log(2)  # records 3 and 4 of goods-in on the clone: other gids
    r = b.sync_once()
    assert r.returncode == 2 and STOPPED in r.stderr and "record number 3 of goods-in is not this store's" in r.stderr
    gids = {m.gid for m in server_history(dsn)}
    assert not set(mine[2:]) & gids and on_server(dsn) == 3  # none of the clone's records went up...
    st = _state(b)
    assert st["waiting"] == 2 and st["state"] == "stopped"  # ...and none is said to have gone
    assert format_site(st)[0].startswith(STOPPED) and "2 records waiting" in format_site(st)[0]
    r = a.sync_once()  # the first box stops too: the clone took its own install id and registered it
    assert r.returncode == 2 and STOPPED in r.stderr, r.stderr
    assert _state(a)["state"] == "stopped"
    r = b.sync_once()  # and the clone stays stopped on a later start
    assert r.returncode == 2 and STOPPED in r.stderr


def test_a_second_store_file_with_the_id_stops_a_running_sync_and_is_refused_at_start(
        dsn: str, tmp_path: Path) -> None:
    a = Box(tmp_path / "a", "goods-in", dsn)
    written = a.log(3)
    a.start()
    try:
        assert wait_for(lambda: on_server(dsn) == 3, HANG_S)
        b = Box(tmp_path / "b", "goods-in", dsn)  # set up fresh, with the same site.box by mistake
        b.turns = iter(range(100, 200))
        b.log(1)
        r = b.sync_once()
        assert r.returncode == 2 and STOPPED in r.stderr
        assert a.proc.wait(timeout=HANG_S) == 2  # the running loop was woken and stopped, loudly
        assert wait_for(lambda: any(STOPPED in line for line in a.errors), HANG_S), a.errors
    finally:
        a.stop()
    assert [m.gid for m in server_history(dsn)] == written
    with b.store() as s:
        assert waiting(s) == 1
    r = subprocess.run([sys.executable, "-m", "edge.cli", "status", "--json", "--config", str(b.config)],
                       cwd=REPO, capture_output=True, text=True, timeout=HANG_S)
    st = json.loads(r.stdout)["site"]
    assert st["state"] == "stopped" and st["error"].startswith(STOPPED) and "edge site resync" in st["error"]
    # the fix: the second box gets its own id and a new store; the first claims its id again
    r = subprocess.run([sys.executable, "-m", "edge.cli", "site", "resync", "--json", "--config", str(a.config)],
                       cwd=REPO, capture_output=True, text=True, timeout=HANG_S)
    assert r.returncode == 0, r.stderr
    assert a.sync_once().returncode == 0 and _state(a)["state"] == "online"


def test_the_voice_and_the_console_say_the_sync_stopped(dsn: str, tmp_path: Path, engine) -> None:  # noqa: F811
    a = Box(tmp_path / "a", "goods-in", dsn)
    a.log(1)
    assert a.sync_once().returncode == 0
    b = Box(tmp_path / "b", "goods-in", dsn)
    assert b.sync_once().returncode == 2
    with Store(b.db, box="goods-in") as s:
        out = say_to_store(s, "how many fuses do we have")
        assert "Site sync stopped: another box uses the id goods-in; 0 records waiting." in out.text, out.text
        console = Running(engine)
        try:
            console.ctx.store = s
            page = httpx.get(console.url + "/console/status", timeout=HANG_S).text
        finally:
            console.stop()
    assert STOPPED in page


@pytest.mark.skipif(not mqttbroker.available(), reason="mosquitto not installed (apt-get install mosquitto)")
def test_the_stop_is_told_over_mqtt(dsn: str, tmp_path: Path) -> None:
    from tests.mqttbroker import Broker
    from tests.test_site_mqtt import Listener

    broker = Broker()
    try:
        mqtt = {"host": "127.0.0.1", "port": broker.port, "keepalive_s": 5}
        a = Box(tmp_path / "a", "goods-in", dsn, mqtt=mqtt)
        a.log(1)
        assert a.sync_once().returncode == 0
        sub = Listener(broker.port)
        try:
            b = Box(tmp_path / "b", "goods-in", dsn, mqtt=mqtt)
            assert b.sync_once().returncode == 2
            assert wait_for(lambda: sub.latest("edge/site/goods-in/alert") is not None, HANG_S)
            alert = json.loads(sub.latest("edge/site/goods-in/alert"))
            assert alert["kind"] == "sync_stopped" and alert["said"] == STOPPED and "fix:" in alert["text"]
        finally:
            sub.close()
    finally:
        broker.stop()
