"""The live service's state file: what ``edge status`` and ``/metrics`` show about the running daemon.

The daemon (:mod:`edge.daemon`) is one process; ``edge status`` and ``edge serve`` are others. The
daemon keeps a :class:`ServiceState` and writes it as JSON, atomically (a temporary file renamed over
the old one, so a reader never sees half a file), at most every ``service.state_interval_s`` s from
the audio loop and at once on every capture change. Readers call :func:`read_state`.

Path: ``service.state_file``, default ``service-state.json`` next to the store (under systemd that is
``/var/lib/edge``, the one directory the unit may write, readable by the ``edge`` group).

Capture counters (case C04/C05; what Rhasspy and Wyoming satellites leave to the log):

* ``overflows``: chunks the capture ring buffer dropped because the consumer fell behind
  (:class:`drivers.audio.device.Capture`), summed over every device opened since the start;
* ``overflow_stalls``: consumer stalls that dropped chunks (one warning each);
* ``xruns``: input overflows PortAudio itself reported (the driver lost samples);
* ``lost_events``: outages of the capture device; ``reopens``: outages that ended with the device back;
* ``open_attempts``: every try to open a capture device, failed ones included.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

STATE_VERSION = 1
#: Counters a :class:`drivers.audio.device.Capture` keeps itself; summed over every capture opened.
CAPTURE_COUNTERS = ("overflows", "overflow_stalls", "xruns")


def state_path(settings) -> Path:
    """``service.state_file``, or ``service-state.json`` in the store's directory."""
    p = getattr(settings.service, "state_file", None)
    return Path(p) if p else Path(settings.store.path).parent / "service-state.json"


class ServiceState:
    """The daemon's counters and state, written to ``path`` as JSON.

    Args:
        path: the state file.
        interval_s: :meth:`tick` writes at most this often (s); capture changes write at once.
        clock: wall clock (s since the epoch), injectable in tests.
    """

    def __init__(self, path: str | Path, interval_s: float = 5.0, clock: Callable[[], float] = time.time):
        self.path = Path(path)
        self.interval_s = float(interval_s)
        self.clock = clock
        self.started = clock()
        self.turn = "starting"
        self.turns = 0
        self.capture: dict[str, Any] = {"state": "waiting", "device": None, "rate": None, "channels": None,
                                        "lost_events": 0, "reopens": 0, "open_attempts": 0, "last_error": ""}
        self._done = dict.fromkeys(CAPTURE_COUNTERS, 0)  # of captures already closed
        self._cap = None
        self._written = float("-inf")

    # -- capture lifecycle ---------------------------------------------------------------------------
    def open_failed(self, err: Exception | str) -> None:
        self.capture["open_attempts"] += 1
        self.capture["last_error"] = str(err)
        self.write()

    def opened(self, cap) -> None:
        """``cap`` (a :class:`drivers.audio.device.Capture`) is open; after a loss this is a reopen."""
        c = self.capture
        c["open_attempts"] += 1
        if c["state"] == "lost":
            c["reopens"] += 1
        c.update(state="ok", device=str(cap.device_name), rate=int(cap.rate), channels=int(cap.channels))
        self._cap = cap
        self.write()

    def closed(self, cap, lost: Exception | str | None = None) -> None:
        """``cap`` was closed; its counters join the totals. ``lost``: the device went away."""
        if cap is self._cap:
            for k in CAPTURE_COUNTERS:
                self._done[k] += int(getattr(cap, k, 0))
            self._cap = None
        if lost is not None:
            self.capture.update(state="lost", last_error=str(lost))
            self.capture["lost_events"] += 1
        self.write()

    def counters(self) -> dict[str, int]:
        """``overflows``, ``overflow_stalls``, ``xruns`` over every capture opened so far."""
        cap = self._cap
        return {k: self._done[k] + (int(getattr(cap, k, 0)) if cap is not None else 0) for k in CAPTURE_COUNTERS}

    # -- turns -----------------------------------------------------------------------------------------
    def event(self, e) -> None:
        """Follow the pipeline's events (``wake`` → awake; ``turn_end`` → listening, one more turn)."""
        if e.type == "wake":
            self.turn = "awake"
        elif e.type == "turn_end":
            self.turn = "listening"
            self.turns += 1
            self.write()

    # -- the file ----------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        now = self.clock()
        return {"version": STATE_VERSION, "pid": os.getpid(), "started": round(self.started, 3),
                "updated": round(now, 3), "uptime_s": round(now - self.started, 1), "turn": self.turn,
                "turns": self.turns, "interval_s": self.interval_s,
                "capture": {**self.capture, **self.counters()}}

    def tick(self) -> None:
        """From the audio loop: write when ``interval_s`` has passed since the last write."""
        if self.clock() - self._written >= self.interval_s:
            self.write()

    def write(self) -> None:
        """Write the snapshot atomically. An unwritable path is logged once per call site, never raised:
        the service goes on without its state file."""
        self._written = self.clock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".service-state.", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.snapshot(), f)
            os.chmod(tmp, 0o640)
            os.replace(tmp, self.path)
        except OSError as e:
            import logging

            logging.getLogger("edge.service").warning("service state file %s not written: %s", self.path, e)


