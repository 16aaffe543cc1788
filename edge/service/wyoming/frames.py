"""One Wyoming event off the wire, with bounds.

A Wyoming event is a JSON header line (``type``, optional ``data``, ``data_length``,
``payload_length``), then ``data_length`` bytes of JSON merged into ``data``, then
``payload_length`` bytes of payload (PCM audio). The wyoming package's own reader trusts the
lengths and waits for ever; here every length is capped and the bytes it announces must arrive
within ``frame_timeout_s``. Anything else is a :class:`ProtocolError`, which closes that
connection only.
"""
from __future__ import annotations

import asyncio
import json

from wyoming.event import Event

from edge.errors import EdgeError

MAX_LINE_BYTES = 64 * 1024  # bytes, one header line (the StreamReader limit of the server)
MAX_DATA_BYTES = 1024 * 1024  # bytes of extra JSON data after the header
MAX_PAYLOAD_BYTES = 4 * 1024 * 1024  # bytes of payload: 2 min of 16 kHz 16-bit mono audio in one chunk


class ProtocolError(EdgeError):
    """A frame or an event sequence that breaks the protocol; ``code`` goes into the ``error`` event."""

    def __init__(self, message: str, code: str = "protocol"):
        super().__init__(message)
        self.code = code


def _length(header: dict, key: str, cap: int) -> int:
    n = header.get(key)
    if n is None:
        return 0
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ProtocolError(f"{key} must be a whole number of bytes >= 0, got {n!r}")
    if n > cap:
        raise ProtocolError(f"{key} {n} bytes is over the limit of {cap} bytes")
    return n


async def _exactly(reader: asyncio.StreamReader, n: int, what: str, timeout_s: float) -> bytes:
    try:
        return await asyncio.wait_for(reader.readexactly(n), timeout_s)
    except asyncio.IncompleteReadError as e:
        raise ProtocolError(f"the connection closed after {len(e.partial)} of the {n} {what} bytes "
                            f"the header announced") from None
    except asyncio.TimeoutError:
        raise ProtocolError(f"the header announced {n} {what} bytes; they did not arrive within "
                            f"{timeout_s:g} s (wyoming.frame_timeout_s)") from None


async def read_event(reader: asyncio.StreamReader, idle_timeout_s: float, frame_timeout_s: float) -> Event | None:
    """The next event from ``reader``, or None when the client closed the connection between events.

    ``idle_timeout_s``: s to wait for the next header line; ``frame_timeout_s``: s for the data and
    payload bytes its header announces.

    Raises:
        ProtocolError: a header that is not a JSON object with a string ``type``, a line over
            :data:`MAX_LINE_BYTES`, a length that is not a number, over its cap, or that the bytes
            sent do not match (data that is not a JSON object, a closed connection or silence
            before the announced bytes), or no event within ``idle_timeout_s``.
    """
    try:
        line = await asyncio.wait_for(reader.readline(), idle_timeout_s)
    except asyncio.TimeoutError:
        raise ProtocolError(f"no event for {idle_timeout_s:g} s (wyoming.idle_timeout_s)", "timeout") from None
    except ValueError:  # asyncio's LimitOverrunError, re-raised by readline as ValueError
        raise ProtocolError(f"a header line longer than {MAX_LINE_BYTES} bytes") from None
    if not line:
        return None
    if not line.endswith(b"\n"):
        raise ProtocolError("the connection closed in the middle of a header line")
    try:
        header = json.loads(line)
    except ValueError:
        raise ProtocolError(f"the header line is not JSON: {line[:80]!r}") from None
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        raise ProtocolError("the header must be a JSON object with a string 'type'")
    data = header.get("data") or {}
    if not isinstance(data, dict):
        raise ProtocolError("'data' in the header must be a JSON object")
    data_length = _length(header, "data_length", MAX_DATA_BYTES)
    payload_length = _length(header, "payload_length", MAX_PAYLOAD_BYTES)
    if data_length:
        raw = await _exactly(reader, data_length, "data", frame_timeout_s)
        try:
            extra = json.loads(raw)
        except ValueError:
            extra = None
        if not isinstance(extra, dict):
            raise ProtocolError(f"the {data_length} data bytes are not a JSON object (a data_length that lies?)")
        data = {**data, **extra}
    payload = await _exactly(reader, payload_length, "payload", frame_timeout_s) if payload_length else None
    return Event(type=header["type"], data=data, payload=payload)
