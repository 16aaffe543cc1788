"""Site events over MQTT (edge.site.mqtt) with paho-mqtt against a real Mosquitto started by the test
(tests/mqttbroker.py) and a real PostgreSQL (tests/pgserver.py); each box syncs in its own
``edge site sync`` process."""
from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from edge.config import load_settings
from edge.site.mqtt import MqttEvents, stock_state
from edge.site.status import format_site, site_status
from edge.stock.store import Store
from tests import mqttbroker, pgserver
from tests.helpers import INVENTORY
from tests.mqttbroker import Broker
from tests.pgserver import wait_for
from tests.site_helpers import HANG_S, Box, check_site, converged, new_site_db, run_server, server_history

server = pytest.fixture(scope="module")(run_server)
dsn = pytest.fixture(new_site_db)

pytestmark = [
    pytest.mark.skipif(not pgserver.available(), reason="PostgreSQL 15 not installed (apt-get install postgresql)"),
    pytest.mark.skipif(not mqttbroker.available(), reason="mosquitto not installed (apt-get install mosquitto)"),
    pytest.mark.skipif(not INVENTORY.is_file(), reason=f"missing {INVENTORY}"),
]


class Listener:
    """A subscriber to ``topics``; keeps every message as (topic, payload text, retained flag)."""

    def __init__(self, port: int, topics: tuple[str, ...] = ("edge/#", "homeassistant/#"),
                 user: tuple[str, str] | None = None) -> None:
        self.messages: list[tuple[str, str, bool]] = []
        self._lock = threading.Lock()
        self.ready = threading.Event()
        c = paho.Client(CallbackAPIVersion.VERSION2)
        if user:
            c.username_pw_set(*user)
        c.on_connect = lambda cl, *_: [cl.subscribe(t, qos=1) for t in topics]
        c.on_subscribe = lambda *_: self.ready.set()
        c.on_message = self._on_message
        c.connect("127.0.0.1", port, keepalive=30)
        c.loop_start()
        self.client = c
        assert self.ready.wait(HANG_S)

    def _on_message(self, client, userdata, msg) -> None:
        with self._lock:
            self.messages.append((msg.topic, msg.payload.decode("utf-8"), bool(msg.retain)))

    def on(self, topic: str) -> list[str]:
        with self._lock:
            return [p for t, p, _ in self.messages if t == topic]

    def latest(self, topic: str) -> str | None:
        got = self.on(topic)
        return got[-1] if got else None

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def broker():
    b = Broker()
    yield b
    b.stop()


def _movement_gids(sub: Listener, box: str) -> dict[str, dict]:
    """The movement messages of ``box``, de-duplicated by gid (QoS 1 may deliver twice)."""
    return {m["gid"]: m for m in map(json.loads, sub.on(f"edge/site/{box}/movement"))}


def test_movements_stock_alerts_discovery_and_last_will(dsn: str, broker: Broker, tmp_path: Path) -> None:
    mqtt = {"host": "127.0.0.1", "port": broker.port, "keepalive_s": 5, "discovery": True, "low_stock_at": 5}
    a, b = Box(tmp_path, "goods-in", dsn, mqtt=mqtt), Box(tmp_path, "line", dsn, mqtt=mqtt)
    sub = Listener(broker.port)
    a.start()
    b.start()
    try:
        assert wait_for(lambda: sub.latest("edge/site/goods-in/status") == "online"
                        and sub.latest("edge/site/line/status") == "online", HANG_S)
        written = {"goods-in": a.log(20, undo_every=4), "line": b.log(8)}
        assert wait_for(lambda: converged(dsn, [a, b]), HANG_S)
        check_site(dsn, [a, b], written)
        history = {m.gid: m for m in server_history(dsn)}
        for box, gids in written.items():  # one message per record, the same fields as the site holds
            assert wait_for(lambda box=box, gids=gids: set(_movement_gids(sub, box)) == set(gids), HANG_S)
            for gid, msg in _movement_gids(sub, box).items():
                m = history[gid]
                assert msg == {"gid": m.gid, "box": m.box, "seq": m.seq, "time": m.time, "sku": m.sku,
                               "delta": m.delta, "utterance": m.utterance, "turn_id": m.turn_id, "undoes": m.undoes,
                               "location": m.location, "kind": m.kind, "counted": m.counted, "op": m.op}

        # negative stock: both boxes' records stand, the alert goes out, the retained state says so
        with a.store() as s:
            have = s.get("SPN-10").quantity
            s.log("SPN-10", -(have + 3), "take the spanners", "neg-1")
        assert wait_for(lambda: any(json.loads(p)["sku"] == "SPN-10" and json.loads(p)["quantity"] == -3
                                    for p in sub.on("edge/site/line/alert")), HANG_S)
        alert = json.loads(sub.latest("edge/site/goods-in/alert"))
        assert alert == {"kind": "negative_stock", "sku": "SPN-10", "location": alert["location"], "quantity": -3,
                         "text": "the records say -3; please count them"}
        assert wait_for(lambda: converged(dsn, [a, b]), HANG_S)

        # a late subscriber gets every SKU's state as each box sees it, and the discovery configs, retained
        late = Listener(broker.port)
        try:
            for x in (a, b):
                with x.store() as s:
                    items = s.items()
                for item in items:
                    topic = f"edge/site/{x.name}/stock/{item.sku}"
                    assert wait_for(lambda t=topic, i=item: late.latest(t) is not None
                                    and json.loads(late.latest(t)) == stock_state(i), HANG_S), topic
            node = "edge_site_line"
            configs = (f"homeassistant/sensor/{node}/SPN-10/config", f"homeassistant/binary_sensor/{node}/SPN-10_low/config")
            # retained messages of different topics arrive in no set order: wait for the configs too
            assert wait_for(lambda: all(late.latest(t) is not None for t in configs), HANG_S), configs
            sensor = json.loads(late.latest(configs[0]))
            assert sensor["state_topic"] == "edge/site/line/stock/SPN-10" and sensor["unique_id"] == f"{node}_SPN-10_stock"
            assert sensor["availability_topic"] == "edge/site/line/status"
            low = json.loads(late.latest(configs[1]))
            assert low["value_template"] == "{{ 'ON' if value_json.low or value_json.quantity <= 5 else 'OFF' }}"
            assert all(retained for t, _, retained in late.messages if "/stock/" in t or t.endswith("/config"))
        finally:
            late.close()

        # the line's sync killed: the broker says offline for it (the last will); a clean stop says it too
        b.stop(signal.SIGKILL)
        assert wait_for(lambda: sub.latest("edge/site/line/status") == "offline", HANG_S)
        a.stop()
        assert wait_for(lambda: sub.latest("edge/site/goods-in/status") == "offline", HANG_S)
    finally:
        for x in (a, b):
            x.stop()
        sub.close()


