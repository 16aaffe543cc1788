"""One Wyoming event off the wire, with bounds.

A Wyoming event is a JSON header line (``type``, optional ``data``, ``data_length``,
``payload_length``), then ``data_length`` bytes of JSON merged into ``data``, then
``payload_length`` bytes of payload (PCM audio). The wyoming package's own reader trusts the
lengths and waits for ever; here every length is capped, a header line once started must end
within ``header_timeout_s`` (a client sending half a line holds its slot that long, not the idle
timeout), the bytes it announces must arrive within ``frame_timeout_s`` (data and payload together), a
connection's first event must arrive whole within ``header_timeout_s`` of connecting, and JSON is nested at most
:data:`MAX_JSON_DEPTH` deep. Anything else is a :class:`ProtocolError`, which closes that connection
only.
"""
from __future__ import annotations

import asyncio
import json
import math

from wyoming.event import Event

from edge.errors import EdgeError

MAX_LINE_BYTES = 64 * 1024  # bytes, one header line (the StreamReader limit of the server)
MAX_DATA_BYTES = 1024 * 1024  # bytes of extra JSON data after the header
MAX_PAYLOAD_BYTES = 4 * 1024 * 1024  # bytes of payload: 2 min of 16 kHz 16-bit mono audio in one chunk
#: levels of JSON objects and arrays in a header or its data: Wyoming's deepest event (``info``)
#: nests 6; deeper input made the JSON parser raise RecursionError.
MAX_JSON_DEPTH = 32


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


async def _exactly(reader: asyncio.StreamReader, n: int, what: str, by: float, bound: str) -> bytes:
    """``n`` bytes by the event loop's time ``by`` (s); ``bound`` says which deadline in the error."""
    try:
        return await asyncio.wait_for(reader.readexactly(n), max(by - asyncio.get_running_loop().time(), 0.001))
    except asyncio.IncompleteReadError as e:
        raise ProtocolError(f"the connection closed after {len(e.partial)} of the {n} {what} bytes "
                            f"the header announced") from None
    except asyncio.TimeoutError:
        raise ProtocolError(f"the header announced {n} {what} bytes; they did not arrive within {bound}") from None


def _depth_over(value, cap: int) -> bool:
    """Whether ``value`` (parsed JSON) nests objects and arrays more than ``cap`` levels deep
    (iterative: linear in its nodes, no recursion)."""
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        if children is None:
            continue
        if d > cap:
            return True
        stack.extend((c, d + 1) for c in children)
    return False


def _json(raw: bytes, what: str):
    """``raw`` parsed; None when it is not JSON.

    Raises:
        ProtocolError: nested deeper than :data:`MAX_JSON_DEPTH`.
    """
    try:
        value = json.loads(raw)
    except RecursionError:
        value, deep = None, True
    except ValueError:
        return None
    else:
        deep = _depth_over(value, MAX_JSON_DEPTH)
    if deep:
        raise ProtocolError(f"the {what} nests JSON objects or arrays more than {MAX_JSON_DEPTH} levels deep")
    return value


async def _header_line(reader: asyncio.StreamReader, idle_timeout_s: float, header_timeout_s: float,
                       idle_message: str) -> bytes:
    """The next header line (b"" when the client closed between events): its first byte within
    ``idle_timeout_s`` s (else a ProtocolError saying ``idle_message``), the rest of it within
    ``header_timeout_s`` s of that."""
    try:
        first = await asyncio.wait_for(reader.readexactly(1), idle_timeout_s)
    except asyncio.IncompleteReadError:
        return b""
    except asyncio.TimeoutError:
        raise ProtocolError(idle_message, "timeout") from None
    if first == b"\n":
        return first
    try:
        return first + await asyncio.wait_for(reader.readline(), header_timeout_s)
    except asyncio.TimeoutError:
        raise ProtocolError(f"a header line was started but not ended within {header_timeout_s:g} s "
                            f"(wyoming.header_timeout_s)", "timeout") from None
    except ValueError:  # asyncio's LimitOverrunError, re-raised by readline as ValueError
        raise ProtocolError(f"a header line longer than {MAX_LINE_BYTES} bytes") from None


async def read_event(reader: asyncio.StreamReader, idle_timeout_s: float, frame_timeout_s: float,
                     header_timeout_s: float | None = None, first_event: bool = False,
                     idle_setting: str = "wyoming.idle_timeout_s") -> Event | None:
    """The next event from ``reader``, or None when the client closed the connection between events.

    ``idle_timeout_s``: s to wait for the first byte of the next header line (``idle_setting`` names
    the setting it comes from in the timeout's message); ``header_timeout_s``: s for the rest of that
    line once it started (None: ``frame_timeout_s``); ``frame_timeout_s``: s for the data and payload
    bytes its header announces, together. ``first_event``: the connection's first, which must arrive
    **whole** within ``idle_timeout_s`` s (the caller passes ``wyoming.header_timeout_s``): a client
    cannot hold a fresh slot longer by sending each part just before its own deadline.

    Raises:
        ProtocolError: a header that is not a JSON object with a string ``type``, a line over
            :data:`MAX_LINE_BYTES` or not ended in time, JSON nested over :data:`MAX_JSON_DEPTH`, a
            length that is not a number, over its cap, or that the bytes sent do not match (data
            that is not a JSON object, a closed connection or silence before the announced bytes),
            no event within ``idle_timeout_s``, or a first event not whole within it.
    """
    loop = asyncio.get_running_loop()
    header_s = frame_timeout_s if header_timeout_s is None else header_timeout_s
    whole_by = loop.time() + idle_timeout_s if first_event else math.inf
    if first_event:
        idle_message = f"no whole event within {idle_timeout_s:g} s of connecting (wyoming.header_timeout_s)"
    else:
        idle_message = f"no event for {idle_timeout_s:g} s ({idle_setting})"
    line = await _header_line(reader, idle_timeout_s, max(min(header_s, whole_by - loop.time()), 0.001),
                              idle_message)
    if not line:
        return None
    if not line.endswith(b"\n"):
        raise ProtocolError("the connection closed in the middle of a header line")
    header = _json(line, "header line")
    if header is None:
        raise ProtocolError(f"the header line is not JSON: {line[:80]!r}")
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        raise ProtocolError("the header must be a JSON object with a string 'type'")
    data = header.get("data") or {}
    if not isinstance(data, dict):
        raise ProtocolError("'data' in the header must be a JSON object")
    data_length = _length(header, "data_length", MAX_DATA_BYTES)
    payload_length = _length(header, "payload_length", MAX_PAYLOAD_BYTES)
    # data and payload share one deadline (a client cannot hold the slot twice as long by stalling
    # before each), and a first event's whole deadline may come before it
    body_by = loop.time() + frame_timeout_s
    bound = f"{frame_timeout_s:g} s (wyoming.frame_timeout_s)"
    if whole_by < body_by:
        body_by, bound = whole_by, f"{idle_timeout_s:g} s (wyoming.header_timeout_s: a new connection's first event, whole)"
    if data_length:
        extra = _json(await _exactly(reader, data_length, "data", body_by, bound), "data")
        if not isinstance(extra, dict):
            raise ProtocolError(f"the {data_length} data bytes are not a JSON object (a data_length that lies?)")
        data = {**data, **extra}
    payload = await _exactly(reader, payload_length, "payload", body_by, bound) if payload_length else None
    return Event(type=header["type"], data=data, payload=payload)
