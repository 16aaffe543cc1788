"""TLS to the site server, for real: a throw-away CA and a server certificate for 127.0.0.1 and
localhost made with the ``openssl`` command-line tool, a PostgreSQL 15 (tests/pgserver.py) that
accepts TCP only over TLS (``ssl = on``, ``hostssl`` lines alone) and a Mosquitto
(tests/mqttbroker.py) whose one listener speaks TLS only; one of each for the module."""
from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from edge.config import ConfigError, load_settings
from edge.site.mqtt import MqttEvents
from edge.site.server import SiteError, SiteOffline, connect
from edge.site.status import format_site, site_status
from edge.stock.store import Store
from tests import mqttbroker, pgserver
from tests.helpers import INVENTORY
from tests.mqttbroker import Broker
from tests.pgserver import PgServer, wait_for
from tests.site_helpers import HANG_S, Box, check_site, new_site_db

OPENSSL = shutil.which("openssl")

pytestmark = [
    pytest.mark.skipif(not pgserver.available(), reason="PostgreSQL 15 not installed (apt-get install postgresql)"),
    pytest.mark.skipif(not mqttbroker.available(), reason="mosquitto not installed (apt-get install mosquitto)"),
    pytest.mark.skipif(OPENSSL is None, reason="openssl not installed (apt-get install openssl)"),
    pytest.mark.skipif(not INVENTORY.is_file(), reason=f"missing {INVENTORY}"),
]


def _openssl(*args: object) -> None:
    subprocess.run([OPENSSL, *map(str, args)], check=True, capture_output=True, timeout=60)


def _ca(d: Path, name: str) -> tuple[Path, Path]:
    """A self-signed CA (P-256, one day): (certificate, key)."""
    cert, key = d / f"{name}.pem", d / f"{name}.key"
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
             "-out", cert, "-days", "1", "-subj", f"/CN={name}")
    return cert, key


def _issued(d: Path, name: str, ca: tuple[Path, Path], alt: str) -> tuple[Path, Path]:
    """A certificate signed by ``ca`` for the subjectAltName ``alt``: (certificate, key mode 600)."""
    cert, key, csr, ext = d / f"{name}.pem", d / f"{name}.key", d / f"{name}.csr", d / f"{name}.ext"
    ext.write_text(f"subjectAltName={alt}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                   "extendedKeyUsage=serverAuth,clientAuth\nsubjectKeyIdentifier=hash\n"
                   "authorityKeyIdentifier=keyid,issuer\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
             "-out", csr, "-subj", f"/CN={name}")
    _openssl("x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1], "-CAcreateserial", "-out", cert,
             "-days", "1", "-extfile", ext)
    key.chmod(0o600)
    return cert, key


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("pki")
    ca = _ca(d, "site-ca")
    wrong = _ca(d, "other-ca")
    server = _issued(d, "server", ca, "DNS:localhost,IP:127.0.0.1")
    client = _issued(d, "goods-in", ca, "DNS:goods-in")
    return {"ca": ca[0], "wrong_ca": wrong[0], "cert": server[0], "key": server[1],
            "client_cert": client[0], "client_key": client[1]}


@pytest.fixture(scope="module")
def server(pki):
    pg = PgServer(tls=(pki["cert"], pki["key"]))
    pg.start()
    yield pg
    pg.destroy()


@pytest.fixture(scope="module")
def broker(pki):
    b = Broker(tls=(pki["ca"], pki["cert"], pki["key"]))
    yield b
    b.stop()


@pytest.fixture
def dsn(server: PgServer) -> str:
    """A fresh site database on the TLS server (made over TLS: pg_hba.conf has only hostssl lines)."""
    return new_site_db(server)


def _verified(dsn: str, ca: Path) -> str:
    return f"{dsn} sslmode=verify-full sslrootcert={ca}"


