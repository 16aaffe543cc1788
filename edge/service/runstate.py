"""The live service's state file: what ``edge status`` and ``/metrics`` show about the running daemon.

The daemon (:mod:`edge.service.supervisor`) is one process; ``edge status`` and ``edge serve`` are others. The
daemon keeps a :class:`ServiceState` and writes it as JSON, atomically (a temporary file renamed over
the old one, so a reader never sees half a file), every ``service.state_interval_s`` s from a
heartbeat thread (so a long LLM turn or model load does not look like a dead service) and at once on
every capture change, turn-state change and turn end. The audio loop only notes the time of its last frame
(``last_frame_age_s``). Readers call :func:`read_state`.

Path: ``service.state_file``; by default ``/run/edge/service-state.json`` when ``/run/edge`` exists
(the unit's ``RuntimeDirectory=edge``: tmpfs, mode 0750, readable by the ``edge`` group, removed at
stop), else ``service-state.json`` next to the store.

Capture counters (case C04/C05; what Rhasspy and Wyoming satellites leave to the log):

* ``overflows``: chunks the capture ring buffer dropped because the consumer fell behind
  (:class:`drivers.audio.capture.Capture`), summed over every device opened since the start;
* ``overflow_stalls``: consumer stalls that dropped chunks (one warning each);
* ``xruns``: input overflows PortAudio itself reported (the driver lost samples);
* ``lost_events``: outages of the capture device; ``reopens``: outages that ended with the device back;
* ``open_attempts``: every try to open a capture device, failed ones included.

With the recognizer in a worker process (:mod:`edge.stages.asr.worker`), ``asr_worker`` holds its
:meth:`~edge.stages.asr.worker.AsrWorker.status`: ``pid``, ``rss_bytes``, ``peak_rss_bytes``,
``budget_bytes``, ``calls`` (utterances), ``recycles`` (replaced for their memory), ``restarts``
(replaced after dying), ``last_reason``.
"""
from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import stat
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

from drivers.audio.capture import CaptureTotals

log = logging.getLogger("edge.service")

STATE_VERSION = 1
MAX_STATE_BYTES = 1 << 20  # a state file is ~1 KiB; anything larger is not one
#: Counters a :class:`drivers.audio.capture.Capture` keeps itself; summed over every capture opened.
CAPTURE_COUNTERS = CaptureTotals.NAMES


#: The unit's ``RuntimeDirectory=edge`` (tmpfs; systemd creates it at start and removes it at stop).
RUNTIME_DIR = Path("/run/edge")


def state_path(settings, runtime_dir: Path = RUNTIME_DIR) -> Path:
    """``service.state_file``; else ``service-state.json`` in ``/run/edge`` when that directory
    exists (the installed service: a tmpfs, so the heartbeat does not wear the board's flash);
    else next to the store (a development checkout)."""
    p = settings.service.state_file
    if p:
        return Path(p).expanduser()
    if runtime_dir.is_dir():
        return runtime_dir / "service-state.json"
    return Path(settings.store.path).expanduser().parent / "service-state.json"


