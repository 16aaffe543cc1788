"""The local HTTP API (``edge serve``): FastAPI on uvicorn, assembled from one router per API family.

Endpoints (shapes follow Ollama's API docs, docs.ollama.com/api, and OpenAI's chat completions):

``POST /api/chat``, ``POST /api/generate``, ``GET /api/tags``   Ollama, NDJSON streaming
                                                             (:mod:`edge.service.api.ollama`).
``POST /v1/chat/completions``, ``GET /v1/models``             OpenAI, server-sent events
                                                             (:mod:`edge.service.api.openai`).
``GET /healthz``               ``{status: ok|degraded, engine, chain: [...], queue_depth, busy}``.
``GET /metrics``               Prometheus text: :data:`edge.service.api.metrics.METRIC_NAMES`, the
                               governor's figures, the live service's counters
                               (:mod:`edge.service.api.metrics`).

``GET /docs``, ``GET /openapi.json``  the endpoints (a plain page, no asset from the internet) and the schema.

Rules: before a route sees a request, :class:`edge.service.api.guard.Guard` checks the Host header
(``400``), a browser's Origin (``403``; no CORS headers, ever), the bearer token when ``api.token``
is set (``401``, on every path but the console's, ``/docs`` and ``/openapi.json`` included) and the
body size (``413`` over ``api.max_body_bytes``), all before the body is read. A non-loopback
``api.host`` without a token is refused (by the config, and again by :func:`create_app`). A field
of the wrong type or range is ``400`` naming it; more than ``api.max_messages`` messages or
``api.max_prompt_chars`` characters is ``413``; more than ``api.max_predict`` tokens asked for is
``400``. One generation at a time, on one worker thread; requests wait in a queue of
``api.queue_size``, one more gets ``503`` (:mod:`edge.service.api.queue`). A question too long for
the context window is ``400``; no healthy LLM engine (grammar only) is ``503``; ``num_ctx`` is fixed
by the config. A client that disconnects, while it waits, mid-stream or before a whole answer,
cancels its generation.
"""
from __future__ import annotations

import html
import logging
import sqlite3
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from edge.config import is_loopback
from edge.governor.governor import Governor
from edge.llm.chain import EngineChain
from edge.llm.loader import governed_factory
from edge.service.api import docs, metrics, ollama, openai
from edge.service.api.deps import ApiContext
from edge.service.api.guard import CONSOLE_PREFIX, Guard, endpoint_label, is_console
from edge.service.api.metrics import GovernorCollector, Metrics, ServiceStateCollector, active_label
from edge.service.api.queue import Generator
from edge.service.api.stock import StockDesk
from edge.service.console import routes as console_routes
from edge.service.console.routes import ConsoleContext
from edge.service.readtimeout import ReadTimeoutH11
from edge.service.runstate import state_path
from edge.site.metrics import SiteCollector
from edge.stock.periods import Calendar
from edge.stock.store import Store

log = logging.getLogger(__name__)

#: The routers, in the order they are mounted.
ROUTERS = (ollama.router, openai.router, metrics.router, docs.router)


# --------------------------------------------------------------------------------------------
# security


def refuse_open_host(api_settings) -> None:
    """Raises ValueError for a non-loopback ``api.host`` without ``api.token``."""
    if not is_loopback(api_settings.host) and not api_settings.token:
        raise ValueError(f"api.host {api_settings.host!r} is not loopback: api.token is required")


def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
    """A body (or query) that does not validate: ``400`` naming each failing field
    (``options.temperature: Input should be a finite number``), in the path's API family's shape."""
    ctx: ApiContext = request.app.state.api
    fields = []
    for err in exc.errors()[:10]:
        loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "query")]
        fields.append(f"{'.'.join(loc) or '(body)'}: {err.get('msg', 'invalid')}")
    path = request.url.path
    return ctx.error(endpoint_label(request.app, path), 400, "invalid request: " + "; ".join(fields),
                     path.startswith("/v1/"))


async def http_error(request: Request, exc: HTTPException):
    """An HTTPException of an API route (a refused value, 413 for too many messages) in the path's
    API family's shape, counted; the console's keep FastAPI's (its redirects and pages)."""
    path = request.url.path
    if is_console(path):
        return await http_exception_handler(request, exc)
    ctx: ApiContext = request.app.state.api
    return ctx.error(endpoint_label(request.app, path), exc.status_code, str(exc.detail), path.startswith("/v1/"),
                     exc.headers)


def docs_page(app: FastAPI) -> HTMLResponse:
    """``/docs``: the endpoints of ``app``'s OpenAPI schema as one HTML page with no script and no
    asset from anywhere (the box may have no internet, and a page from a CDN could read the token)."""
    rows = []
    for path, ops in app.openapi().get("paths", {}).items():
        for method, op in ops.items():
            rows.append(f"<tr><td>{html.escape(method.upper())}</td><td><code>{html.escape(path)}</code></td>"
                        f"<td>{html.escape(op.get('summary', ''))}</td></tr>")
    return HTMLResponse(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(app.title)} API"
                        f"</title></head><body><h1>{html.escape(app.title)} API {html.escape(app.version)}</h1>"
                        f"<p>{html.escape(app.description)}. The schema: <a href='/openapi.json'>/openapi.json</a>."
                        f"</p><table>{''.join(rows)}</table></body></html>")


# --------------------------------------------------------------------------------------------
# the app


