"""Site events over MQTT (paho-mqtt; Mosquitto on the site server): live events and Home Assistant.

The database stays the truth; MQTT only tells. Topic tree, ``P = edge/<site>/<box>``:

``P/status``
    retained ``online`` / ``offline``; ``offline`` is also the last will, so the broker says it
    when the box vanishes (power cut, SIGKILL) within 1.5 × ``keepalive_s`` s.
``P/movement``
    one JSON message per record of this box once the site database holds it (QoS 1, not retained):
    ``{gid, box, seq, time, sku, delta, utterance, turn_id, undoes, location, kind, counted, op}``. QoS 1 means "at least
    once": consumers drop duplicates by ``gid``.
``P/stock/<sku>``
    retained JSON stock state as this box sees it: ``{sku, item, location, quantity, unit,
    negative, places, reorder_level, low}`` (``low``: why it is low, :func:`edge.stock.low.why`, or null), sent for every SKU at (re)connect and for each SKU a push or pull changed.
``P/alert``
    ``{kind: "negative_stock", sku, location, quantity, text}`` when a SKU's stock is below zero;
    ``{kind: "sync_stopped", box, said, text}`` when the site sync stopped (another box uses this box id).

With ``discovery: true`` each SKU also gets Home Assistant MQTT discovery configs (retained):
``<prefix>/sensor/edge_<site>_<box>/<sku>/config`` (the quantity) and
``<prefix>/binary_sensor/edge_<site>_<box>/<sku>_low/config`` (on when the stock message's ``low``
says why the item is low, :mod:`edge.stock.low`'s rule, or at or below ``low_stock_at`` when set).

The connection's state is kept in the store's ``meta`` table (``mqtt_state``: one of
:data:`MQTT_STATES`, ``mqtt_error``: why, with the fix), written when it changes, so
``edge site status`` and ``edge status`` show a broker that refuses the box (its credentials, its
TLS handshake) while paho keeps retrying; each new reason is also told once to ``on_error``.
"""
from __future__ import annotations

import json
import re
import ssl
import sys
import threading
from typing import TYPE_CHECKING, Callable

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

from edge.site.server import SiteError, credential_file, read_password
from edge.stock import low
from edge.stock.store import StoreError

if TYPE_CHECKING:
    from edge.config import MqttSettings, SiteSettings
    from edge.stock.store import Item, Movement, Store

__all__ = ["MqttEvents", "topic_prefix", "stock_state", "discovery_configs", "MQTT_STATES", "connect_failure",
           "refusal"]

#: ``mqtt_state`` values: accepted by the broker; refused by it (credentials, client id, or the
#: connection closed before it answered); the TLS check or handshake failed; not reachable at all.
MQTT_STATES = ("connected", "refused", "tls", "unreachable")


def topic_prefix(site: SiteSettings) -> str:
    """``edge/<site>/<box>``: the root of this box's topics."""
    return f"edge/{site.name}/{site.box}"


