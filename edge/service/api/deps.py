"""What the route modules share: the app's :class:`ApiContext` (a FastAPI dependency), request
counting, the two error body shapes, and running a generation for a client that may leave: a
client that disconnects while its request waits or generates cancels it, streamed or not."""
from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from edge.llm.base import PRIORITY_API, GenerationRequest, GenerationStats
from edge.service.api.queue import Generator, Job, QueueFull, error_status

if TYPE_CHECKING:
    from edge.config import ApiSettings
    from edge.service.api.metrics import Metrics


@dataclass
class ApiContext:
    """One app's parts: ``engine`` (an :class:`edge.llm.chain.EngineChain` or any
    :class:`edge.llm.base.Engine`), its :class:`edge.config.ApiSettings`, the default sampling
    temperature, the :class:`~edge.service.api.queue.Generator` and the
    :class:`~edge.service.api.metrics.Metrics`. Kept in ``app.state.api``."""

    engine: Any
    settings: ApiSettings
    default_temperature: float
    generator: Generator
    metrics: Metrics
    #: the ``edge-stock`` model's :class:`edge.service.api.stock.StockDesk`, or None (not served)
    stock: Any = None

    def is_stock(self, model: str) -> bool:
        """Whether a request for ``model`` is for the grounded dialog (``api.stock_model_name``)."""
        return self.stock is not None and model == self.settings.stock_model_name

    def name_of(self, model: str) -> str:
        """The model name to answer with: the request's, else ``api.model_name``."""
        return model or self.settings.model_name

    def count(self, path: str, code: int) -> None:
        """One more ``edge_api_requests_total{endpoint=path, code}``."""
        self.metrics.requests.labels(path, str(code)).inc()

    def error(self, path: str, code: int, msg: str, openai: bool, headers: dict | None = None) -> JSONResponse:
        """A counted error response: OpenAI's ``{error: {message, type, code}}`` or Ollama's ``{error}``."""
        self.count(path, code)
        body = ({"error": {"message": msg, "type": "server_error" if code >= 500 else "invalid_request_error",
                           "code": code}} if openai else {"error": msg})
        return JSONResponse(body, status_code=code, headers=headers)

    def gone(self, path: str) -> Response:
        """The answer to a client that has left (nobody reads it): 499, counted."""
        self.count(path, 499)
        return Response(status_code=499)

    async def start(self, path: str, req: GenerationRequest, request: Request, openai: bool = False):
        """Submit ``req`` and wait for its first event: ``(job, first event, None)``, or
        ``(None, None, response)`` when the queue is full (``503``, ``Retry-After: 5``), the
        generation failed before its first piece, or the client left while it waited (the job
        is cancelled)."""
        req = dataclasses.replace(req, priority=PRIORITY_API)  # a voice turn goes first on the NPU
        try:
            job: Job = self.generator.submit(req)
        except QueueFull:
            return None, None, self.error(path, 503, f"busy: {self.settings.queue_size} requests already wait; "
                                                     f"try again later", openai, {"Retry-After": "5"})
        first = await unless_gone(request, job.events.get())
        if first is None:
            job.cancel.cancel()
            return None, None, self.gone(path)
        if first[0] == "error":
            return None, None, self.error(path, *error_status(first[1]), openai)
        return job, first, None

    async def whole(self, job: Job, first, request: Request) -> tuple[str, GenerationStats | Exception] | None:
        """The whole answer from event ``first`` on (:meth:`Job.collect`), or None when the client
        left first: the generation is cancelled."""
        got = await unless_gone(request, job.collect(first))
        if got is None:
            job.cancel.cancel()
        return got


async def until_disconnected(request: Request) -> None:
    """Return when the client has gone (ASGI ``http.disconnect``). Only after the body was read:
    this reads the request's remaining messages."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def unless_gone(request: Request, aw):
    """The result of awaitable ``aw``, or None when the client disconnects first (``aw`` is then
    cancelled)."""
    task = asyncio.ensure_future(aw)
    gone = asyncio.ensure_future(until_disconnected(request))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()
        raise
    finally:
        gone.cancel()
    if task.done():
        return task.result()
    task.cancel()
    return None


def api_context(request: Request) -> ApiContext:
    """FastAPI dependency: the serving app's :class:`ApiContext`."""
    return request.app.state.api