def test_two_boxes_sync_over_verified_tls(dsn: str, pki, tmp_path: Path, monkeypatch) -> None:
    creds = tmp_path / "creds"  # box b finds its CA as a systemd credential, by a relative name
    creds.mkdir()
    shutil.copyfile(pki["ca"], creds / "site-ca.pem")
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(creds))
    a = Box(tmp_path, "goods-in", _verified(dsn, pki["ca"]))
    b = Box(tmp_path, "crib", f"{dsn.replace('127.0.0.1', 'localhost')} sslmode=verify-full sslrootcert=site-ca.pem")
    written = {"goods-in": a.log(3)}
    for box in (a, b):
        r = box.sync_once()
        assert r.returncode == 0, r.stderr
    assert json.loads(b.sync_once().stdout)["state"] == "online"
    with b.store() as s:
        assert {m.gid for m in s.movements("goods-in")} == set(written["goods-in"])
    check_site(_verified(dsn, pki["ca"]), [a, b], written)
    with connect(b.settings()) as c:  # the connection really is TLS
        ssl, version = c.execute("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone()
    assert ssl and version.startswith("TLSv1.")


def test_a_wrong_ca_is_refused_by_name_and_the_box_keeps_working(dsn: str, pki, tmp_path: Path) -> None:
    box = Box(tmp_path, "goods-in", _verified(dsn, pki["wrong_ca"]))
    box.log(4)
    r = box.sync_once()
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert (f"site.dsn: the site database at host 127.0.0.1 port {dsn.split('port=')[1].split()[0]} failed the "
            f"TLS check (sslmode=verify-full): its certificate is not signed by the CA in "
            f"sslrootcert={pki['wrong_ca']}") in r.stderr
    assert "fix:" in r.stderr and "keeps working offline" in r.stderr
    with box.store() as s:  # offline, still logging, and it says why
        st = site_status(s)
        assert st["state"] == "offline" and st["waiting"] == 4 and "TLS check" in st["error"]
        s.log("FUS-5A", 1, "add a fuse", "later")
        assert st["waiting"] + 1 == site_status(s)["waiting"]
    box.config.write_text(box.config.read_text().replace(str(pki["wrong_ca"]), str(pki["ca"])))  # the right CA: it catches up
    assert box.sync_once().returncode == 0
    with box.store() as s:
        assert site_status(s)["waiting"] == 0 and site_status(s)["state"] == "online"


def test_a_wrong_host_name_and_plain_text_are_refused(dsn: str, pki) -> None:
    site = load_settings(overrides={"site": {"box": "a", "dsn": "host=x"}}).site
    wrong_name = site.model_copy(update={"dsn": _verified(dsn.replace("host=127.0.0.1", "host=edge-site.invalid "
                                                                      "hostaddr=127.0.0.1"), pki["ca"])})
    with pytest.raises(SiteOffline, match=r"host edge-site.invalid .* failed the TLS check \(sslmode=verify-full\): "
                                          r"its certificate is not for host edge-site.invalid .*fix: set host="):
        connect(wrong_name).close()
    plain = site.model_copy(update={"dsn": f"{dsn} sslmode=disable"})
    with pytest.raises(SiteOffline, match=r"host 127.0.0.1 .* refuses connections without TLS .*fix: add "
                                          r"sslmode=verify-full"):
        connect(plain).close()


def test_tls_files_are_checked_like_the_password_file(pki, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path))
    site = load_settings(overrides={"site": {"box": "a", "dsn": "host=127.0.0.1 sslmode=verify-full "
                                             "sslrootcert=missing-ca.pem"}}).site
    with pytest.raises(SiteError, match=rf"site.dsn sslrootcert: cannot read {tmp_path}/missing-ca.pem: .*"
                                        r"\$CREDENTIALS_DIRECTORY.*fix: put the site server's CA certificate"):
        connect(site)
    key = tmp_path / "box.key"
    shutil.copyfile(pki["client_key"], key)
    key.chmod(0o644)
    with_key = site.model_copy(update={"dsn": f"host=127.0.0.1 sslcert={pki['client_cert']} sslkey=box.key"})
    with pytest.raises(SiteError, match=rf"site.dsn sslkey: {key} may be read by others .*fix: chmod 600 {key}"):
        connect(with_key)
    mqtt = load_settings(overrides={"site": {"box": "a", "dsn": "host=x", "mqtt": {
        "host": "127.0.0.1", "tls_ca_file": str(pki["ca"]), "tls_cert_file": str(pki["client_cert"]),
        "tls_key_file": "box.key"}}}).site
    with Store(tmp_path / "e.db", box="a") as store, \
            pytest.raises(SiteError, match=rf"site.mqtt.tls_key_file: {key} may be read by others .*fix: chmod 600"):
        MqttEvents(store, mqtt)
    # the settings: TLS follows the CA file, the port follows TLS, a lone key is refused
    def m(**kw):
        return load_settings(overrides={"site": {"box": "a", "dsn": "host=x", "mqtt": {"host": "h", **kw}}}).site.mqtt
    assert (m().tls, m().port) == (False, 1883)
    assert (m(tls=True).tls, m(tls=True).port, m(tls_ca_file="ca.pem").port, m(tls=True, port=8884).port) == \
        (True, 8883, 8883, 8884)
    with pytest.raises(ConfigError, match="tls_cert_file and tls_key_file go together"):
        m(tls_key_file="k.pem")
    with pytest.raises(ConfigError, match="site.mqtt.tls is false but tls_ca_file is set"):
        m(tls=False, tls_ca_file="ca.pem")


