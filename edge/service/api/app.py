"""The local HTTP API (``edge serve``): FastAPI on uvicorn.

Endpoints (shapes follow Ollama's API docs, docs.ollama.com/api, and OpenAI's chat completions):

``POST /api/chat``             Ollama chat: ``{model, messages, stream=true, format, options}`` →
                               NDJSON lines ``{model, created_at, message{role, content}, done}``,
                               the last with ``done: true``, ``done_reason`` and the usage figures
                               (``total_duration``, ``load_duration``, ``prompt_eval_count``,
                               ``prompt_eval_duration``, ``eval_count``, ``eval_duration``; ns);
                               one JSON object when ``stream`` is false.
``POST /api/generate``         Ollama completion: ``{model, prompt, system, stream, format, options}``
                               → the same with ``response`` instead of ``message``.
``POST /v1/chat/completions``  OpenAI: ``chat.completion`` object, or with ``stream: true``
                               server-sent events ``data: {chat.completion.chunk}`` then
                               ``data: [DONE]``.
``GET /api/tags``, ``GET /v1/models``  the one model served.
``GET /healthz``               ``{status: ok|degraded, engine, chain: [...], queue_depth, busy}``.
``GET /metrics``               Prometheus text (``prometheus_client``): :data:`METRIC_NAMES`.

Rules: one generation at a time, on one worker thread; requests wait in a queue of
``api.queue_size``, one more gets ``503``. When ``api.token`` is set every request needs
``Authorization: Bearer <token>`` (``401`` otherwise); a non-loopback ``api.host`` without a token
is refused by the config. A question too long for the context window is ``400``; no healthy LLM
engine (grammar only) is ``503``. Options honoured: ``temperature``, ``num_predict``/``max_tokens``,
``stop``, ``format``/``response_format`` (JSON or a JSON schema); ``num_ctx`` is fixed by the config.
A client that disconnects mid-stream cancels its generation.
"""
from __future__ import annotations

import asyncio
import datetime as _dt
import json
import logging
import queue
import re
import secrets
import threading
import time
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from pydantic import BaseModel, ConfigDict, Field

from edge.llm.base import CancelToken, ContextOverflow, EngineError, GenerationRequest, GenerationStats
from edge.errors import EdgeError

log = logging.getLogger(__name__)

METRIC_NAMES = ("edge_api_requests_total", "edge_llm_tokens_total", "edge_llm_ttft_seconds",
                "edge_llm_decode_tokens_per_second", "edge_api_queue_depth", "edge_api_generating",
                "edge_llm_engine_healthy")
#: TTFT histogram buckets, s: from a warm 135M model on a PC (~0.05 s) to a cold 3B model on a
#: board's CPU (several s).
TTFT_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


# --------------------------------------------------------------------------------------------
# one generation at a time


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


class Generator:
    """Runs jobs one after another on a worker thread; ``queue_size`` may wait."""

    def __init__(self, engine, queue_size: int, metrics: "Metrics"):
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


# --------------------------------------------------------------------------------------------
# metrics


class Metrics:
    """The API's Prometheus metrics, in their own registry."""

    def __init__(self):
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("edge_api_requests", "HTTP requests by endpoint and status code",
                                ["endpoint", "code"], registry=r)
        self.tokens = Counter("edge_llm_tokens", "tokens processed, by kind (prompt, completion)", ["kind"], registry=r)
        self.ttft = Histogram("edge_llm_ttft_seconds", "time to first token, s", buckets=TTFT_BUCKETS, registry=r)
        self.decode_rate = Gauge("edge_llm_decode_tokens_per_second", "decode rate of the last generation, tokens/s",
                                 registry=r)
        self.queue_depth = Gauge("edge_api_queue_depth", "requests waiting behind the running generation", registry=r)
        self.generating = Gauge("edge_api_generating", "1 while a generation runs", registry=r)
        self.engine_healthy = Gauge("edge_llm_engine_healthy", "1 = healthy, 0 = unhealthy or unloaded, per chain step",
                                    ["index", "engine", "model", "active"], registry=r)

    def observe(self, stats: GenerationStats) -> None:
        self.tokens.labels("prompt").inc(stats.prompt_tokens)
        self.tokens.labels("completion").inc(stats.completion_tokens)
        if stats.completion_tokens:
            self.ttft.observe(stats.ttft_ms / 1000)
        if stats.tokens_per_s:
            self.decode_rate.set(stats.tokens_per_s)