class ServiceState:
    """The daemon's counters and state, written to ``path`` as JSON.

    Args:
        path: the state file.
        interval_s: s between heartbeat writes (:meth:`start`); capture changes write at once.
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
        self._totals = CaptureTotals()  # of every capture opened so far
        self.last_frame: float | None = None
        self._lock = threading.Lock()
        self._warned = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: the recognizer worker's status (``AsrWorker.status``), None without one
        self.asr_worker: Callable[[], dict[str, Any]] | None = None

    # -- capture lifecycle ---------------------------------------------------------------------------
    # The service calls these from its drivers.audio.capture.CaptureObserver, at the moments the
    # capture's ResilientCapture counts the same things, so both show the same counters.
    def open_failed(self, err: Exception | str) -> None:
        """An attempt to open a capture device failed (or it opened but delivered nothing)."""
        with self._lock:
            self.capture["open_attempts"] += 1
            self.capture["last_error"] = str(err)
        self.write()

    def opened(self, cap) -> None:
        """``cap`` (a :class:`drivers.audio.capture.Capture`) is open and delivers audio; after a loss
        this is a reopen."""
        with self._lock:
            c = self.capture
            c["open_attempts"] += 1
            if c["state"] == "lost":
                c["reopens"] += 1
            c.update(state="ok", device=str(cap.device_name), rate=int(cap.rate), channels=int(cap.channels))
            self._totals.adopt(cap)
        self.write()

    def closed(self, cap, lost: Exception | str | None = None) -> None:
        """``cap`` was closed; its counters join the totals. ``lost``: the device went away
        (state ``lost``), else it was closed on purpose (state ``closed``)."""
        with self._lock:
            self._totals.retire(cap)
            if lost is not None:
                self.capture.update(state="lost", last_error=str(lost))
                self.capture["lost_events"] += 1
            else:
                self.capture["state"] = "closed"
        self.write()

    def counters(self) -> dict[str, int]:
        """``overflows``, ``overflow_stalls``, ``xruns`` over every capture opened so far."""
        return self._totals.as_dict()

    # -- turns -----------------------------------------------------------------------------------------
    def event(self, e) -> None:
        """Follow the pipeline's events: ``turn`` is the turn state of the last ``state`` event
        (:class:`edge.loop.state.TurnState` values); each ``turn_end`` is one more turn (``turns``
        counts wake-ups handled, those that heard no speech included). Both write at once."""
        if e.type == "state":
            self.turn = e.state
            self.write()
        elif e.type == "turn_end":
            self.turns += 1
            self.write()

    # -- the file ----------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        now = self.clock()
        with self._lock:
            capture = {**self.capture, **self.counters()}
        frame_age = None if self.last_frame is None else round(now - self.last_frame, 1)
        doc = {"version": STATE_VERSION, "pid": os.getpid(), "started": round(self.started, 3),
               "updated": round(now, 3), "uptime_s": round(now - self.started, 1), "turn": self.turn,
               "turns": self.turns, "interval_s": self.interval_s, "last_frame_age_s": frame_age,
               "capture": capture}
        if self.asr_worker is not None:
            doc["asr_worker"] = self.asr_worker()
        return doc

    def tick(self) -> None:
        """From the audio loop, per frame: note the time (cheap; the heartbeat thread writes)."""
        self.last_frame = self.clock()

    def start(self) -> "ServiceState":
        """Write now, then every ``interval_s`` from a daemon thread until :meth:`stop`."""
        self.write()
        if self._thread is None:
            self._thread = threading.Thread(target=self._beat, name="edge-state", daemon=True)
            self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.write()

    def stop(self, turn: str = "stopped") -> None:
        """End the heartbeat and write a last time with ``turn`` (e.g. ``stopped``)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self.turn = turn
        self.write()

    def write(self) -> None:
        """Write the snapshot atomically. Never raises: an unwritable path is logged (once, until a
        write works again) and the service goes on without its state file; no temporary file is
        left behind."""
        doc = json.dumps(self.snapshot())
        with self._lock:
            tmp = None
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=".service-state.", dir=self.path.parent)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(doc)
                os.chmod(tmp, 0o640)
                os.replace(tmp, self.path)
                tmp = None
                self._warned = False
            except OSError as e:
                if not self._warned:
                    log.warning("service state file %s not written: %s (set service.state_file to a writable file)",
                                self.path, e)
                    self._warned = True
            finally:
                if tmp is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(tmp)


def read_state(path: str | Path, clock: Callable[[], float] = time.time) -> dict[str, Any]:
    """The state file as written by the daemon, plus ``running`` and ``age_s``; never raises.

    ``running`` is True when the file's process is alive and the file is fresher than three
    heartbeat intervals. Without a readable, well-formed file (missing, not a regular file, over
    1 MiB, not JSON, wrong version or field types): ``{"running": False, "path": ..., "reason": ...}``.
    """
    p = Path(path)
    try:
        st = _load(p)
    except FileNotFoundError:
        return {"running": False, "path": str(p), "reason": "no state file: the service has not run here "
                "(or give edge status the service's --config)"}
    except PermissionError as e:
        return {"running": False, "path": str(p), "reason": f"cannot read the state file ({e.strerror}); run as "
                "the service user or a member of its group, or with sudo"}
    except (OSError, ValueError, TypeError, RecursionError) as e:
        return {"running": False, "path": str(p), "reason": f"unreadable state file: {e}"}
    age = clock() - st["updated"]
    alive = _alive(st["pid"])
    fresh = age <= 3 * st["interval_s"] + 1.0
    st.update(path=str(p), age_s=round(age, 1), running=alive and fresh)
    if not st["running"]:
        st["reason"] = "process gone" if not alive else f"no update for {age:.0f} s (service hung?)"
        if st["capture"].get("state") == "ok":
            st["capture"]["state"] = "unknown"  # nobody reads the device now
    return st


