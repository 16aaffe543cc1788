"""What the route modules share: the app's :class:`ApiContext` (a FastAPI dependency), request
counting, the two error body shapes, and starting a generation."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import Request
from fastapi.responses import JSONResponse

from edge.llm.base import GenerationRequest
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

    async def start(self, path: str, req: GenerationRequest, openai: bool = False):
        """Submit ``req`` and wait for its first event: ``(job, first event, None)``, or
        ``(None, None, error response)`` when the queue is full (``503``, ``Retry-After: 5``) or
        the generation failed before its first piece."""
        try:
            job: Job = self.generator.submit(req)
        except QueueFull:
            return None, None, self.error(path, 503, f"busy: {self.settings.queue_size} requests already wait; "
                                                     f"try again later", openai, {"Retry-After": "5"})
        first = await job.events.get()
        if first[0] == "error":
            return None, None, self.error(path, *error_status(first[1]), openai)
        return job, first, None


def api_context(request: Request) -> ApiContext:
    """FastAPI dependency: the serving app's :class:`ApiContext`."""
    return request.app.state.api