def chain_status(engine) -> list[dict]:
    """``engine.status()`` for a chain; one healthy active step for a single engine."""
    if hasattr(engine, "status"):
        return engine.status()
    return [{"index": 0, "engine": getattr(engine, "name", "llm"), "model": str(getattr(engine, "model", "")),
             "state": "healthy", "reason": "", "active": True}]


# --------------------------------------------------------------------------------------------
# request bodies (extra fields are accepted and ignored, as clients send many)


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class ChatMessage(_Loose):
    role: str
    content: str | list | None = ""


class OllamaChat(_Loose):
    model: str = ""
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = True
    format: str | dict | None = None
    options: dict[str, Any] = {}


class OllamaGenerate(_Loose):
    model: str = ""
    prompt: str = ""
    system: str | None = None
    stream: bool = True
    format: str | dict | None = None
    options: dict[str, Any] = {}


class OpenAIChat(_Loose):
    model: str = ""
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    stop: str | list[str] | None = None
    response_format: dict | None = None
    stream_options: dict | None = None


def _text(content) -> str:
    if isinstance(content, list):  # OpenAI content parts: keep the text parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _messages(msgs: list[ChatMessage]) -> list[dict]:
    return [{"role": m.role, "content": _text(m.content)} for m in msgs]


def _schema_of_format(fmt) -> dict | None:
    """Ollama ``format``: ``"json"`` (any JSON object) or a JSON schema."""
    if fmt in (None, ""):
        return None
    if fmt == "json":
        return {"type": "object"}
    if isinstance(fmt, dict):
        return fmt
    raise HTTPException(400, f"format must be 'json' or a JSON schema object, got {fmt!r}")


def _schema_of_response_format(rf: dict | None) -> dict | None:
    """OpenAI ``response_format``: ``{"type": "json_object"}`` or ``{"type": "json_schema",
    "json_schema": {"name", "schema"}}``; ``{"type": "text"}`` = none."""
    if not rf or rf.get("type") in (None, "text"):
        return None
    if rf.get("type") == "json_object":
        return {"type": "object"}
    if rf.get("type") == "json_schema":
        schema = (rf.get("json_schema") or {}).get("schema")
        if not isinstance(schema, dict):
            raise HTTPException(400, "response_format.json_schema.schema must be a JSON schema object")
        return schema
    raise HTTPException(400, f"response_format.type must be text, json_object or json_schema, got {rf.get('type')!r}")


def _stops(stop) -> tuple[str, ...]:
    if stop is None:
        return ()
    return (stop,) if isinstance(stop, str) else tuple(str(s) for s in stop)


def _now_rfc3339() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat().replace("+00:00", "Z")


def _ollama_usage(stats: GenerationStats) -> dict:
    total_ns = int(stats.total_ms * 1e6)
    prompt_ns = int(stats.ttft_ms * 1e6)
    return {"done_reason": "length" if stats.finish_reason == "length" else "stop", "total_duration": total_ns,
            "load_duration": 0, "prompt_eval_count": stats.prompt_tokens, "prompt_eval_duration": prompt_ns,
            "eval_count": stats.completion_tokens, "eval_duration": max(0, total_ns - prompt_ns)}


def _finish_reason(stats: GenerationStats) -> str:
    return "length" if stats.finish_reason == "length" else "stop"


def _error_status(e: Exception) -> tuple[int, str]:
    from edge.llm.chain import NoEngine

    if isinstance(e, ContextOverflow):
        return 400, f"that question is too long: {e}"
    if isinstance(e, NoEngine):
        return 503, str(e)
    if isinstance(e, ValueError):
        return 400, str(e)
    return 500, f"generation failed: {e}"


# --------------------------------------------------------------------------------------------
# the app


class GovernorCollector:
    """Puts :meth:`edge.governor.governor.Governor.metrics` (thermal level, temperatures, memory, NPU load,
    admission, thread plan…) on ``/metrics``, read fresh at every scrape. Never raises: an
    unreadable signal is missing from the scrape."""

    def __init__(self, governor):
        self.governor = governor

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily

        try:
            self.governor.sample()
            figures = self.governor.metrics()
        except Exception as e:
            log.warning("governor metrics: %s", e)
            return
        families: dict[str, tuple[list[str], GaugeMetricFamily]] = {}
        for key, value in figures.items():
            name, _, rest = key.partition("{")
            labels = dict(re.findall(r'(\w+)="([^"]*)"', rest))
            names = sorted(labels)
            if name not in families:
                families[name] = (names, GaugeMetricFamily(name, f"edge governor: {name}", labels=names))
            want, fam = families[name]
            if want == names and value is not None:
                fam.add_metric([labels[k] for k in want], float(value))
        for _names, fam in families.values():
            yield fam