def test_a_broker_with_a_password(dsn: str, tmp_path: Path) -> None:
    broker = Broker(user=("edge-box", "broker-s3cret"))
    try:
        pw = tmp_path / "mqtt-password"
        pw.write_text("broker-s3cret\n")
        pw.chmod(0o600)
        mqtt = {"host": "127.0.0.1", "port": broker.port, "username": "edge-box", "password_file": str(pw)}
        a = Box(tmp_path, "crib", dsn, mqtt=mqtt)
        sub = Listener(broker.port, user=("edge-box", "broker-s3cret"))
        try:
            gids = a.log(3)
            r = a.sync_once()
            assert r.returncode == 0, r.stderr
            assert wait_for(lambda: set(_movement_gids(sub, "crib")) == set(gids), HANG_S)
            pw.chmod(0o644)
            r = a.sync_once()
            assert r.returncode == 2 and "site.mqtt.password_file" in r.stderr and "chmod 600" in r.stderr
        finally:
            sub.close()
    finally:
        broker.stop()


def test_a_broker_that_refuses_the_box_is_shown_in_the_status_and_told_once(tmp_path: Path) -> None:
    broker = Broker(user=("edge-box", "broker-s3cret"))
    pw = tmp_path / "mqtt-password"
    pw.write_text("not-the-password\n")
    pw.chmod(0o600)
    site = load_settings(overrides={"site": {"box": "crib", "dsn": "host=x", "mqtt": {
        "host": "127.0.0.1", "port": broker.port, "username": "edge-box", "password_file": str(pw)}}}).site
    told: list = []
    try:
        with Store(tmp_path / "edge.db", box="crib") as store:
            store.import_csv(INVENTORY)
            assert site_status(store)["mqtt"] is None  # no broker used yet
            events = MqttEvents(store, site, on_error=told.append)
            try:
                assert wait_for(lambda: store.meta("mqtt_state") == "refused", HANG_S)
                # paho keeps retrying: wait for a second refusal at the broker; the reason is told once
                assert wait_for(lambda: (broker.root / "broker.log").read_text().count("not authorised") >= 2, HANG_S)
                assert len(told) == 1 and "refused this box: Not authorized (user 'edge-box')" in str(told[0])
                st = site_status(store)
                assert st["mqtt"] == {"state": "refused", "error": str(told[0])}
                assert any(line.startswith("  MQTT refused: ") and "fix: set site.mqtt.username" in line
                           for line in format_site(st))
                assert not events.connected.is_set()
            finally:
                events.close()
            pw.write_text("broker-s3cret\n")  # the right password: connected, the error gone
            events = MqttEvents(store, site, on_error=told.append)
            try:
                assert events.connected.wait(HANG_S)
                assert site_status(store)["mqtt"] == {"state": "connected", "error": None}
                assert not any("MQTT" in line for line in format_site(site_status(store))) and len(told) == 1
            finally:
                events.close()
    finally:
        broker.stop()
