"""C17 watchdog follows progress: the wake-word stage stops making progress (blocks) while the rest of
the process runs; systemd's notify socket is a test datagram socket.

Right behaviour: ``WATCHDOG=1`` stops once the audio loop makes no progress (the ping follows frames
processed, not a free-running timer), so systemd restarts the unit; the state file's heartbeat goes
on and shows the frame age growing; pings come back when the loop moves again. A stalled client of
any local socket (the HTTP API, Wyoming) is dropped after a read timeout and never blocks others.

The loop is the service's own: :func:`edge.service.supervisor.watched` over the frames,
:func:`edge.loop.build.run_frames` with the real stages, a real :class:`Notifier` sending through
libsystemd's ``sd_notify`` to ``$NOTIFY_SOCKET``, a real :class:`ServiceState` heartbeat thread.
"""
from __future__ import annotations

import asyncio
import json
import os
import socket
import tempfile
import threading

import httpx
import numpy as np
import pytest

from drivers.audio import wav_frames
from edge.config import WyomingSettings
from edge.llm.chain import EngineChain
from edge.loop.build import run_frames
from edge.service.api.app import ServerThread, create_app
from edge.service.notify import Notifier
from edge.service.readtimeout import ReadTimeoutH11
from edge.service.runstate import ServiceState
from edge.service.supervisor import watched
from edge.service.wyoming.box import Box
from edge.service.wyoming.server import BackgroundServer
from tests.helpers import SESSIONS

WATCHDOG_USEC = 300_000  # WatchdogSec=0.3 s: a ping every 0.15 s while the loop moves
STALL_WINDOW_S = 2.0  # > 13 ping intervals with the loop blocked
GUARD_S = 60.0  # hang guard only


@pytest.fixture
def notify_socket(monkeypatch):
    d = tempfile.mkdtemp(prefix="edge-c17-", dir="/tmp")
    path = os.path.join(d, "notify")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.setenv("WATCHDOG_USEC", str(WATCHDOG_USEC))
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    yield s
    s.close()
    os.unlink(path)
    os.rmdir(d)


def pings_within(sock: socket.socket, seconds: float, want: int | None = None) -> int:
    """WATCHDOG=1 datagrams received within ``seconds`` (stops early at ``want``)."""
    sock.settimeout(seconds)
    n = 0
    try:
        while want is None or n < want:
            if "WATCHDOG=1" in sock.recv(65536).decode():
                n += 1
    except socket.timeout:
        pass
    return n


def drain(sock: socket.socket) -> None:
    sock.setblocking(False)
    try:
        while True:
            sock.recv(65536)
    except BlockingIOError:
        pass
    sock.setblocking(True)


class BlockingWake:
    """The real wake-word stage; while ``hold`` is set, the next frame blocks in it (a hung stage)."""

    def __init__(self, inner) -> None:
        self.inner, self.hold, self.blocked, self.release = inner, threading.Event(), threading.Event(), threading.Event()
        self.frames = 0

    def process(self, frame):
        if self.hold.is_set():
            self.blocked.set()
            self.release.wait(GUARD_S)
            self.hold.clear()
        self.frames += 1
        return self.inner.process(frame)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def endless(stop: threading.Event):
    """The session's frames, then silence, until ``stop``: a microphone that never ends."""
    frames = list(wav_frames(SESSIONS / "query_m8_bolts.wav"))
    quiet = np.zeros_like(frames[0])
    while not stop.is_set():
        yield from frames
        for _ in range(40):
            yield quiet


