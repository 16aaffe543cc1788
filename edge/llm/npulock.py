"""One NPU job at a time on the whole system, voice turns first.

The voice loop (``edge run``), ``edge serve`` and ``edge ask`` each load their own model; their
RKLLM jobs must still never overlap on the NPU. :class:`NpuArbiter` serialises them with an
exclusive ``flock`` on a lock file (``llm.npu_lock``; default :func:`default_lock_path`), taken for
the length of one ``rkllm_run``. The kernel drops a ``flock`` when its holder dies, so a killed
process (or a killed worker) never leaves the NPU marked busy.

Priority: a voice turn (:data:`VOICE`) goes before queued API generations (:data:`API`).
Inside a process, waiters are served by priority, then in arrival order. Across processes, a voice
waiter holds a shared ``flock`` on ``<lock>.voice`` while it waits; an API waiter does not try the
NPU lock while anyone holds it.
"""
from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

from edge.llm.base import PRIORITY_API, PRIORITY_VOICE, CancelToken, EngineError

#: Priorities, lower first: the voice loop's turns, then HTTP API generations.
VOICE, API = PRIORITY_VOICE, PRIORITY_API
#: How often a waiter tries the lock file again while another process holds it, s.
POLL_S = 0.005
#: Environment variable that overrides the default lock path (tests give each session its own).
ENV_LOCK = "EDGE_NPU_LOCK"


def default_lock_path() -> Path:
    """``$EDGE_NPU_LOCK``, else ``/run/lock/edge-npu.lock`` (Debian's world-writable lock
    directory, a tmpfs cleared at boot), else ``edge-npu.lock`` in the temporary directory."""
    env = os.environ.get(ENV_LOCK)
    if env:
        return Path(env)
    run_lock = Path("/run/lock")
    if run_lock.is_dir() and os.access(run_lock, os.W_OK):
        return run_lock / "edge-npu.lock"
    return Path(tempfile.gettempdir()) / "edge-npu.lock"


class NpuBusy(EngineError):
    """Another NPU job did not end within the wait."""


class NpuArbiter:
    """The system-wide NPU lock at ``path`` (None = :func:`default_lock_path`, read at each job).

    Usage::

        with arbiter.job(priority=VOICE, wait_s=60, cancel=token) as got:
            if got: ...   # this process's job runs alone on the NPU
            # got is False when ``cancel`` was set while waiting: nothing ran
    """

    def __init__(self, path: str | Path | None = None):
        self._path = Path(path) if path is not None else None
        self._cond = threading.Condition()
        self._queue: list[tuple[int, int]] = []  # (priority, ticket) of this process's waiters
        self._tickets = itertools.count()
        self.held = False  # a job of this process holds the NPU now

    @property
    def path(self) -> Path:
        return self._path if self._path is not None else default_lock_path()

    @contextlib.contextmanager
    def job(self, priority: int = VOICE, wait_s: float = 60.0,
            cancel: CancelToken | None = None) -> Iterator[bool]:
        """Hold the NPU for one job: yields True once held, False when ``cancel`` was set while
        waiting. ``wait_s``: how long to wait for other jobs, s (0 = only if free now).

        Raises:
            NpuBusy: still held by another job after ``wait_s``.
            EngineError: the lock file cannot be opened (names the file and ``llm.npu_lock``).
        """
        ticket = (priority, next(self._tickets))
        deadline = time.monotonic() + max(0.0, wait_s)
        is_cancelled: Callable[[], bool] = (lambda: cancel.cancelled) if cancel is not None else (lambda: False)
        with self._cond:
            self._queue.append(ticket)
        fd = None
        try:
            with self._voice_flag(priority):
                fd = self._wait(ticket, priority, deadline, wait_s, is_cancelled)
            if fd is None:
                yield False
                return
            with self._cond:
                self.held = True
            yield True
        finally:
            with self._cond:
                if ticket in self._queue:
                    self._queue.remove(ticket)
                if fd is not None:
                    self.held = False
                self._cond.notify_all()
            if fd is not None:
                os.close(fd)  # drops the flock

    def _wait(self, ticket, priority: int, deadline: float, wait_s: float, is_cancelled) -> int | None:
        """The lock file's descriptor holding the exclusive flock, or None when cancelled."""
        while True:
            if is_cancelled():
                return None
            with self._cond:
                first = min(self._queue) == ticket and not self.held
            if first and (priority == VOICE or not self.voice_waiting()):
                fd = self._open()
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                else:
                    with self._cond:
                        self._queue.remove(ticket)
                    return fd
            if time.monotonic() >= deadline:
                raise NpuBusy(f"NPU busy: another RKLLM job (this or another process, lock {self.path}) "
                              f"did not end within {wait_s:g} s")
            with self._cond:
                self._cond.wait(POLL_S)

    def _open(self, suffix: str = "") -> int:
        path = Path(f"{self.path}{suffix}")
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as e:
            raise EngineError(f"cannot open the NPU lock file {path}: {e.strerror or e}; set llm.npu_lock to a "
                              f"file in a folder every edge process can write (e.g. /run/lock/edge-npu.lock)") from e

    @contextlib.contextmanager
    def _voice_flag(self, priority: int) -> Iterator[None]:
        """A voice waiter's shared flock on ``<lock>.voice``, held while it waits."""
        if priority != VOICE:
            yield
            return
        fd = self._open(".voice")
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)  # only ever blocked for an API waiter's instant check
            yield
        finally:
            os.close(fd)

    def voice_waiting(self) -> bool:
        """True when a voice turn waits for the NPU, in this or another process."""
        with self._cond:
            if any(p == VOICE for p, _ in self._queue):
                return True
        fd = self._open(".voice")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False


#: The arbiter of every RKLLM engine of this process that names no lock file of its own.
DEFAULT = NpuArbiter()
_BY_PATH: dict[str, NpuArbiter] = {}
_BY_PATH_LOCK = threading.Lock()


def arbiter_for(path: str | Path | None) -> NpuArbiter:
    """The one arbiter of this process for the lock file ``path`` (None: :data:`DEFAULT`), so that
    engines naming the same file also share the in-process priority queue."""
    if path is None:
        return DEFAULT
    key = os.path.abspath(os.fspath(path))
    with _BY_PATH_LOCK:
        return _BY_PATH.setdefault(key, NpuArbiter(key))
