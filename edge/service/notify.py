"""Talking to systemd from a ``Type=notify`` service: READY=1, STATUS=..., WATCHDOG=1, STOPPING=1.

Messages go through ``systemd.daemon.notify`` (systemd-python, a wrapper of libsystemd's
``sd_notify(3)``) to the socket named by ``$NOTIFY_SOCKET``; outside systemd (no ``NOTIFY_SOCKET``)
every call is a no-op, so the same code runs in a terminal.

Watchdog pacing follows ``sd_watchdog_enabled(3)``: ``$WATCHDOG_USEC`` is the unit's ``WatchdogSec``
in µs, and ``$WATCHDOG_PID``, when set, must be this process's pid. The service must ping within that
time; :meth:`Notifier.watchdog` is cheap to call from every audio frame (80 ms) and sends at most one
``WATCHDOG=1`` per half interval (systemd's recommendation: "call sd_notify() ... at about half the
time interval").

:meth:`Notifier.status` sends ``STATUS=`` only when the text changes, so the audio loop may call it
every frame with the current state (``listening``, ``awake``, ``waiting for capture device``, ...).
"""
from __future__ import annotations

import os
import time
from typing import Callable, Mapping

#: Fraction of WatchdogSec between pings (sd_watchdog_enabled(3): "about half").
PING_FRACTION = 0.5


def watchdog_usec(env: Mapping[str, str] = os.environ, pid: int | None = None) -> int | None:
    """The watchdog interval in µs for this process, or None when the watchdog is off.

    None when ``WATCHDOG_USEC`` is unset, not a positive integer, or ``WATCHDOG_PID`` names another
    process (the variables were inherited from a parent)."""
    raw = env.get("WATCHDOG_USEC")
    if not raw:
        return None
    try:
        usec = int(raw)
    except ValueError:
        return None
    if usec <= 0:
        return None
    wpid = env.get("WATCHDOG_PID")
    if wpid and wpid.isdigit() and int(wpid) != (os.getpid() if pid is None else pid):
        return None
    return usec


class Notifier:
    """sd_notify for one service process.

    Args:
        env: the environment to read ``NOTIFY_SOCKET`` / ``WATCHDOG_USEC`` / ``WATCHDOG_PID`` from.
        clock: a monotonic clock in seconds (``time.monotonic``), for pacing the watchdog pings.
        send: the sender (``systemd.daemon.notify``); it receives the whole message text.
    Attributes:
        enabled: a notify socket is set.
        watchdog_interval_s: ``WatchdogSec`` in s, or None when the watchdog is off.
        sent: every message sent, in order (for logs and tests).
    """

    def __init__(self, env: Mapping[str, str] | None = None, clock: Callable[[], float] = time.monotonic,
                 send: Callable[[str], object] | None = None):
        env = os.environ if env is None else env
        self.socket = env.get("NOTIFY_SOCKET") or None
        self.enabled = self.socket is not None
        usec = watchdog_usec(env)
        self.watchdog_interval_s = usec / 1e6 if usec else None
        self._clock = clock
        self._last_ping: float | None = None
        self._status: str | None = None
        self.sent: list[str] = []
        if send is None and self.enabled:
            from systemd import daemon  # systemd-python: sd_notify(3)

            def send(msg: str, _notify=daemon.notify):
                return _notify(msg)
        self._send = send

    def _notify(self, msg: str) -> None:
        if not self.enabled or self._send is None:
            return
        self._send(msg)
        self.sent.append(msg)

    @property
    def ping_every_s(self) -> float | None:
        """Seconds between ``WATCHDOG=1`` pings (half of WatchdogSec), or None."""
        return self.watchdog_interval_s * PING_FRACTION if self.watchdog_interval_s else None

    def ready(self, status: str | None = None) -> None:
        """``READY=1`` (with ``STATUS=``): start-up is complete."""
        if status is not None:
            self._status = status
        self._notify("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def status(self, text: str) -> None:
        """``STATUS=text``, sent only when it differs from the last one."""
        if text != self._status:
            self._status = text
            self._notify(f"STATUS={text}")

    def watchdog(self, force: bool = False) -> bool:
        """``WATCHDOG=1`` if half the watchdog interval passed since the last ping (or ``force``);
        returns whether a ping was sent. A no-op when the watchdog is off."""
        if self.watchdog_interval_s is None:
            return False
        now = self._clock()
        if not force and self._last_ping is not None and now - self._last_ping < self.ping_every_s:
            return False
        self._last_ping = now
        self._notify("WATCHDOG=1")
        return True

    def sleep(self, seconds: float, sleeper: Callable[[float], None] = time.sleep) -> None:
        """Sleep ``seconds`` in slices short enough to keep the watchdog fed."""
        step = min(seconds, self.ping_every_s) if self.ping_every_s else seconds
        end = self._clock() + seconds
        while True:
            self.watchdog()
            left = end - self._clock()
            if left <= 0:
                return
            sleeper(min(step, left))

    def stopping(self, status: str | None = None) -> None:
        """``STOPPING=1``: shutdown has begun."""
        self._notify("STOPPING=1" + (f"\nSTATUS={status}" if status else ""))
