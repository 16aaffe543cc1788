"""sd_notify: READY=1, STATUS=, WATCHDOG=1 on a real AF_UNIX datagram socket the test opens (what
systemd's NOTIFY_SOCKET is), first from :class:`edge.service.notify.Notifier` in this process, then from the
live service (``edge run`` without ``--input``) capturing from a PulseAudio null sink."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from edge.service.notify import Notifier, watchdog_usec
from tests.helpers import SESSION_WAKE, SESSIONS
from tests.live import lines_until as _lines_until
from tests.live import start_edge_run, stop


@pytest.fixture
def notify_socket():
    """A bound AF_UNIX SOCK_DGRAM socket in a short /tmp folder (unix socket paths must be < 108 bytes)."""
    d = tempfile.mkdtemp(prefix="edge-notify-", dir="/tmp")
    path = os.path.join(d, "notify")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(0.5)
    yield s, path
    s.close()
    os.unlink(path)
    os.rmdir(d)


def drain(sock) -> list[str]:
    out = []
    while True:
        try:
            out.append(sock.recv(65536).decode())
        except (socket.timeout, BlockingIOError):
            return out


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_ready_status_and_paced_watchdog_reach_the_socket(notify_socket, monkeypatch):
    sock, path = notify_socket
    monkeypatch.setenv("NOTIFY_SOCKET", path)  # libsystemd's sd_notify reads it from the environment
    monkeypatch.setenv("WATCHDOG_USEC", "2000000")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    clock = Clock()
    n = Notifier(clock=clock)
    assert n.enabled and n.watchdog_interval_s == 2.0 and n.ping_every_s == 1.0
    n.status("loading models")
    n.status("loading models")  # unchanged: not sent again
    n.ready("ready: models loaded")
    sent = []
    for dt in (0.0, 0.5, 0.99, 1.0, 1.5, 2.1):  # s after the first call
        clock.t = 100.0 + dt
        sent.append(n.watchdog())
    n.stopping("bye")
    assert sent == [True, False, False, True, False, True]
    assert drain(sock) == ["STATUS=loading models", "READY=1\nSTATUS=ready: models loaded",
                           "WATCHDOG=1", "WATCHDOG=1", "WATCHDOG=1", "STOPPING=1\nSTATUS=bye"]


def test_sleep_keeps_the_watchdog_fed(notify_socket, monkeypatch):
    sock, path = notify_socket
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.setenv("WATCHDOG_USEC", "1000000")
    clock = Clock()

    def sleeper(s):
        clock.t += s

    n = Notifier(clock=clock)
    n.sleep(3.0, sleeper=sleeper)  # 3 s of waiting with a 1 s watchdog: a ping every 0.5 s, ends included
    assert clock.t == pytest.approx(103.0)
    assert drain(sock) == ["WATCHDOG=1"] * 7  # at 0, 0.5, ..., 3.0 s


def test_watchdog_of_another_process_and_no_socket_are_ignored(monkeypatch):
    assert watchdog_usec({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}, pid=4242) is None
    assert watchdog_usec({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4242"}, pid=4242) == 30_000_000
    assert watchdog_usec({"WATCHDOG_USEC": "0"}) is None and watchdog_usec({}) is None
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    n = Notifier(env={"WATCHDOG_USEC": "1000000"})
    n.ready("x")
    n.status("y")
    n.watchdog()
    assert not n.enabled and n.sent == []


class Listener:
    """Reads the notify socket on a thread, as systemd does: a unix datagram queue holds only
    net.unix.max_dgram_qlen (10) messages, and a sender blocks when nobody reads."""

    def __init__(self, sock):
        self.sock, self.msgs, self._stop = sock, [], threading.Event()
        self._cv = threading.Condition()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                m = self.sock.recv(65536).decode()
            except socket.timeout:
                continue
            except OSError:
                return
            with self._cv:
                self.msgs.append(m)
                self._cv.notify_all()

    def wait(self, pred, timeout):
        """Block until ``pred(msgs)`` holds; fails after ``timeout`` s (hang detection only)."""
        deadline = time.monotonic() + timeout
        with self._cv:
            while not pred(self.msgs):
                left = deadline - time.monotonic()
                assert left > 0, f"timed out waiting on the notify socket; got {self.msgs}"
                self._cv.wait(min(left, 1.0))
            return list(self.msgs)

    def stop(self):
        self._stop.set()
        self._t.join(timeout=5)
        return list(self.msgs)


def test_service_sends_ready_after_models_then_watchdog_and_status(pulse_null_sink, notify_socket, tmp_path):
    sock, path = notify_socket
    cfg = tmp_path / "live.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\n")
    env = dict(pulse_null_sink, PYTHONUNBUFFERED="1", NOTIFY_SOCKET=path, WATCHDOG_USEC="2000000")
    env.pop("WATCHDOG_PID", None)
    env.pop("JOURNAL_STREAM", None)
    proc, out_q, err_q = start_edge_run(cfg, env, tmp_path / "out")
    listener = Listener(sock)
    try:
        # READY=1, then at least two watchdog pings from the audio loop
        listener.wait(lambda a: sum(x == "WATCHDOG=1" for x in a) >= 2, 180)
        _lines_until(err_q, lambda l: l.startswith("listening on"), 30)
        subprocess.run(["paplay", str(SESSIONS / "query_m8_bolts.wav")], env=pulse_null_sink, check=True, timeout=60)
        lines = _lines_until(out_q, lambda l: '"turn_end"' in l, 90)
        listener.wait(lambda a: "STATUS=awake" in a and a[-1] != "STATUS=awake"
                      and "STATUS=listening on default" in a[a.index("STATUS=awake"):], 30)
    finally:
        stop(proc)
    time.sleep(0.2)  # let the reader thread take the last datagram (STOPPING=1)
    msgs = listener.stop() + drain(sock)
    ready = next(i for i, m in enumerate(msgs) if m.startswith("READY=1"))
    # READY only after the models loaded and the smoke inference passed
    assert msgs.index("STATUS=loading models") < msgs.index("STATUS=smoke inference") < ready
    assert "smoke inference" in msgs[ready] and "llamacpp" in msgs[ready] and "degraded" not in msgs[ready]
    after = msgs[ready + 1:]
    assert after.count("WATCHDOG=1") >= 2
    assert "STATUS=listening on default" in after and "STATUS=awake" in after  # the turn state
    assert after.index("STATUS=awake") < len(after) - 1 - after[::-1].index("STATUS=listening on default")
    assert msgs[-1].startswith("STOPPING=1")
    assert proc.returncode == 0
    reply = next(json.loads(l) for l in lines if '"reply"' in l)
    assert "140" in reply["text"]