def build_context(engine, api_settings, default_temperature: float, governor=None, state_file=None,
                  site_store=None) -> ApiContext:
    """The metrics (with the governor's, the state file's and the site store's collectors when
    given) and the generator thread, started."""
    m = Metrics()
    if governor is not None:
        m.registry.register(GovernorCollector(governor))
    if state_file is not None:
        m.registry.register(ServiceStateCollector(state_file))
    if site_store is not None:
        m.registry.register(SiteCollector(site_store))
    gen = Generator(engine, api_settings.queue_size, m)
    return ApiContext(engine, api_settings, default_temperature, gen, m)


@asynccontextmanager
async def lifespan(app: FastAPI):
    console = getattr(app.state, "console", None)
    if console is not None and console.store is not None:  # the Status page's samples while served
        try:
            console.start_sampling()
        except (OSError, sqlite3.Error) as e:  # a read-only state folder: the page says no samples are kept
            log.warning("console: no samples kept for the Status page: %s", e)
    yield
    if console is not None:
        console.stop_sampling()
    app.state.generator.close()


def create_app(engine, api_settings, default_temperature: float = 0.2, governor=None,
               state_file=None, console: ConsoleContext | None = None, site_store=None, stock=None) -> FastAPI:
    """The FastAPI app serving ``engine`` (an :class:`edge.llm.chain.EngineChain` or any
    :class:`edge.llm.base.Engine`) with :class:`edge.config.ApiSettings`; ``governor`` (an
    :class:`edge.governor.governor.Governor`), ``state_file`` (the live service's, a path) and
    ``site_store`` (the store file of a box on a site: sync state, negative stock) add their figures
    to ``/metrics``. ``app.state.generator``, ``app.state.metrics`` and ``app.state.engine``
    are exposed for the server's owner (``app.state.api`` is the routes'
    :class:`~edge.service.api.deps.ApiContext`). With ``console`` (a
    :class:`edge.service.console.routes.ConsoleContext`) the web console is served under
    ``/console`` (loopback clients only, no bearer token). Raises ValueError for a non-loopback
    host without a token. ``stock`` (an :class:`edge.service.api.stock.StockDesk`) serves the box's grounded
    dialog as the model ``api.stock_model_name``."""
    refuse_open_host(api_settings)
    ctx = build_context(engine, api_settings, default_temperature, governor, state_file, site_store)
    ctx.stock = stock
    app = FastAPI(title="edge", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Offline voice assistant LLM API (Ollama- and OpenAI-compatible)")
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(HTTPException, http_error)
    app.add_api_route("/docs", lambda: docs_page(app), methods=["GET"], include_in_schema=False)
    app.state.api = ctx
    app.state.generator = ctx.generator
    app.state.metrics = ctx.metrics
    app.state.engine = engine
    for router in ROUTERS:
        app.include_router(router)
    if console is not None:
        console.engine, console.governor, console.state_file = engine, governor, state_file
        console.token = api_settings.token
        app.state.console = console
        app.include_router(console_routes.router)
        app.mount(f"{CONSOLE_PREFIX}/static", StaticFiles(directory=console_routes.STATIC_DIR), name="console-static")
    names = (api_settings.host, *api_settings.allowed_hosts, *(console.hosts if console is not None else ()))
    app.add_middleware(Guard, ctx=ctx, names=tuple(dict.fromkeys(names)))
    return app


# --------------------------------------------------------------------------------------------
# running it


class ServerThread:
    """uvicorn serving ``app`` on a background thread (tests, or the voice daemon hosting the API).

    ``start()`` returns once the socket listens (or raises RuntimeError after ``timeout_s``);
    ``stop()`` shuts it down. ``port=0`` picks a free port; :attr:`port` tells which.
    """

    def __init__(self, app: FastAPI, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning"):
        self.config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on",
                                     http=ReadTimeoutH11)  # a stalled client is dropped
        self.server = uvicorn.Server(self.config)
        self.thread = threading.Thread(target=self.server.run, daemon=True, name="api-server")
        self.host = host
        self.port = port

    def start(self, timeout_s: float = 30.0) -> ServerThread:
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
    and starts the LLM chain unless ``engine`` is given, each llama.cpp step admitted by the
    resource governor (memory reserve, threads of its plan), as in the voice loop. Returns 0 when
    interrupted."""
    governor = Governor(settings)
    governor.sample()  # the plan's threads see the CPU pressure of now
    if engine is None:
        engine = EngineChain.from_settings(settings, factory=governed_factory(governor)).start()
    a = settings.api
    out = Path(settings.output_dir)  # the events edge run and edge wyoming write, for the Live page
    console = ConsoleContext(Store(settings.store.path, calendar=Calendar.from_settings(settings.store)), settings=settings,
                             events=(out / "events.jsonl", out / "wyoming-events.jsonl"))
    stock = StockDesk(settings, engine, writes=a.stock_writes)
    app = create_app(engine, a, default_temperature=settings.llm.temperature, governor=governor,
                     state_file=state_path(settings), console=console,
                     site_store=settings.store.path if settings.site is not None else None, stock=stock)
    log.warning("edge API on http://%s:%d (engine %s)%s; console on http://%s:%d/console (loopback clients)",
                a.host, a.port, active_label(engine), "" if a.token else "; no token: loopback only", a.host, a.port)
    try:
        # an open Live page (server-sent events) must not hold the shutdown for ever
        uvicorn.run(app, host=a.host, port=a.port, log_level="info", timeout_graceful_shutdown=5, http=ReadTimeoutH11)
    finally:
        console.store.close()
        stock.close()
        engine.close()
    return 0
