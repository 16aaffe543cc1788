"""A read timeout for the local HTTP API's connections (uvicorn has none before the first request).

uvicorn closes an idle keep-alive connection only after a response; a client that connects and
sends nothing, or half a request line, headers or body, and then stalls, would hold its socket (and
a file descriptor) for ever, so enough of them exhaust the process's descriptors. :class:`ReadTimeoutH11`
is uvicorn's h11 protocol with one timer: whenever the server is waiting for bytes from the client
(no request yet, a request still incomplete, or between requests), ``READ_TIMEOUT_S`` without any
closes that connection only. While the application is answering (an LLM stream) nothing is read
from the client, so the timer does not run. Pass it as ``uvicorn.Config(..., http=ReadTimeoutH11)``.
"""
from __future__ import annotations

import asyncio
import logging

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["ReadTimeoutH11", "READ_TIMEOUT_S"]

#: s without a byte from a client the server is waiting on before its connection is closed.
READ_TIMEOUT_S = 10.0

log = logging.getLogger("edge.api")


class ReadTimeoutH11(H11Protocol):
    """uvicorn's h11 protocol with a read timeout (see the module docstring)."""

    read_timeout_s = READ_TIMEOUT_S
    _read_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
        super().connection_lost(exc)

    def _waiting_on_client(self) -> bool:
        cycle = self.cycle
        return cycle is None or cycle.response_complete or (cycle.more_body and not cycle.response_started)

    def _arm(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
        self._read_timer = self.loop.call_later(self.read_timeout_s, self._expired)

    def _expired(self) -> None:
        self._read_timer = None
        if self.transport.is_closing():
            return
        if not self._waiting_on_client():  # the answer is being written: check again later
            self._arm()
            return
        log.info("dropping %s: nothing read for %.0f s", self.client, self.read_timeout_s)
        self.transport.close()