def _load(p: Path) -> dict[str, Any]:
    """Read and check the state file; raises OSError/ValueError/TypeError with the reason."""
    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO must not block the reader
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError(f"{p} is not a regular file")
    with os.fdopen(fd, "rb") as f:
        raw = f.read(MAX_STATE_BYTES + 1)
    if len(raw) > MAX_STATE_BYTES:
        raise ValueError(f"larger than {MAX_STATE_BYTES} bytes")
    st = json.loads(raw)
    if not isinstance(st, dict) or st.get("version") != STATE_VERSION:
        raise ValueError(f"not a version {STATE_VERSION} state file")

    def number(key: str, where: dict, integer: bool = False) -> float:
        v = where.get(key)
        if isinstance(v, bool) or not isinstance(v, int if integer else (int, float)) or not math.isfinite(v):
            raise ValueError(f"field {key!r} is {v!r}, not a {'whole ' if integer else ''}number")
        return v

    for k in ("updated", "started", "interval_s"):
        number(k, st)
    if not 0 < number("pid", st, integer=True) < 1 << 22:  # Linux pid_max is at most 2^22
        raise ValueError(f"field 'pid' is {st['pid']!r}, not a process id")
    number("turns", st, integer=True)
    cap = st.get("capture")
    if not isinstance(cap, dict):
        raise ValueError(f"field 'capture' is {type(cap).__name__}, not an object")
    for k in (*CAPTURE_COUNTERS, "lost_events", "reopens", "open_attempts"):
        number(k, cap, integer=True)
    if not isinstance(st.get("turn"), str):
        raise ValueError("field 'turn' is not a string")
    w = st.get("asr_worker")
    if w is not None:
        if not isinstance(w, dict):
            raise ValueError(f"field 'asr_worker' is {type(w).__name__}, not an object")
        for k in ("calls", "recycles", "restarts"):
            number(k, w, integer=True)
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
    frame = st.get("last_frame_age_s")
    head = (f"service: {'running' if st['running'] else 'NOT running'} (pid {st.get('pid')}, up "
            f"{st.get('uptime_s', 0):.0f} s, {st.get('turns', 0)} turns, {st.get('turn')}; state {st.get('age_s')} s old"
            f"{'' if frame is None else f', last audio frame {frame} s before that'})")
    if not st["running"]:
        head += f": {st.get('reason')}"
    dev = f"{c.get('device')} at {c.get('rate')} Hz x {c.get('channels')} ch" if c.get("device") else "no device yet"
    cap = (f"capture: {c.get('state')} ({dev}); overflows {c.get('overflows', 0)} in {c.get('overflow_stalls', 0)} "
           f"stalls, xruns {c.get('xruns', 0)}, lost {c.get('lost_events', 0)}, reopened {c.get('reopens', 0)}, "
           f"open attempts {c.get('open_attempts', 0)}")
    lines = [head, cap]
    if c.get("last_error"):
        lines.append(f"capture last error: {c['last_error']}")
    w = st.get("asr_worker")
    if w:
        def mib(v) -> str:
            return "unknown" if not isinstance(v, (int, float)) else f"{v / 2**20:.1f} MiB"

        lines.append(f"asr worker: pid {w.get('pid')}, RSS {mib(w.get('rss_bytes'))} (peak {mib(w.get('peak_rss_bytes'))}, "
                     f"budget {'none yet' if w.get('budget_bytes') is None else mib(w['budget_bytes'])}); "
                     f"{w['calls']} utterances, recycled {w['recycles']} times, restarted {w['restarts']} times"
                     + (f"; last recycle: {w['last_reason']}" if w.get("last_reason") else ""))
    return lines
