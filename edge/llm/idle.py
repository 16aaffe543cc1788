"""An engine that unloads itself when idle: the LLM (the whole fallback chain) is freed after
``governor.idle_unload_s`` without use and loaded again on the next request; the load time of
that request is kept for the turn's latency events (``llm_reload_ms``).

Wraps :class:`edge.governor.IdleUnloader`; implements :class:`edge.llm.base.Engine`.
"""
from __future__ import annotations

from typing import Iterator

from edge.llm.base import CancelToken, GenerationRequest, GenerationStats


class IdleEngine:
    name = "idle-unloading"

    def __init__(self, unloader):
        self.unloader = unloader
        self.last_stats = GenerationStats()
        self._reload_ms: float | None = None

    def stream(self, request: GenerationRequest, cancel: CancelToken | None = None) -> Iterator[str]:
        with self.unloader.use() as (engine, ms):
            if ms is not None:
                self._reload_ms = ms
            yield from engine.stream(request, cancel)
            self.last_stats = engine.last_stats

    def count_tokens(self, text: str) -> int:
        with self.unloader.use() as (engine, ms):
            if ms is not None:
                self._reload_ms = ms
            return engine.count_tokens(text)

    @property
    def n_ctx(self) -> int:
        with self.unloader.use() as (engine, _):
            return engine.n_ctx

    def take_reload_ms(self) -> float | None:
        """The load time (ms) paid by requests since the last call, or None; clears it."""
        ms, self._reload_ms = self._reload_ms, None
        return ms

    def tick(self) -> bool:
        """Unload when idle long enough (see :meth:`edge.governor.IdleUnloader.tick`)."""
        return self.unloader.tick()

    @property
    def inner(self):
        """The wrapped engine (an :class:`edge.llm.chain.EngineChain`), loaded if it was not."""
        engine, ms = self.unloader.acquire()
        if ms is not None:
            self._reload_ms = ms
        return engine

    @property
    def loaded(self) -> bool:
        return self.unloader.loaded

    def close(self) -> None:
        if self.unloader.loaded:
            engine = self.unloader._engine
            if hasattr(engine, "close"):
                engine.close()
