"""One generation at a time: the worker thread, its bounded queue, and how a failed generation maps
to an HTTP status.

Requests wait in a queue of ``api.queue_size``; one more raises :class:`QueueFull` (the routes
answer ``503`` with ``Retry-After``).
"""
from __future__ import annotations

import asyncio
import queue
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from edge.errors import EdgeError
from edge.llm.base import CancelToken, ContextOverflow, EngineError, GenerationRequest, GenerationStats
from edge.llm.chain import NoEngine

if TYPE_CHECKING:
    from edge.service.api.metrics import Metrics


class QueueFull(EdgeError):
    """Every queue slot is taken."""


@dataclass
class Job:
    """A request waiting for, or in, the generator. Events arrive on ``events`` (an asyncio queue
    of the loop that submitted it): ``("piece", str)``, then ``("done", GenerationStats)`` or
    ``("error", Exception)``."""

    request: GenerationRequest
    loop: asyncio.AbstractEventLoop
    events: asyncio.Queue
    cancel: CancelToken = field(default_factory=CancelToken)

    def put(self, item) -> None:
        try:
            self.loop.call_soon_threadsafe(self.events.put_nowait, item)
        except RuntimeError:  # the loop is closed: the client and server are gone
            self.cancel.cancel()

    async def collect(self, first) -> tuple[str, GenerationStats | Exception]:
        """The whole answer from event ``first`` on: ``(text, stats)`` or ``(partial text, error)``."""
        parts, item = [], first
        while item[0] == "piece":
            parts.append(item[1])
            item = await self.events.get()
        return "".join(parts), item[1]


class Generator:
    """Runs jobs one after another on a worker thread; ``queue_size`` may wait."""

    def __init__(self, engine, queue_size: int, metrics: Metrics):
        self.engine = engine
        self.metrics = metrics
        self._jobs: queue.Queue = queue.Queue(maxsize=queue_size)
        self.running: Job | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="api-generator")
        self._thread.start()

    @property
    def queue_depth(self) -> int:
        return self._jobs.qsize()

    def submit(self, request: GenerationRequest) -> Job:
        """Queue a job. Raises :class:`QueueFull`."""
        loop = asyncio.get_running_loop()
        job = Job(request, loop, asyncio.Queue())
        try:
            self._jobs.put_nowait(job)
        except queue.Full:
            raise QueueFull() from None
        self.metrics.queue_depth.set(self.queue_depth)
        return job

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            self.metrics.queue_depth.set(self.queue_depth)
            if job is None:
                return
            if job.cancel.cancelled:
                job.put(("error", EngineError("cancelled before it started")))
                continue
            self.running = job
            self.metrics.generating.set(1)
            try:
                for piece in self.engine.stream(job.request, job.cancel):
                    job.put(("piece", piece))
                stats = self.engine.last_stats
                self.metrics.observe(stats)
                job.put(("done", stats))
            except Exception as e:  # noqa: BLE001 - handed to the request
                job.put(("error", e))
            finally:
                self.running = None
                self.metrics.generating.set(0)

    def close(self) -> None:
        for job in list(self._jobs.queue):
            job.cancel.cancel()
        if self.running is not None:
            self.running.cancel.cancel()
        try:
            self._jobs.put_nowait(None)
        except queue.Full:
            pass


def error_status(e: Exception) -> tuple[int, str]:
    """``(HTTP status, message)`` for a failed generation: a question too long for the context
    window or a bad value is ``400``, no healthy LLM engine ``503``, anything else ``500``."""
    if isinstance(e, ContextOverflow):
        return 400, f"that question is too long: {e}"
    if isinstance(e, NoEngine):
        return 503, str(e)
    if isinstance(e, ValueError):
        return 400, str(e)
    return 500, f"generation failed: {e}"