class ServiceStateCollector:
    """Puts the live service's state file (:mod:`edge.service.runstate`, written by the daemon, another
    process) on ``/metrics``, read at every scrape:

    * ``edge_service_up``: 1 when the daemon is alive and its state fresh, else 0;
    * ``edge_service_state_age_seconds``, ``edge_service_turns_total``;
    * ``edge_capture_overflows_total`` (chunks the ring buffer dropped), ``edge_capture_overflow_stalls_total``,
      ``edge_capture_xruns_total`` (PortAudio input overflows), ``edge_capture_lost_total`` (device
      outages), ``edge_capture_reopens_total``, ``edge_capture_open_attempts_total``;
    * ``edge_capture_ok``: 1 while the capture device delivers audio.

    Without a state file only ``edge_service_up 0`` is exported. Never raises."""

    COUNTERS = {"overflows": "chunks dropped by the capture ring buffer (consumer too slow)",
                "overflow_stalls": "consumer stalls that dropped capture chunks",
                "xruns": "input overflows reported by PortAudio (driver lost samples)",
                "lost_events": "capture device outages", "reopens": "capture device outages that ended",
                "open_attempts": "attempts to open a capture device"}

    def __init__(self, path):
        self.path = path

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        from edge.service.runstate import read_state

        st = read_state(self.path)  # never raises; a malformed file reads as not running
        yield GaugeMetricFamily("edge_service_up", "1: the voice service runs and its state is fresh",
                                value=1.0 if st.get("running") else 0.0)
        if "capture" not in st:
            return
        yield GaugeMetricFamily("edge_service_state_age_seconds", "s since the service last wrote its state",
                                value=float(st.get("age_s", 0.0)))
        yield CounterMetricFamily("edge_service_turns", "turns ended", value=float(st.get("turns", 0)))
        cap = st["capture"]
        for key, help_ in self.COUNTERS.items():
            name = "edge_capture_lost" if key == "lost_events" else f"edge_capture_{key}"
            yield CounterMetricFamily(name, help_, value=float(cap.get(key, 0)))
        yield GaugeMetricFamily("edge_capture_ok", "1 while the capture device delivers audio",
                                value=1.0 if cap.get("state") == "ok" else 0.0)


