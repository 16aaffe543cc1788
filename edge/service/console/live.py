"""Following the events files the voice loop and the Wyoming server write (one JSON event per
line, :mod:`edge.events`), for the Live page's server-sent events."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import AsyncIterator, Callable

POLL_S = 0.2  # s between looks at the files
HEARTBEAT_S = 15.0  # s between keep-alive comments while nothing happens
MAX_LINE_BYTES = 256 * 1024  # bytes; a longer line is skipped
HEAD_BYTES = 128  # bytes of the file's start remembered to notice it was rewritten


class Follower:
    """New complete lines of ``path`` since the last call; starts at the end of the file (what
    happens from now on) and starts over when the file was rewritten (a new ``edge run`` truncates
    it): seen as a smaller size or as other first bytes than before (:data:`HEAD_BYTES`, which
    hold the first event's turn id)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.offset, self.partial, self.head = 0, b"", b""
        if self.path.exists():
            self.offset = self.path.stat().st_size
            self.head = self._head()

    def _head(self) -> bytes:
        try:
            with open(self.path, "rb") as f:
                return f.read(HEAD_BYTES)
        except FileNotFoundError:
            return b""

    def new_lines(self) -> list[bytes]:
        """Whole lines appended since the last call (a half-written last line waits for its end)."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            self.offset, self.partial, self.head = 0, b"", b""
            return []
        if size < self.offset or (self.head and not self._head().startswith(self.head)):
            self.offset, self.partial, self.head = 0, b"", b""  # rewritten: a new run's events
        if size == self.offset:
            return []
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            chunk = f.read(size - self.offset)
        if len(self.head) < HEAD_BYTES:
            self.head = self._head()
        self.offset += len(chunk)
        *lines, self.partial = (self.partial + chunk).split(b"\n")
        if len(self.partial) > MAX_LINE_BYTES:
            self.partial = b""
        return [ln for ln in lines if ln.strip() and len(ln) <= MAX_LINE_BYTES]


def parse(line: bytes) -> dict | None:
    """One event line → its dict, or None when it is not a JSON object with a ``type``."""
    try:
        d = json.loads(line)
    except ValueError:
        return None
    return d if isinstance(d, dict) and isinstance(d.get("type"), str) else None


async def stream(paths: tuple[Path, ...], gone: Callable[[], object], max_s: float = 3600.0) -> AsyncIterator[str]:
    """Server-sent events (``data: <event JSON>``) for each event appended to ``paths``, until
    ``await gone()`` is true (the client left) or ``max_s`` s passed (the browser reconnects)."""
    followers = [Follower(p) for p in paths]
    loop = asyncio.get_running_loop()
    start = last = loop.time()
    yield "retry: 2000\n\n"
    while loop.time() - start < max_s and not await gone():
        sent = False
        for f in followers:
            for line in f.new_lines():
                event = parse(line)
                if event is not None:
                    yield f"data: {json.dumps(event, ensure_ascii=False)}\n\n"
                    sent = True
        now = loop.time()
        if sent:
            last = now
        elif now - last > HEARTBEAT_S:
            yield ": keep-alive\n\n"
            last = now
        await asyncio.sleep(POLL_S)
