"""The Wyoming server: the listening socket, the bound on clients, and ``edge wyoming``.

Listens on ``wyoming.uri`` (``tcp://127.0.0.1:10700`` by default; a non-loopback address only with
``wyoming.allow_lan: true``, checked when the settings load, and a warning at start because Wyoming
has no authentication). At most ``wyoming.max_clients`` connections are served at once; one more
gets an ``error`` event (code ``busy``) and is closed.
"""
from __future__ import annotations

import asyncio
import logging
import signal
import threading
from typing import TYPE_CHECKING, Callable

from wyoming.error import Error
from wyoming.event import async_write_event

from edge.config import WyomingSettings, is_loopback, wyoming_address
from edge.service.wyoming.announce import Announcement, lan_address
from edge.service.wyoming.box import Box
from edge.service.wyoming.connection import Connection
from edge.service.wyoming.frames import MAX_LINE_BYTES

if TYPE_CHECKING:
    from edge import events as ev
    from edge.config import Settings
    from edge.loop.pipeline import Stages

log = logging.getLogger("edge.service.wyoming")

NO_AUTH_WARNING = ("Wyoming has no authentication: anyone who can reach %s can use speech recognition, "
                   "the wake word and speech, and change stock records through 'handle'; keep it on a trusted "
                   "network and firewall the port (wyoming.allow_lan is true)")


class WyomingServer:
    """Serve ``box`` on ``settings.wyoming.uri`` from a running event loop: :meth:`start`, :meth:`stop`."""

    def __init__(self, box: Box, settings: Settings):
        self.box = box
        self.settings = settings
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task] = set()
        self.clients = 0  # connections being served now
        self.refused = 0  # connections refused because max_clients were being served
        self.announcement: Announcement | None = None  # the zeroconf announcement (wyoming.zeroconf)

    @property
    def uri(self) -> str:
        """The address listened on, with the real port when ``wyoming.uri`` asked for port 0."""
        scheme, host, _ = wyoming_address(self.settings.wyoming.uri)
        if scheme == "unix" or self._server is None:
            return self.settings.wyoming.uri
        return f"tcp://{host}:{self.port}"

    @property
    def port(self) -> int | None:
        """The bound TCP port (None before :meth:`start` or on a Unix socket)."""
        if self._server is None or not self._server.sockets:
            return None
        name = self._server.sockets[0].getsockname()
        return name[1] if isinstance(name, tuple) else None

    async def start(self) -> None:
        """Bind and start accepting.

        Raises:
            OSError: the address cannot be bound (in use, not this machine's); the message names it.
        """
        scheme, host, port = wyoming_address(self.settings.wyoming.uri)
        try:
            if scheme == "unix":
                self._server = await asyncio.start_unix_server(self._client, path=host, limit=MAX_LINE_BYTES)
            else:
                self._server = await asyncio.start_server(self._client, host=host, port=port, limit=MAX_LINE_BYTES)
        except OSError as e:
            raise OSError(e.errno, f"wyoming.uri {self.settings.wyoming.uri}: cannot listen ({e.strerror or e}); "
                          f"choose another port or address") from None
        if scheme == "tcp" and not is_loopback(host):
            log.warning(NO_AUTH_WARNING, self.uri)
        if self.settings.wyoming.zeroconf:
            self.announcement = Announcement(self.port, lan_address(host))
            await self.announcement.start()
            log.info("announced as %s on %s:%d (zeroconf)", self.announcement.info.name,
                     self.announcement.address, self.port)
        log.info("Wyoming services (asr, tts, wake, handle) on %s", self.uri)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = str(writer.get_extra_info("peername") or "local")
        if self.clients >= self.settings.wyoming.max_clients:
            self.refused += 1
            log.warning("wyoming client %s refused: %d clients already (wyoming.max_clients)", peer, self.clients)
            try:
                await asyncio.wait_for(async_write_event(Error(
                    text=f"the box serves {self.clients} clients already (wyoming.max_clients); try again later",
                    code="busy").event(), writer), 1.0)
            except (ConnectionError, asyncio.TimeoutError):
                pass
            writer.close()
            return
        self.clients += 1
        task = asyncio.current_task()
        self._tasks.add(task)
        held = [True]

        def free_slot() -> None:  # once: when the conversation is over, not after the last error's linger
            if held[0]:
                held[0] = False
                self.clients -= 1

        try:
            await Connection(self.box, self.settings, reader, writer, peer, on_over=free_slot).run()
        finally:
            free_slot()
            self._tasks.discard(task)

    async def stop(self) -> None:
        """Withdraw the announcement, stop listening and close every connection."""
        if self.announcement is not None:
            await self.announcement.close()
        if self._server is not None:
            self._server.close()
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5.0)
        if self._server is not None:
            await self._server.wait_closed()


class BackgroundServer:
    """A :class:`WyomingServer` on its own event loop in a daemon thread (beside a voice loop, or
    in tests): ``start()`` returns once it listens; ``stop()``."""

    def __init__(self, box: Box, settings: Settings):
        self.server = WyomingServer(box, settings)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="edge-wyoming", daemon=True)

    def start(self, timeout_s: float = 30.0) -> BackgroundServer:
        """Start the thread and bind; raises what :meth:`WyomingServer.start` raises."""
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self._loop).result(timeout_s)
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Close every connection, stop listening and end the thread (waits at most about ``timeout_s`` s)."""
        asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop).result(timeout_s)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout_s)
        self._loop.close()


def with_wyoming(settings: Settings) -> Settings:
    """``settings`` with the ``wyoming`` defaults when the config has no ``wyoming:`` section
    (``edge wyoming`` serves anyway; the live service serves only with one)."""
    if settings.wyoming is not None:
        return settings
    return settings.model_copy(update={"wyoming": WyomingSettings()})


def run(settings: Settings, stages: Stages, emit: Callable[[ev.Event], None]) -> int:
    """``edge wyoming``: serve until SIGTERM or SIGINT; returns the exit status (0).

    Raises:
        OSError: ``wyoming.uri`` cannot be bound.
    """
    settings = with_wyoming(settings)
    box = Box(settings, stages, emit)

    async def main() -> None:
        server = WyomingServer(box, settings)
        await server.start()
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stopping.set)
        await stopping.wait()
        log.info("stopping the Wyoming server")
        await server.stop()

    try:
        asyncio.run(main())
    finally:
        box.close()
    return 0