def create_app(engine, api_settings, default_temperature: float = 0.2, governor=None,
               state_file=None) -> FastAPI:
    """The FastAPI app serving ``engine`` (an :class:`edge.llm.chain.EngineChain` or any
    :class:`edge.llm.base.Engine`) with :class:`edge.config.ApiSettings`. ``app.state.generator``
    and ``app.state.metrics`` are exposed for the server's owner."""
    from edge.config import is_loopback

    if not is_loopback(api_settings.host) and not api_settings.token:
        raise ValueError(f"api.host {api_settings.host!r} is not loopback: api.token is required")
    metrics = Metrics()
    if governor is not None:
        metrics.registry.register(GovernorCollector(governor))
    if state_file is not None:
        metrics.registry.register(ServiceStateCollector(state_file))
    gen = Generator(engine, api_settings.queue_size, metrics)
    token = api_settings.token

    async def auth(request: Request) -> None:
        if not token:
            return
        header = request.headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not secrets.compare_digest(value.strip().encode(), token.encode()):
            metrics.requests.labels(request.url.path, "401").inc()
            raise HTTPException(401, "missing or wrong bearer token (header 'Authorization: Bearer <api.token>')",
                                headers={"WWW-Authenticate": "Bearer"})

    @asynccontextmanager
    async def lifespan(_app):
        yield
        gen.close()

    app = FastAPI(title="edge", version="0.1.0", dependencies=[Depends(auth)], lifespan=lifespan,
                  description="Offline voice assistant LLM API (Ollama- and OpenAI-compatible)")
    app.state.generator = gen
    app.state.metrics = metrics
    app.state.engine = engine

    def name_of(model: str) -> str:
        return model or api_settings.model_name

    def count(path: str, code: int) -> None:
        metrics.requests.labels(path, str(code)).inc()

    def error(path: str, code: int, msg: str, openai: bool, headers: dict | None = None) -> JSONResponse:
        count(path, code)
        body = ({"error": {"message": msg, "type": "server_error" if code >= 500 else "invalid_request_error",
                           "code": code}} if openai else {"error": msg})
        return JSONResponse(body, status_code=code, headers=headers)

    async def run(path: str, req: GenerationRequest, openai: bool = False):
        """Submit; the first event, the job — or a ready error response."""
        try:
            job = gen.submit(req)
        except QueueFull:
            return None, None, error(path, 503, f"busy: {api_settings.queue_size} requests already wait; try again "
                                                f"later", openai, {"Retry-After": "5"})
        first = await job.events.get()
        if first[0] == "error":
            return None, None, error(path, *_error_status(first[1]), openai)
        return job, first, None

    async def collect(job: Job, first) -> tuple[str, GenerationStats | Exception]:
        parts, item = [], first
        while item[0] == "piece":
            parts.append(item[1])
            item = await job.events.get()
        return "".join(parts), item[1]

    async def ollama(path: str, req: GenerationRequest, model: str, stream: bool, key: str):
        job, first, failed = await run(path, req)
        if failed is not None:
            return failed

        def wrap(text: str) -> dict:
            return {"message": {"role": "assistant", "content": text}} if key == "message" else {"response": text}

        if not stream:
            text, end = await collect(job, first)
            if isinstance(end, Exception):
                return error(path, *_error_status(end), False)
            count(path, 200)
            return JSONResponse({"model": name_of(model), "created_at": _now_rfc3339(), **wrap(text), "done": True,
                                 **_ollama_usage(end)})

        async def lines():
            item = first
            try:
                while True:
                    kind, val = item
                    if kind == "piece":
                        yield json.dumps({"model": name_of(model), "created_at": _now_rfc3339(), **wrap(val),
                                          "done": False}) + "\n"
                    elif kind == "done":
                        yield json.dumps({"model": name_of(model), "created_at": _now_rfc3339(), **wrap(""),
                                          "done": True, **_ollama_usage(val)}) + "\n"
                        return
                    else:
                        yield json.dumps({"error": _error_status(val)[1]}) + "\n"
                        return
                    item = await job.events.get()
            finally:
                job.cancel.cancel()  # done, or the client went away: stop generating

        count(path, 200)
        return StreamingResponse(lines(), media_type="application/x-ndjson")

    @app.post("/api/chat")
    async def api_chat(body: OllamaChat):
        o = body.options
        req = GenerationRequest(_messages(body.messages), max_tokens=_num_predict(o, api_settings.max_tokens),
                                json_schema=_schema_of_format(body.format), stop=_stops(o.get("stop")),
                                temperature=float(o.get("temperature", default_temperature)))
        return await ollama("/api/chat", req, body.model, body.stream, "message")

    @app.post("/api/generate")
    async def api_generate(body: OllamaGenerate):
        o = body.options
        msgs = ([{"role": "system", "content": body.system}] if body.system else []) + \
            [{"role": "user", "content": body.prompt}]
        req = GenerationRequest(msgs, max_tokens=_num_predict(o, api_settings.max_tokens),
                                json_schema=_schema_of_format(body.format), stop=_stops(o.get("stop")),
                                temperature=float(o.get("temperature", default_temperature)))
        return await ollama("/api/generate", req, body.model, body.stream, "response")

    @app.post("/v1/chat/completions")
    async def openai_chat(body: OpenAIChat):
        path = "/v1/chat/completions"
        req = GenerationRequest(_messages(body.messages),
                                max_tokens=body.max_completion_tokens or body.max_tokens or api_settings.max_tokens,
                                json_schema=_schema_of_response_format(body.response_format), stop=_stops(body.stop),
                                temperature=default_temperature if body.temperature is None else body.temperature)
        job, first, failed = await run(path, req, openai=True)
        if failed is not None:
            return failed
        cid, created, model = f"chatcmpl-{uuid.uuid4().hex}", int(time.time()), name_of(body.model)

        def usage(stats: GenerationStats) -> dict:
            return {"prompt_tokens": stats.prompt_tokens, "completion_tokens": stats.completion_tokens,
                    "total_tokens": stats.prompt_tokens + stats.completion_tokens}

        if not body.stream:
            text, end = await collect(job, first)
            if isinstance(end, Exception):
                return error(path, *_error_status(end), True)
            count(path, 200)
            return JSONResponse({"id": cid, "object": "chat.completion", "created": created, "model": model,
                                 "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                              "finish_reason": _finish_reason(end)}],
                                 "usage": usage(end)})

        include_usage = bool((body.stream_options or {}).get("include_usage"))

        def chunk(delta: dict, finish: str | None) -> str:
            return "data: " + json.dumps({"id": cid, "object": "chat.completion.chunk", "created": created,
                                          "model": model, "choices": [{"index": 0, "delta": delta,
                                                                       "finish_reason": finish}]}) + "\n\n"

        async def events():
            item = first
            try:
                yield chunk({"role": "assistant", "content": ""}, None)
                while True:
                    kind, val = item
                    if kind == "piece":
                        yield chunk({"content": val}, None)
                    elif kind == "done":
                        yield chunk({}, _finish_reason(val))
                        if include_usage:
                            yield "data: " + json.dumps({"id": cid, "object": "chat.completion.chunk",
                                                         "created": created, "model": model, "choices": [],
                                                         "usage": usage(val)}) + "\n\n"
                        yield "data: [DONE]\n\n"
                        return
                    else:
                        yield "data: " + json.dumps({"error": {"message": _error_status(val)[1]}}) + "\n\n"
                        yield "data: [DONE]\n\n"
                        return
                    item = await job.events.get()
            finally:
                job.cancel.cancel()

        count(path, 200)
        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    @app.get("/api/tags")
    async def tags():
        count("/api/tags", 200)
        return {"models": [{"name": api_settings.model_name, "model": api_settings.model_name,
                            "modified_at": _now_rfc3339(), "size": 0, "digest": "",
                            "details": {"format": "gguf", "family": _active_label(engine)}}]}

    @app.get("/v1/models")
    async def models():
        count("/v1/models", 200)
        return {"object": "list", "data": [{"id": api_settings.model_name, "object": "model", "created": 0,
                                            "owned_by": "edge"}]}

    @app.get("/healthz")
    async def healthz():
        status = chain_status(engine)
        active = next((s for s in status if s["active"]), None)
        llm = active is not None and active["engine"] != "grammar"
        count("/healthz", 200)
        return {"status": "ok" if llm else "degraded", "engine": _active_label(engine), "chain": status,
                "queue_depth": gen.queue_depth, "busy": gen.running is not None}

    @app.get("/metrics")
    async def prometheus():
        metrics.engine_healthy.clear()
        for s in chain_status(engine):
            metrics.engine_healthy.labels(str(s["index"]), s["engine"], str(s.get("model") or ""),
                                          "1" if s["active"] else "0").set(1 if s["state"] == "healthy" else 0)
        metrics.queue_depth.set(gen.queue_depth)
        count("/metrics", 200)
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return app


