"""Who may use the console: loopback clients without a login; any other client after a login with
``api.token`` that sets a session cookie (``HttpOnly``, ``SameSite=Strict``, path ``/console``).
The Host header and a browser's Origin are checked for the whole app by
:class:`edge.service.api.guard.Guard` (no DNS rebinding). Failed logins are limited per client address.

CSRF tokens: a logged-in session has its own random token, made at the login (so the token a
client had before it logged in is worth nothing after). A client without a session (loopback, or
the login form) gets a random cookie of its own (:data:`BROWSER_COOKIE`) and the token is the
HMAC-SHA256 of that cookie under a secret of this process: nothing is stored per client (a flood
of visitors cannot push real sessions out), and no token is shared by two browsers."""
from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, field

SESSION_COOKIE = "edge_console"
BROWSER_COOKIE = "edge_console_browser"  # a client without a session: its CSRF token is derived from it
SESSION_S = 12 * 3600.0  # s a session lasts without use
MAX_SESSIONS = 64  # sessions kept at once; the oldest goes first
LOGIN_FAILURES = 5  # failed logins from one address ...
LOGIN_WINDOW_S = 300.0  # ... within this many s: refused (429) until the window passes


@dataclass
class Sessions:
    """Session ids → when they expire (``time.monotonic()`` s). In memory: a restart logs everyone out."""

    expiry: dict[str, float] = field(default_factory=dict)
    failures: dict[str, list[float]] = field(default_factory=dict)
    csrf: dict[str, str] = field(default_factory=dict)  # session id → its CSRF token
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))  # keys the browser tokens

    def new(self) -> str:
        """A new session id (256 random bits) with a new CSRF token of its own."""
        now = time.monotonic()
        self.expiry = {k: v for k, v in self.expiry.items() if v > now}
        while len(self.expiry) >= MAX_SESSIONS:
            self.expiry.pop(min(self.expiry, key=self.expiry.get))
        self.csrf = {k: v for k, v in self.csrf.items() if k in self.expiry}
        sid = secrets.token_urlsafe(32)
        self.expiry[sid] = now + SESSION_S
        self.csrf[sid] = secrets.token_urlsafe(32)
        return sid

    def token(self, sid: str | None, browser: str | None) -> str | None:
        """The CSRF token of the live session ``sid``, else the one of the ``browser`` cookie's value,
        else None (a client without either has no token yet)."""
        if sid and self.expiry.get(sid, 0.0) > time.monotonic() and sid in self.csrf:
            return self.csrf[sid]
        if browser:
            return hmac.new(self.secret, browser.encode(), hashlib.sha256).hexdigest()
        return None

    def valid(self, sid: str | None) -> bool:
        """True for a live session (its expiry moves on: SESSION_S s after the last use)."""
        now = time.monotonic()
        if not sid or self.expiry.get(sid, 0.0) <= now:
            return False
        self.expiry[sid] = now + SESSION_S
        return True

    def end(self, sid: str | None) -> None:
        """Forget the session ``sid`` (log out)."""
        self.expiry.pop(sid or "", None)
        self.csrf.pop(sid or "", None)

    def blocked(self, client: str) -> bool:
        """True when ``client`` failed :data:`LOGIN_FAILURES` times within :data:`LOGIN_WINDOW_S` s."""
        now = time.monotonic()
        recent = [t for t in self.failures.get(client, []) if now - t < LOGIN_WINDOW_S]
        self.failures[client] = recent
        return len(recent) >= LOGIN_FAILURES

    def failed(self, client: str) -> None:
        """Count one failed login from ``client``."""
        self.failures.setdefault(client, []).append(time.monotonic())


def token_matches(given: str, token: str | None) -> bool:
    """Constant-time comparison with ``api.token`` (never true without one)."""
    return bool(token) and secrets.compare_digest(given.encode(), token.encode())


def cookie_header(sid: str) -> str:
    """The ``Set-Cookie`` value of a session."""
    return f"{SESSION_COOKIE}={sid}; Path=/console; HttpOnly; SameSite=Strict; Max-Age={int(SESSION_S)}"


def browser_cookie_header(value: str) -> str:
    """The ``Set-Cookie`` value of a client's browser cookie (its CSRF token is derived from it)."""
    return f"{BROWSER_COOKIE}={value}; Path=/console; HttpOnly; SameSite=Strict"