class TlsListener:
    """A subscriber to ``edge/#`` over TLS verified with ``ca``; keeps (topic, payload) pairs."""

    def __init__(self, port: int, ca: Path) -> None:
        self.messages: list[tuple[str, str]] = []
        self.ready = threading.Event()
        c = paho.Client(CallbackAPIVersion.VERSION2)
        c.tls_set(ca_certs=str(ca))
        c.on_connect = lambda cl, *_: cl.subscribe("edge/#", qos=1)
        c.on_subscribe = lambda *_: self.ready.set()
        c.on_message = lambda cl, u, msg: self.messages.append((msg.topic, msg.payload.decode("utf-8")))
        c.connect("127.0.0.1", port, keepalive=30)
        c.loop_start()
        self.client = c
        assert self.ready.wait(HANG_S)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_mqtt_over_tls_delivers_the_movement(dsn: str, pki, broker: Broker, tmp_path: Path) -> None:
    sub = TlsListener(broker.port, pki["ca"])
    try:
        box = Box(tmp_path, "goods-in", _verified(dsn, pki["ca"]),
                  mqtt={"host": "127.0.0.1", "port": broker.port, "tls_ca_file": str(pki["ca"])})
        gids = box.log(2)
        r = box.sync_once()
        assert r.returncode == 0, r.stderr
        assert wait_for(lambda: {json.loads(p)["gid"] for t, p in list(sub.messages)
                                 if t == "edge/site/goods-in/movement"} == set(gids), HANG_S)
        assert ("edge/site/goods-in/status", "online") in sub.messages
    finally:
        sub.close()


def test_a_broker_failing_the_tls_check_or_wanting_tls_is_shown_in_the_status(pki, broker: Broker,
                                                                               tmp_path: Path) -> None:
    def mqtt(**tls):
        return load_settings(overrides={"site": {"box": "a", "dsn": "host=x", "mqtt": {
            "host": "127.0.0.1", "port": broker.port, **tls}}}).site
    for name, site, state, said in (
            ("wrong-ca", mqtt(tls_ca_file=str(pki["wrong_ca"])), "tls",
             "failed the TLS check: self-signed certificate in certificate chain; fix: set site.mqtt.tls_ca_file"),
            ("plain", mqtt(), "refused", "closed the connection before accepting this box")):
        told: list = []
        with Store(tmp_path / f"{name}.db", box="a") as store:
            events = MqttEvents(store, site, on_error=told.append)
            try:
                assert wait_for(lambda s=store, want=state: s.meta("mqtt_state") == want, HANG_S), name
                st = site_status(store)
                assert said in st["mqtt"]["error"] and "fix: " in st["mqtt"]["error"], st
                assert f"port {broker.port}" in st["mqtt"]["error"] and len(told) == 1
                assert any(line.startswith(f"  MQTT {state}: ") for line in format_site(st))
            finally:
                events.close()


def test_a_plain_text_client_is_refused_by_the_tls_listener(broker: Broker) -> None:
    connected, gone = threading.Event(), threading.Event()
    c = paho.Client(CallbackAPIVersion.VERSION2)
    c.on_connect = lambda *a: connected.set() if not a[3].is_failure else gone.set()
    c.on_disconnect = lambda *_: gone.set()
    c.reconnect_delay_set(min_delay=60, max_delay=60)  # one attempt is enough
    try:
        c.connect("127.0.0.1", broker.port, keepalive=30)  # TCP is accepted; MQTT in plain text is not
        c.loop_start()
        assert gone.wait(HANG_S)
        assert not connected.is_set()
    finally:
        c.disconnect()
        c.loop_stop()
