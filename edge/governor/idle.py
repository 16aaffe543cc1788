"""Idle unload (:class:`IdleUnloader`): the LLM is unloaded after ``governor.idle_unload_s``
without use and reloaded on demand; the load time is returned (``reload_ms``) for the turn's
latency events."""
from __future__ import annotations

import contextlib
import gc
import logging
import threading
import time
from typing import Any, Callable, Iterator

log = logging.getLogger("edge.governor")


class IdleUnloader:
    """Keeps one LLM engine: loads it on demand, unloads it after ``idle_unload_s`` without use.

    ``load()`` builds the engine (e.g. :func:`edge.llm.loader.step_loader`, which admits it first);
    ``unload(engine)`` frees it (default: its ``close()`` if it has one, then the reference is
    dropped). ``clock`` (s) measures idleness and is injected in tests; the load time itself is
    measured with ``time.perf_counter``. ``on_load(ms)`` / ``on_unload(idle_s)`` are called after
    each. Thread-safe; an engine in use (inside :meth:`use`) is never unloaded.

    Usage::

        with unloader.use() as (engine, reload_ms):   # reload_ms: None if it was loaded already
            ...                                       # put reload_ms into the turn's latency events
        unloader.tick()                               # from a timer: unloads when idle too long
    """

    def __init__(self, load: Callable[[], Any], idle_unload_s: float, *, clock: Callable[[], float] = time.monotonic,
                 unload: Callable[[Any], None] | None = None, on_load: Callable[[float], None] | None = None,
                 on_unload: Callable[[float], None] | None = None):
        self._load = load
        self._unload = unload
        self.idle_unload_s = idle_unload_s
        self.clock = clock
        self.on_load = on_load
        self.on_unload = on_unload
        self._engine = None
        self._busy = 0
        self._last_used = clock()
        self._lock = threading.RLock()
        self.loads = 0
        self.unloads = 0
        self.last_load_ms: float | None = None

    @property
    def loaded(self) -> bool:
        return self._engine is not None

    @property
    def engine(self) -> Any | None:
        """The loaded engine, or ``None``; never loads it (see :meth:`acquire`)."""
        return self._engine

    def acquire(self) -> tuple[Any, float | None]:
        """The engine, loading it if needed: ``(engine, load_ms or None)``. Marks it used.

        Raises whatever ``load()`` raises (e.g. :class:`edge.governor.admission.AdmissionError`); nothing
        is kept then.
        """
        with self._lock:
            ms = None
            if self._engine is None:
                t0 = time.perf_counter()
                engine = self._load()
                ms = round(1000 * (time.perf_counter() - t0), 1)
                self._engine = engine
                self.loads += 1
                self.last_load_ms = ms
                log.info("llm: loaded in %.1f ms (load %d)", ms, self.loads)
                if self.on_load:
                    self.on_load(ms)
            self._last_used = self.clock()
            return self._engine, ms

    @contextlib.contextmanager
    def use(self) -> Iterator[tuple[Any, float | None]]:
        """``with unloader.use() as (engine, reload_ms):`` — not unloaded while inside."""
        with self._lock:
            engine, ms = self.acquire()
            self._busy += 1
        try:
            yield engine, ms
        finally:
            with self._lock:
                self._busy -= 1
                self._last_used = self.clock()

    def idle_s(self) -> float:
        """Seconds since the engine was last used (by ``clock``)."""
        return self.clock() - self._last_used

    def tick(self) -> bool:
        """Unload the engine if loaded, not in use, and idle ≥ ``idle_unload_s`` (0 = never).
        Returns True if it unloaded now."""
        with self._lock:
            if self._engine is None or self._busy or self.idle_unload_s <= 0:
                return False
            idle = self.idle_s()
            if idle < self.idle_unload_s:
                return False
            engine, self._engine = self._engine, None
            self.unloads += 1
        try:
            if self._unload is not None:
                self._unload(engine)
            elif callable(getattr(engine, "close", None)):
                engine.close()
        except Exception as e:  # freeing must not stop the service
            log.warning("llm: unload failed: %s", e)
        del engine
        gc.collect()
        log.info("llm: unloaded after %.0f s idle ≥ governor.idle_unload_s %g s", idle, self.idle_unload_s)
        if self.on_unload:
            self.on_unload(idle)
        return True