def read_state(path: str | Path, clock: Callable[[], float] = time.time) -> dict[str, Any]:
    """The state file as written by the daemon, plus ``running`` and ``age_s``; never raises.

    ``running`` is True when the file's process is alive and the file is fresher than three write
    intervals (the audio loop writes every ``interval_s``; a hung loop stops writing). Without a
    readable file: ``{"running": False, "path": ..., "reason": ...}``.
    """
    p = Path(path)
    try:
        st = json.loads(p.read_text(encoding="utf-8"))
        if not isinstance(st, dict) or st.get("version") != STATE_VERSION:
            raise ValueError(f"not a version {STATE_VERSION} state file")
    except FileNotFoundError:
        return {"running": False, "path": str(p), "reason": "no state file: the service has not run here"}
    except (OSError, ValueError) as e:
        return {"running": False, "path": str(p), "reason": f"unreadable state file: {e}"}
    age = clock() - float(st.get("updated", 0))
    alive = _alive(int(st.get("pid", 0)))
    fresh = age <= 3 * float(st.get("interval_s", 5.0)) + 1.0
    st.update(path=str(p), age_s=round(age, 1), running=alive and fresh)
    if not st["running"]:
        st["reason"] = "process gone" if not alive else f"no update for {age:.0f} s (audio loop stalled?)"
    return st


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process (the service runs as 'edge'): it exists
        return True
    return True


def format_service(st: dict[str, Any]) -> list[str]:
    """Readable lines for ``edge status``."""
    if "capture" not in st:
        return [f"service: not running ({st.get('reason')}; {st.get('path')})"]
    c = st["capture"]
    head = (f"service: {'running' if st['running'] else 'NOT running'} (pid {st.get('pid')}, up "
            f"{st.get('uptime_s', 0):.0f} s, {st.get('turns', 0)} turns, {st.get('turn')}; state {st.get('age_s')} s old)")
    if not st["running"]:
        head += f": {st.get('reason')}"
    dev = f"{c.get('device')} at {c.get('rate')} Hz x {c.get('channels')} ch" if c.get("device") else "no device yet"
    cap = (f"capture: {c.get('state')} ({dev}); overflows {c.get('overflows', 0)} in {c.get('overflow_stalls', 0)} "
           f"stalls, xruns {c.get('xruns', 0)}, lost {c.get('lost_events', 0)}, reopened {c.get('reopens', 0)}, "
           f"open attempts {c.get('open_attempts', 0)}")
    lines = [head, cap]
    if c.get("last_error"):
        lines.append(f"capture last error: {c['last_error']}")
    return lines
