"""An engine that unloads itself when idle: the LLM (the whole fallback chain) is freed after
``governor.idle_unload_s`` without use and loaded again on the next request; the load time of
that request is kept for the turn's latency events (``llm_reload_ms``).

Wraps :class:`edge.governor.idle.IdleUnloader`; an :class:`edge.llm.base.LlmEngine`.
"""
from __future__ import annotations

from typing import Iterator

from edge.llm.base import CancelToken, GenerationRequest, GenerationStats, LlmEngine


class IdleEngine(LlmEngine):
    name = "idle-unloading"

    def __init__(self, unloader):
        self.unloader = unloader
        self.last_stats = GenerationStats()
        self._reload_ms: float | None = None

    def stream(self, request: GenerationRequest, cancel: CancelToken | None = None) -> Iterator[str]:
        with self.unloader.use() as (engine, ms):
            self._note(ms)
            yield from engine.stream(request, cancel)
            self.last_stats = engine.last_stats

    def count_tokens(self, text: str) -> int:
        with self.unloader.use() as (engine, ms):
            self._note(ms)
            return engine.count_tokens(text)

    def smoke(self, timeout_s: float | None = None) -> GenerationStats | None:
        """The wrapped engine's smoke inference (loading it first when it was unloaded)."""
        with self.unloader.use() as (engine, ms):
            self._note(ms)
            return engine.smoke(timeout_s)

    @property
    def serving(self) -> str:
        """The wrapped engine's :attr:`~edge.llm.base.LlmEngine.serving`, or ``unloaded (idle)``."""
        if not self.unloader.loaded:
            return "unloaded (idle)"
        engine, _ = self.unloader.acquire()  # loaded already: nothing is loaded here
        return engine.serving

    @property
    def n_ctx(self) -> int:
        with self.unloader.use() as (engine, _):
            return engine.n_ctx

    def set_threads(self, threads: int) -> bool:
        """The loaded chain's ``set_threads``; while unloaded nothing (the next load is admitted
        with the governor's threads of that moment)."""
        if not self.unloader.loaded:
            return True
        engine, _ = self.unloader.acquire()
        return engine.set_threads(threads)

    def _note(self, ms: float | None) -> None:
        if ms is not None:
            self._reload_ms = ms

    def take_reload_ms(self) -> float | None:
        """The load time (ms) paid by requests since the last call, or None; clears it."""
        ms, self._reload_ms = self._reload_ms, None
        return ms

    def status(self) -> list[dict]:
        """The wrapped chain's steps when it is loaded; one ``unloaded`` step while it is not (not
        loaded just to be looked at)."""
        if self.unloader.loaded:
            return self.inner.status()
        return [{"index": 0, "engine": self.name, "model": "", "n_ctx": None, "state": "unloaded",
                 "reason": "unloaded while idle; loaded again on the next request", "active": True, "failures": 0}]

    def tick(self) -> bool:
        """Unload when idle long enough (see :meth:`edge.governor.idle.IdleUnloader.tick`)."""
        return self.unloader.tick()

    @property
    def inner(self):
        """The wrapped engine (an :class:`edge.llm.chain.EngineChain`), loaded if it was not."""
        engine, ms = self.unloader.acquire()
        self._note(ms)
        return engine

    @property
    def loaded(self) -> bool:
        return self.unloader.loaded

    def close(self) -> None:
        if self.unloader.loaded:
            engine, _ = self.unloader.acquire()  # loaded already: nothing is loaded here
            engine.close()