def _slug(sku: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", sku)


def stock_state(item: Item) -> dict:
    """The retained stock message for ``item`` (quantities in the item's unit; ``places``:
    ``{place: quantity}`` per place, ``location`` the first)."""
    return {"sku": item.sku, "item": item.item, "location": item.location, "quantity": item.quantity,
            "unit": item.unit, "negative": item.quantity < 0, "places": dict(item.places()),
            "reorder_level": item.reorder_level, "low": low.why(item)}


def low_template(low_stock_at: int) -> str:
    """The low-stock binary sensor's template: on when the stock message's ``low`` says why
    (:func:`edge.stock.low.why`, the rule the voice, ``edge status`` and the console use), and with
    ``low_stock_at`` above 0 also at or below that quantity."""
    if low_stock_at <= 0:
        return "{{ 'ON' if value_json.low else 'OFF' }}"
    return f"{{{{ 'ON' if value_json.low or value_json.quantity <= {low_stock_at} else 'OFF' }}}}"


def discovery_configs(site: SiteSettings, item: Item) -> dict[str, dict]:
    """Home Assistant discovery ``{topic: config}`` for ``item``: a stock sensor and a low-stock
    binary sensor (:func:`low_template`), both unavailable when the box is."""
    m, prefix, node = site.mqtt, topic_prefix(site), f"edge_{site.name}_{site.box}"
    common = {
        "state_topic": f"{prefix}/stock/{item.sku}",
        "availability_topic": f"{prefix}/status", "payload_available": "online", "payload_not_available": "offline",
        "device": {"identifiers": [node], "name": f"edge {site.box}", "manufacturer": "edge",
                   "model": "voice inventory box", "suggested_area": site.box},
    }
    slug = _slug(item.sku)
    return {
        f"{m.discovery_prefix}/sensor/{node}/{slug}/config": {
            **common, "name": f"{item.item} ({item.location})", "unique_id": f"{node}_{slug}_stock",
            "value_template": "{{ value_json.quantity }}", "unit_of_measurement": item.unit,
            "state_class": "measurement"},
        f"{m.discovery_prefix}/binary_sensor/{node}/{slug}_low/config": {
            **common, "name": f"{item.item} low", "unique_id": f"{node}_{slug}_low", "device_class": "problem",
            "value_template": low_template(m.low_stock_at)},
    }


def _tls(client: paho.Client, m: MqttSettings) -> None:
    """TLS on ``client`` with the files of ``m`` checked (relative names in $CREDENTIALS_DIRECTORY)."""
    ca = credential_file(m.tls_ca_file, "site.mqtt.tls_ca_file", what="the broker's CA certificate (PEM)") \
        if m.tls_ca_file is not None else None
    cert = key = None
    if m.tls_cert_file is not None:
        cert = credential_file(m.tls_cert_file, "site.mqtt.tls_cert_file", what="this box's client certificate (PEM)")
        key = credential_file(m.tls_key_file, "site.mqtt.tls_key_file", private=True,
                              what="the client certificate's private key (PEM)")
    try:
        client.tls_set(ca_certs=str(ca) if ca else None, certfile=str(cert) if cert else None,
                       keyfile=str(key) if key else None)
    except (OSError, ValueError) as e:  # ssl.SSLError is an OSError: not PEM, or the key does not fit
        files = ", ".join(str(f) for f in (ca, cert, key) if f)
        raise SiteError(f"site.mqtt: cannot use the TLS files {files or '(the system CAs)'}: {e}; fix: give PEM "
                        "files (tls_ca_file the broker's CA; tls_key_file the key of tls_cert_file)") from e


def _where(m: MqttSettings) -> str:
    return f"site.mqtt: the broker at host {m.host} port {m.port}"


def refusal(m: MqttSettings, reason: object) -> str:
    """Why the broker refused this box after the connection was made (``reason``: the CONNACK's
    reason code, or None when it closed the connection without answering), with the fix."""
    if reason is None:
        return (f"{_where(m)} closed the connection before accepting this box; fix: if the listener "
                f"speaks TLS, set site.mqtt.tls_ca_file{'' if m.tls else ' (TLS is off)'}; if it wants a client "
                "certificate, set tls_cert_file and tls_key_file")
    text = str(reason)
    if text in ("Bad user name or password", "Not authorized"):
        who = f"user {m.username!r}" if m.username else "no user (site.mqtt.username is not set)"
        return (f"{_where(m)} refused this box: {text} ({who}); fix: set site.mqtt.username and put that user's "
                "password in site.mqtt.password_file, as the broker's password file has them")
    return f"{_where(m)} refused this box: {text}; fix: see the broker's log"


def connect_failure(m: MqttSettings, error: BaseException | None) -> tuple[str, str]:
    """``(state, why with the fix)`` for a connection attempt that failed with ``error``."""
    if isinstance(error, ssl.SSLCertVerificationError):
        return "tls", (f"{_where(m)} failed the TLS check: {error.verify_message or error}; fix: set "
                       "site.mqtt.tls_ca_file to the CA that signed the broker's certificate, and site.mqtt.host "
                       "to a name the certificate lists")
    if isinstance(error, ssl.SSLError):
        return "tls", (f"{_where(m)} refused the TLS handshake ({error.reason or error}); fix: check that the "
                       "port is the broker's TLS listener; if it wants a client certificate, set tls_cert_file "
                       "and tls_key_file")
    if isinstance(error, ConnectionRefusedError):
        return "unreachable", (f"{_where(m)} refuses connections (nothing listens there); fix: start the broker "
                               "or correct site.mqtt.host and port")
    return "unreachable", f"{_where(m)} cannot be reached ({error}); the events wait and go on reconnect"


class MqttEvents:
    """Publishes this box's site events to ``site.mqtt``; a listener for :class:`edge.site.sync.SiteSync`.

    Connects in the background and reconnects by itself (paho's network thread); QoS 1 messages
    published while disconnected are queued in memory and sent on reconnect. ``store`` is read
    from that thread too (the store is thread-safe). Call :meth:`close` to say ``offline`` and stop.

    With ``site.mqtt.tls`` the connection is TLS and the broker's certificate is verified (against
    ``tls_ca_file``, else the system's CAs) and must name ``site.mqtt.host``.

    The connection state goes to the store (see the module doc); ``on_error`` is told each new
    reason the broker refuses the box or cannot be reached (once, not on every retry).

    Raises :class:`SiteError` naming ``site.mqtt.password_file`` or a ``site.mqtt.tls_*`` file,
    with the fix, when it is missing, unreadable, or (the password, the private key) open to others.
    """

    def __init__(self, store: Store, site: SiteSettings,
                 on_error: Callable[[SiteError], None] | None = None) -> None:
        if site.mqtt is None:
            raise SiteError("site.mqtt: not configured; fix: add site.mqtt.host to the config")
        self.store, self.site, self.prefix = store, site, topic_prefix(site)
        m = site.mqtt
        self.connected = threading.Event()
        self._last: paho.MQTTMessageInfo | None = None
        self._on_error, self._told, self._acked, self._closing = on_error, "", False, False
        c = paho.Client(CallbackAPIVersion.VERSION2, client_id=f"edge-{site.name}-{site.box}")
        c.will_set(f"{self.prefix}/status", "offline", qos=1, retain=True)
        if m.username:
            c.username_pw_set(m.username, read_password(m.password_file, "site.mqtt.password_file"))
        if m.tls:
            _tls(c, m)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        # called inside paho's ``except OSError`` around a connection attempt: the error is at hand
        c.on_connect_fail = lambda *_: self._state(*connect_failure(m, sys.exc_info()[1]))
        c.reconnect_delay_set(min_delay=1, max_delay=30)
        self.client = c
        c.connect_async(m.host, m.port, keepalive=m.keepalive_s)
        c.loop_start()

    def _state(self, state: str, error: str = "") -> None:
        """Keep the connection state in the store when it changes; tell a new error once."""
        try:
            if (self.store.meta("mqtt_state"), self.store.meta("mqtt_error") or "") != (state, error):
                self.store.set_meta(mqtt_state=state, mqtt_error=error)
        except StoreError:
            pass  # the store busy or failing: the next change writes it (never break paho's thread)
        if error and error != self._told and self._on_error is not None:
            self._on_error(SiteError(error))
        self._told = error

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self.connected.clear()
        if self._closing:
            return
        if not self._acked:  # closed before any CONNACK: e.g. a TLS listener spoken to in plain text
            self._state("refused", refusal(self.site.mqtt, None))
        elif reason_code.is_failure and self.store.meta("mqtt_state") == "connected":
            self._state("unreachable", f"{_where(self.site.mqtt)} dropped the connection ({reason_code}); "
                                       "the events wait and go on reconnect")
        self._acked = False

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        self._acked = True
        if reason_code.is_failure:
            self._state("refused", refusal(self.site.mqtt, reason_code))
            return
        self._state("connected")
        client.publish(f"{self.prefix}/status", "online", qos=1, retain=True)
        for item in self.store.items():  # a (re)connect refreshes every retained state
            self._stock(item)
        self.connected.set()

    def _publish(self, topic: str, payload: dict, retain: bool = False) -> None:
        self._last = self.client.publish(topic, json.dumps(payload, ensure_ascii=False, separators=(",", ":")),
                                         qos=1, retain=retain)

    def _stock(self, item: Item) -> None:
        if self.site.mqtt.discovery:
            for topic, config in discovery_configs(self.site, item).items():
                self._publish(topic, config, retain=True)
        self._publish(f"{self.prefix}/stock/{item.sku}", stock_state(item), retain=True)
        if item.quantity < 0:
            self._publish(f"{self.prefix}/alert", {
                "kind": "negative_stock", "sku": item.sku, "location": item.location, "quantity": item.quantity,
                "text": f"the records say {item.quantity}; please count them"})

    def movements(self, pushed: list[Movement], pulled: list[Movement]) -> None:
        """After a sync round: a message per record of this box now on the site (``pushed``) and
        the stock state of every SKU that ``pushed`` or ``pulled`` changed."""
        for m in pushed:
            self._publish(f"{self.prefix}/movement", {
                "gid": m.gid, "box": m.box, "seq": m.seq, "time": m.time, "sku": m.sku, "delta": m.delta,
                "utterance": m.utterance, "turn_id": m.turn_id, "undoes": m.undoes, "location": m.location,
                "kind": m.kind, "counted": m.counted, "op": m.op})
        for sku in sorted({m.sku for m in pushed} | {m.sku for m in pulled}):
            item = self.store.get(sku)
            if item is not None:
                self._stock(item)

    def stopped(self, error: SiteError) -> None:
        """The site sync stopped for good (another box uses this box id): an alert
        ``{kind: "sync_stopped", box, text}`` (``text``: why, with the fix; ``said``: the short form)."""
        self._publish(f"{self.prefix}/alert", {"kind": "sync_stopped", "box": self.site.box,
                                               "said": getattr(error, "said", str(error)), "text": str(error)})

    def close(self, timeout_s: float = 5.0) -> None:
        """Publish ``offline`` (retained) after what is queued, wait up to ``timeout_s`` s for the
        broker to take them while connected, disconnect, stop the network thread."""
        self._closing = True
        info = self.client.publish(f"{self.prefix}/status", "offline", qos=1, retain=True)
        if self.connected.is_set():
            for pending in (self._last, info):
                if pending is not None:
                    try:
                        pending.wait_for_publish(timeout=timeout_s)
                    except (RuntimeError, ValueError):
                        pass  # the connection went away meanwhile: the last will says offline
        self.client.disconnect()
        self.client.loop_stop()
