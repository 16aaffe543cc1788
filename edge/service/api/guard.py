"""What every HTTP request passes before a route sees it: one pure ASGI middleware, outermost.

In this order, each refusal answered before a byte of the body is read:

1. the Host header names this box: loopback, ``api.host`` or one of ``api.allowed_hosts``
   (``400`` otherwise: a DNS-rebinding page reaches the box under its own name);
2. a browser's ``Origin``, when sent, is the box's own (scheme, the Host header's name and port;
   ``403`` otherwise): no cross-origin use, and no ``Access-Control-Allow-Origin`` is ever sent;
3. with ``api.token`` set, ``Authorization: Bearer <token>`` (``401`` otherwise) on every path but
   the console's, which has its own login (:mod:`edge.service.console.access`);
4. the body: a ``Content-Length`` over ``api.max_body_bytes`` is ``413`` at once; a body without
   one (chunked) is cut off with ``413`` when it passes the limit.

Every response, refusals included, carries :data:`NO_FRAMING` (``X-Frame-Options: DENY`` and the
CSP ``frame-ancestors 'none'``): no page of the box can be shown in another site's frame, where a
click on "Undo" could be stolen.
"""
from __future__ import annotations

import secrets
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException

from edge.config import is_loopback

if TYPE_CHECKING:
    from edge.config import ApiSettings
    from edge.service.api.deps import ApiContext

CONSOLE_PREFIX = "/console"
#: headers on every response: no page of the box inside a frame (the older header and the CSP one)
NO_FRAMING = ((b"x-frame-options", b"DENY"), (b"content-security-policy", b"frame-ancestors 'none'"))
DEFAULT_PORTS = {"http": 80, "https": 443}


def host_name(header: str) -> str:
    """The name in a Host header value (``box.local:11435`` → ``box.local``, ``[::1]:80`` → ``::1``;
    ``""`` when there is none)."""
    try:
        return urlsplit(f"//{header}").hostname or ""
    except ValueError:
        return ""


def host_allowed(name: str, names: tuple[str, ...]) -> bool:
    """True for a loopback name or address, or one of ``names`` (case-insensitive)."""
    return bool(name) and (is_loopback(name) or name.lower() in {n.lower() for n in names})


def same_origin(origin: str, host_header: str, scheme: str) -> bool:
    """True when the browser's ``Origin`` is ``scheme://`` + the Host header (default ports
    filled in): the page making the request was served by this box."""
    try:
        o, h = urlsplit(origin), urlsplit(f"//{host_header}")
        o_port = o.port or DEFAULT_PORTS.get(o.scheme)
        h_port = h.port or DEFAULT_PORTS.get(scheme)
    except ValueError:
        return False
    return (o.scheme == scheme and bool(o.hostname) and o.hostname == h.hostname and o_port == h_port)


class BodyTooLarge(HTTPException):
    """The body passed ``api.max_body_bytes`` while it was read (an HTTPException, so that a
    route reading the body answers 413 rather than "error parsing the body")."""

    def __init__(self, limit: int):
        super().__init__(413, too_large(limit))


def too_large(limit: int) -> str:
    return f"request body over {limit} bytes (api.max_body_bytes)"


class Guard:
    """The ASGI middleware of the module doc around ``app``, for the API of ``ctx`` (an
    :class:`edge.service.api.deps.ApiContext`: its settings, and its metrics where refusals are
    counted under the route's path or ``other``); ``names``: the Host names allowed besides loopback."""

    def __init__(self, app, ctx: ApiContext, names: tuple[str, ...]):
        self.app = app
        self.ctx = ctx
        self.settings: ApiSettings = ctx.settings
        self.names = names

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _unframed(send)
        refusal = self.refusal(scope, Headers(scope=scope))
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        limit = self.settings.max_body_bytes
        seen = 0
        started = False

        async def limited_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        async def tracked_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracked_send)
        except BodyTooLarge as e:  # read outside a route (a middleware, a dependency)
            if not started:
                await self.answer(scope, 413, e.detail)(scope, receive, send)

    def refusal(self, scope, headers: Headers):
        """The response refusing this request, or None to let it through."""
        host = headers.get("host", "")
        if not host_allowed(host_name(host), self.names):
            shown = (host_name(host) or host)[:100]
            return self.answer(scope, 400, f"Host header {shown!r} is not one of this box's names: "
                                           f"add it to api.allowed_hosts")
        origin = headers.get("origin")
        if origin is not None and not same_origin(origin, host, scope.get("scheme", "http")):
            return self.answer(scope, 403, f"cross-origin request from {origin[:100]!r} refused: the API and the "
                                           f"console answer only their own pages")
        token = self.settings.token
        if token and not is_console(scope["path"]):
            scheme, _, value = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not secrets.compare_digest(value.strip().encode(), token.encode()):
                return self.answer(scope, 401, "missing or wrong bearer token (header 'Authorization: Bearer "
                                               "<api.token>')", {"WWW-Authenticate": "Bearer"})
        length = headers.get("content-length")
        if length is not None and not length.isdigit():
            return self.answer(scope, 400, "Content-Length is not a number")
        if length is not None and int(length) > self.settings.max_body_bytes:
            return self.answer(scope, 413, too_large(self.settings.max_body_bytes))
        return None

    def answer(self, scope, code: int, msg: str, headers: dict | None = None):
        """A counted error response in the shape of the path's API family (OpenAI under ``/v1/``)."""
        path = scope["path"]
        return self.ctx.error(endpoint_label(scope["app"], path), code, msg, path.startswith("/v1/"), headers)


def _unframed(send):
    """``send`` adding :data:`NO_FRAMING` to the response's headers."""
    async def wrapped(message):
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *NO_FRAMING]}
        await send(message)
    return wrapped


def endpoint_label(app, path: str) -> str:
    """``path`` when it is one of ``app``'s routes, else ``other`` (the ``endpoint`` label of
    ``edge_api_requests_total``: a client's made-up paths must not grow the metric's series)."""
    return path if path in {getattr(r, "path", None) for r in app.routes} else "other"


def is_console(path: str) -> bool:
    """True for the console's paths (they have their own login instead of the bearer token)."""
    return path == CONSOLE_PREFIX or path.startswith(CONSOLE_PREFIX + "/")