def _active_label(engine) -> str:
    for s in chain_status(engine):
        if s["active"]:
            return s["engine"] if s["engine"] == "grammar" else f"{s['engine']}:{s.get('model')}"
    return "grammar"


def _num_predict(options: dict, default: int) -> int:
    """Ollama ``num_predict``: tokens to generate; -1 or absent = the API default."""
    n = options.get("num_predict")
    if n is None or int(n) < 0:
        return default
    if int(n) == 0:
        raise HTTPException(400, "options.num_predict must be positive (or -1 for the default)")
    return int(n)


# --------------------------------------------------------------------------------------------
# running it


class ServerThread:
    """uvicorn serving ``app`` on a background thread (tests, or the voice daemon hosting the API).

    ``start()`` returns once the socket listens (or raises RuntimeError after ``timeout_s``);
    ``stop()`` shuts it down. ``port=0`` picks a free port; :attr:`port` tells which.
    """

    def __init__(self, app: FastAPI, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning"):
        import uvicorn

        self.config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on")
        self.server = uvicorn.Server(self.config)
        self.thread = threading.Thread(target=self.server.run, daemon=True, name="api-server")
        self.host = host
        self.port = port

    def start(self, timeout_s: float = 30.0) -> "ServerThread":
        self.thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the API server did not start on {self.host}:{self.port}")
            time.sleep(0.02)
        sock = self.server.servers[0].sockets[0]
        self.port = sock.getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def stop(self, timeout_s: float = 30.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout_s)


def serve(settings, engine=None) -> int:
    """Run the API in the foreground with :class:`edge.config.Settings` (``edge serve``): builds
    and starts the LLM chain unless ``engine`` is given. Returns when interrupted."""
    import uvicorn

    from edge.llm.chain import EngineChain

    if engine is None:
        engine = EngineChain.from_settings(settings).start()
    a = settings.api
    from edge.governor.governor import Governor

    from edge.service.runstate import state_path

    app = create_app(engine, a, default_temperature=settings.llm.temperature, governor=Governor(settings),
                     state_file=state_path(settings))
    log.warning("edge API on http://%s:%d (engine %s)%s", a.host, a.port, _active_label(engine),
                "" if a.token else "; no token: loopback only")
    try:
        uvicorn.run(app, host=a.host, port=a.port, log_level="info")
    finally:
        if hasattr(engine, "close"):
            engine.close()
    return 0