def test_the_watchdog_stops_while_the_wake_stage_blocks_and_resumes_after(rig_grammar, inventory_store, tmp_path,
                                                                          notify_socket):
    settings, stages = rig_grammar
    saved_store, stages.store = stages.store, inventory_store  # put back after: the rig is shared
    notifier = Notifier()
    assert notifier.enabled and notifier.watchdog_interval_s == WATCHDOG_USEC / 1e6
    state = ServiceState(tmp_path / "state.json", interval_s=0.1).start()
    real_wake, stop = stages.wake, threading.Event()
    stages.wake = wake = BlockingWake(real_wake)
    failure: list[BaseException] = []

    def loop():
        try:
            run_frames(watched(endless(stop), notifier, state), stages, settings, tmp_path, lambda e: None)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            failure.append(e)

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    try:
        assert pings_within(notify_socket, GUARD_S, want=5) == 5  # the loop moves: pings come
        wake.hold.set()
        assert wake.blocked.wait(GUARD_S)
        frames_at_block = wake.frames
        drain(notify_socket)  # a ping sent just before the block
        before = json.loads(state.path.read_text())
        assert pings_within(notify_socket, STALL_WINDOW_S) == 0  # no progress, no ping
        after = json.loads(state.path.read_text())
        # the rest of the process runs: the heartbeat still writes and shows the loop's stall
        assert after["updated"] > before["updated"]
        assert after["last_frame_age_s"] >= STALL_WINDOW_S - 0.5 > (before["last_frame_age_s"] or 0)
        assert wake.frames == frames_at_block
        wake.release.set()
        assert pings_within(notify_socket, GUARD_S, want=2) == 2  # progress again: pings again
        assert wake.frames > frames_at_block
    finally:
        wake.release.set()
        stop.set()
        t.join(GUARD_S)
        stages.wake = real_wake
        stages.store = saved_store
        state.stop()
    assert not failure, failure


# -- stalled clients of the local sockets -------------------------------------------------------------

def _closed_by_server(sock: socket.socket) -> bool:
    """The server closed ``sock`` (EOF, or a reset) within the hang guard."""
    sock.settimeout(GUARD_S)
    try:
        while sock.recv(65536):
            pass  # an error response before the close is fine
    except (ConnectionResetError, socket.timeout) as e:
        return not isinstance(e, socket.timeout)
    return True


def test_stalled_http_clients_are_dropped_and_never_block_others(monkeypatch):
    monkeypatch.setattr(ReadTimeoutH11, "read_timeout_s", 1.0)
    server = ServerThread(create_app(EngineChain([]).start(), _api_settings()), "127.0.0.1", 0).start()
    try:
        stalled = []
        for first in (b"", b"GET /healthz HT", b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                      b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 400\r\n\r\n{\"model\": "):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=GUARD_S)
            s.sendall(first)
            stalled.append(s)
        # others are served while the stalled ones hang
        with httpx.Client(base_url=server.url, timeout=GUARD_S) as c:
            assert c.get("/healthz").status_code == 200
        assert all(_closed_by_server(s) for s in stalled)
        with httpx.Client(base_url=server.url, timeout=GUARD_S) as c:  # and after
            assert c.get("/healthz").status_code == 200
    finally:
        for s in stalled:
            s.close()
        server.stop()


def _api_settings():
    from edge.config import ApiSettings

    return ApiSettings()


def test_stalled_wyoming_clients_are_dropped_and_never_block_others(rig_grammar):
    settings, stages = rig_grammar
    settings = settings.model_copy(update={"wyoming": WyomingSettings(uri="tcp://127.0.0.1:0", idle_timeout_s=1.0,
                                                                      frame_timeout_s=1.0, max_clients=3)})
    box = Box(settings, stages, lambda e: None)
    bg = BackgroundServer(box, settings).start()
    port = bg.server.port
    try:
        stalled = []
        for first in (b"", b'{"type": "pi', b'{"type": "audio-chunk", "data_length": 50}\n{"rate"'):
            s = socket.create_connection(("127.0.0.1", port), timeout=GUARD_S)
            s.sendall(first)
            stalled.append(s)
        assert all(_closed_by_server(s) for s in stalled)  # each dropped, and the slots freed

        async def ping() -> str:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b'{"type": "ping", "data": {"text": "x"}}\n')
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), GUARD_S)
            writer.close()
            return json.loads(line)["type"]

        # max_clients=3: served only once the stalled are gone (each lingers up to 1 s after its close)
        answers = []
        while "pong" not in answers and len(answers) < 100:
            answers.append(asyncio.run(ping()))
            if answers[-1] != "pong":
                threading.Event().wait(0.1)
        assert answers[-1] == "pong", answers
    finally:
        for s in stalled:
            s.close()
        bg.stop()
        box.close()
