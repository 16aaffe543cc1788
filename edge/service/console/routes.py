"""The console's pages (prefix ``/console``).

    GET  /console/live               turns as they happen (the voice loop's and Wyoming's events)
    GET  /console/live/events        the same as server-sent events (text/event-stream)
    GET  /console/records            the history, newest first: search (q), filter (kind), page (200
                                     rows a page); every record that is not an undo and not undone
                                     has an Undo button
    GET  /console/records.csv        the history as CSV (Store.export_csv)
    GET  /console/records/undo?id=N  confirm undoing record N (or say that a later stock count settled it)
    GET  /console/history            one item's use, receipts, moves and counts over a period (item,
                                     period words or since/until days), and the period's records:
                                     the voice's query code (edge.stock.questions) and its figures
    POST /console/records/undo       undo it (Store.undo_record; 409 naming why for an undo record, a
                                     record already undone, another box's record or one a later
                                     stock count settled)
    GET  /console/inventory          items: search (q), low stock only (low=1), page (200 rows a page)
    POST /console/inventory/preview  what an inventory CSV would change, before anything is written
                                     (a chosen file comes as its bytes, decoded as ``edge inventory
                                     import`` decodes them: :func:`edge.stock.csvfile.decode`)
    POST /console/inventory/import   apply it
    GET  /console/history.csv        the History page's chart data (per day or week; an item, every
                                     item, or every item at one place) as CSV
    GET  /console/inventory/low.json the low items, as ``edge status`` and the voice say them
    GET  /console/status             a dashboard (temperatures, memory against the reserve, CPU and
                                     NPU load over the last hour and day; turns per hour; reply times
                                     by path; wake words), site sync state, governor, voice service,
                                     LLM chain, models and their licences, doctor
    GET  /console/login, POST /console/login, POST /console/logout

Access (:mod:`edge.service.console.access`): loopback clients without a login; other clients log in
with ``api.token`` (a page asked for without a session redirects to the login; a POST is 401). The
Host header must name loopback, ``api.host``, ``api.allowed_hosts`` or one of
:attr:`ConsoleContext.hosts`, and a browser's Origin must be the box's own (400 / 403, checked for
the whole app by :class:`edge.service.api.guard.Guard`: no DNS rebinding, and no page in a frame);
every POST carries the CSRF token of the client's session or browser cookie (403 without it, see
:mod:`edge.service.console.access`); no CORS headers. A POST must be
``application/x-www-form-urlencoded`` (415 otherwise: ``text/plain`` is what a cross-site form can
send without a preflight).
"""
from __future__ import annotations

import asyncio
import base64
import binascii
import io
import secrets
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from fastapi.templating import Jinja2Templates

from edge.config import is_loopback
from edge.service.console import access, data, live, status
from edge.service.console.ring import INTERVAL_S, RING_FILE, Ring, Sampler
from edge.stages.utterance import too_long
from edge.stock import csvfile
from edge.stock.low import report as low_report
from edge.stock.low import why as why_low
from edge.stock.store import Store, StoreError

HERE = Path(__file__).resolve().parent
STATIC_DIR = HERE / "static"
TEMPLATES = Jinja2Templates(directory=str(HERE / "templates"))
TEMPLATES.env.filters["local_time"] = data.local_time
TEMPLATES.env.filters["signed"] = data.signed
TEMPLATES.env.filters["counted"] = data.counted
MAX_FORM_BYTES = 2 * 1024 * 1024  # bytes of one form (an inventory CSV of some 20 000 rows)


@dataclass
class ConsoleContext:
    """What the pages read and change: the ``store``, names the Host header may carry besides
    loopback, ``api.host`` and ``api.allowed_hosts`` (the app's Guard checks them), the events files the Live page follows (JSON lines, :mod:`edge.events`)
    ``api.token`` (the login of other clients) and the sessions (with their CSRF tokens).
    Kept in ``app.state.console``."""

    store: Store
    hosts: tuple[str, ...] = ()
    events: tuple[Path, ...] = ()
    settings: Any = None  # edge.config.Settings: the doctor's board and figures
    governor: Any = None  # set by create_app, as are engine and state_file
    engine: Any = None
    state_file: Path | None = None
    token: str | None = None  # api.token, set by create_app
    sessions: access.Sessions = field(default_factory=access.Sessions)
    ring: Ring | None = None  # the Status page's samples (start_sampling)
    sampler: Sampler | None = None

    def start_sampling(self, interval_s: float = INTERVAL_S) -> Sampler:
        """Keep a sample of the box's signals every ``interval_s`` s in :attr:`ring` (created in
        the state folder: beside the state file, else beside the store); :meth:`stop_sampling` ends it."""
        if self.ring is None:
            folder = self.state_file.parent if self.state_file is not None else Path(self.store.path).parent
            self.ring = Ring(folder / RING_FILE)
        self.sampler = Sampler(self.ring, self.governor, self.state_file, interval_s).start()
        return self.sampler

    def stop_sampling(self) -> None:
        if self.sampler is not None:
            self.sampler.stop()
            self.sampler = None


def client_of(request: Request) -> str:
    """The client's address ("" when unknown)."""
    return request.client.host if request.client else ""


def console_open(request: Request) -> ConsoleContext:
    """FastAPI dependency for the login page: the context (the app's
    :class:`edge.service.api.guard.Guard` has checked the Host header and the Origin)."""
    return request.app.state.console


def console(request: Request) -> ConsoleContext:
    """FastAPI dependency: the context for a loopback client or a logged-in one (see module doc)."""
    ctx = console_open(request)
    client = client_of(request)
    if is_loopback(client) or ctx.sessions.valid(request.cookies.get(access.SESSION_COOKIE)):
        return ctx
    if not ctx.token:
        raise HTTPException(403, f"{client} is not a loopback client and api.token is not set, so nobody can log in "
                                 f"from there: set api.token, or open the console on the box itself")
    if request.method == "GET":
        raise HTTPException(303, "log in first", headers={"Location": f"/console/login?next={request.url.path}"})
    raise HTTPException(401, "log in first at /console/login")


FORM_TYPE = "application/x-www-form-urlencoded"


def csrf_token(request: Request, ctx: ConsoleContext) -> str | None:
    """The CSRF token of this client's session, else of its browser cookie, else None."""
    return ctx.sessions.token(request.cookies.get(access.SESSION_COOKIE), request.cookies.get(access.BROWSER_COOKIE))


async def form(request: Request, ctx: ConsoleContext) -> dict[str, str]:
    """The POSTed form fields (the first value of each); 415 for a body that is not
    :data:`FORM_TYPE`, 413 over :data:`MAX_FORM_BYTES`, 403 without the client's CSRF token."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != FORM_TYPE:
        raise HTTPException(415, f"a console form is {FORM_TYPE}, not {kind[:60] or 'a body without a type'}")
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise HTTPException(413, f"form over {MAX_FORM_BYTES} bytes")
    fields = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
    token = csrf_token(request, ctx)
    if token is None or not secrets.compare_digest(fields.get("csrf", "").encode(), token.encode()):
        raise HTTPException(403, "missing or wrong CSRF token: reload the page and try again")
    return fields


def page(request: Request, ctx: ConsoleContext, name: str, status_code: int = 200, **values) -> HTMLResponse:
    """The template ``name`` with the client's CSRF token (a browser cookie is set for a client
    without a session or one) and whether a login session is open (for Log out)."""
    session = request.cookies.get(access.SESSION_COOKIE) in ctx.sessions.expiry
    token, browser = csrf_token(request, ctx), None
    if token is None:
        browser = secrets.token_urlsafe(32)
        token = ctx.sessions.token(None, browser)
    response = TEMPLATES.TemplateResponse(request, name, {"csrf": token, "session": session, **values},
                                          status_code=status_code)
    if browser is not None:
        response.headers.append("Set-Cookie", access.browser_cookie_header(browser))
    return response


def searched(q: str) -> str:
    """``q`` when it is not over :data:`edge.stages.utterance.MAX_UTTERANCE_CHARS` (400 saying so)."""
    refusal = too_long(q)
    if refusal is not None:
        raise HTTPException(400, f"search: {refusal}")
    return q


def pager(path: str, p: data.Paged, **query) -> dict:
    """The page's rows and the links to the previous and next pages (None at either end)."""
    def link(n: int) -> str:
        return f"{path}?{urlencode({**{k: v for k, v in query.items() if v}, 'page': n})}"
    return {"paged": p, "prev_url": link(p.page - 1) if p.page > 1 else None,
            "next_url": link(p.page + 1) if p.page < p.pages else None}


Ctx = Annotated[ConsoleContext, Depends(console)]
OpenCtx = Annotated[ConsoleContext, Depends(console_open)]
router = APIRouter(prefix="/console", include_in_schema=False)


@router.get("")
async def home(ctx: Ctx):
    """The console's first page: Live."""
    return RedirectResponse("/console/live", 303)


@router.get("/live", response_class=HTMLResponse)
async def live_page(request: Request, ctx: Ctx):
    """Turns as they happen (the page; its script reads :func:`live_events`)."""
    return page(request, ctx, "live.html", sources=[str(p) for p in ctx.events] or ["(no events files)"])


@router.get("/live/events")
async def live_events(request: Request, ctx: Ctx):
    """Server-sent events: each event appended to the events files from now on."""
    return StreamingResponse(live.stream(ctx.events, request.is_disconnected), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.get("/records", response_class=HTMLResponse)
async def records(request: Request, ctx: Ctx, q: str = "", kind: str = "all", done: int | None = None,
                  page_no: Annotated[int, Query(alias="page")] = 1):
    """The history, newest first, filtered by ``q`` (words) and ``kind``, :data:`data.PAGE_ROWS` a
    page (``page``, from 1); ``done``: the undo just written."""
    all_records = ctx.store.records()
    items = {i.sku: i for i in ctx.store.items()}
    shown = data.paged(data.filter_records(all_records, items, searched(q), kind), page_no)
    undone_by = {r.undoes: r.id for r in all_records if r.undoes is not None}
    return page(request, ctx, "records.html", records=shown.rows, items=items, q=q, kind=kind, total=len(all_records),
                undoable=data.undoable(all_records), undone_by=undone_by, done=done,
                **pager("/console/records", shown, q=q, kind=kind if kind != "all" else ""))


@router.get("/history", response_class=HTMLResponse)
async def history(request: Request, ctx: Ctx, item: str = "", period: str = "this week", since: str = "",
                  until: str = "", by: str = "", place: str = ""):
    """What ``item`` (a SKU; empty: every item's records only, or those at ``place``) did over ``period`` (words: "last week")
    or the days ``since``–``until`` (YYYY-MM-DD): the figures the voice and ``edge records summary``
    give (:func:`edge.stock.questions.answer`), and the chart of them per day or week (``by``; by
    default days up to :data:`data.DAYS_CHARTED`, else weeks: :func:`edge.stock.questions.series`).
    A period that cannot be read is said, not guessed (status 400)."""
    got = await asyncio.to_thread(data.history, ctx.store, item.strip(), period.strip(), since.strip(), until.strip(),
                                  by.strip(), True, searched(place).strip())
    return page(request, ctx, "history.html", 400 if got.problem else 200, item=item, period=period, since=since,
                until=until, by=by, place=place,
                places=data.places(ctx.store),
                summary=got.summary, entries=got.entries, problem=got.problem, chart=got.chart,
                csv_url="/console/history.csv?" + urlencode({"item": item, "period": period, "since": since,
                                                             "until": until, "by": by, "place": place}),
                items=ctx.store.items())


@router.get("/history.csv")
async def history_csv(ctx: Ctx, item: str = "", period: str = "this week", since: str = "", until: str = "",
                      by: str = "", place: str = ""):
    """The History page's chart data as CSV (one row per day or week; 400 naming what is wrong with the input)."""
    got = await asyncio.to_thread(data.history, ctx.store, item.strip(), period.strip(), since.strip(), until.strip(),
                                  by.strip(), False, searched(place).strip())
    if got.problem:
        raise HTTPException(400, got.problem)
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in f"history-{item.strip() or place.strip() or 'all'}.csv")
    return Response(data.chart_csv(got.chart), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


@router.get("/records.csv")
async def records_csv(ctx: Ctx):
    """The whole history as CSV (the columns of :data:`edge.stock.store.EXPORT_COLUMNS`)."""
    buf = io.StringIO()
    ctx.store.export_csv(buf)
    return Response(buf.getvalue(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="records.csv"'})


def _target_or_409(ctx: ConsoleContext, record_id: int):
    records = ctx.store.records()
    target = next((r for r in records if r.id == record_id), None)
    if target is None:
        raise HTTPException(404, f"there is no record {record_id}")
    if record_id not in data.undoable(records):
        why = (f"record {record_id} is itself an undo (of record {target.undoes})" if target.undoes is not None
               else f"record {record_id} is already undone")
        raise HTTPException(409, f"{why}; nothing was changed")
    return target


@router.get("/records/undo", response_class=HTMLResponse)
async def undo_confirm(request: Request, ctx: Ctx, id: int):
    """Ask before undoing record ``id`` (404 for no such record, 409 when it cannot be undone); a
    record a later stock count settled is not offered: the page says so and what would be right."""
    target = _target_or_409(ctx, id)
    # a later stock count already settled it: said instead of offered, with what would be right
    return page(request, ctx, "undo.html", record=target, item=ctx.store.get(target.sku),
                covered=ctx.store.settled_by_count(id), box=ctx.store.box)


@router.post("/records/undo")
async def undo(request: Request, ctx: Ctx):
    """Undo the confirmed record: a compensating record, as a voice "undo that" writes."""
    fields = await form(request, ctx)
    try:
        record_id = int(fields.get("id", ""))
    except ValueError:
        raise HTTPException(400, "id: the record number to undo") from None
    _target_or_409(ctx, record_id)
    try:
        undo, _item = ctx.store.undo_record(record_id, f"console: undo record {record_id}",
                                            f"console-{uuid.uuid4().hex[:12]}")
    except StoreError as e:  # e.g. another box's record, or undone meanwhile: say why, change nothing
        if e.reason is not None:
            raise
        raise HTTPException(409, f"{e}; nothing was changed") from e
    return RedirectResponse(f"/console/records?done={undo.id}", 303)


@router.get("/inventory", response_class=HTMLResponse)
async def inventory(request: Request, ctx: Ctx, q: str = "", low: int = 0, imported: int | None = None,
                    page_no: Annotated[int, Query(alias="page")] = 1):
    """Items filtered by ``q``; ``low=1``: the low ones only (:func:`edge.stock.low.why`, the voice's rule);
    :data:`data.PAGE_ROWS` a page (``page``, from 1)."""
    words = searched(q).lower().split()
    all_items = ctx.store.items()
    items = [i for i in all_items
             if all(w in f"{i.sku} {i.item} {i.location} {' '.join(i.aliases)}".lower() for w in words)
             and (not low or why_low(i) is not None)]
    shown = data.paged(items, page_no)
    return page(request, ctx, "inventory.html", items=shown.rows, q=q, low=low,
                why={i.sku: why_low(i) for i in shown.rows}, imported=imported, total=len(all_items),
                **pager("/console/inventory", shown, q=q, low=low))


def posted_csv(fields: dict[str, str]) -> str:
    """The CSV text of a preview form: a chosen file's bytes (``csv_file``, base64, named
    ``csv_name``) decoded as ``edge inventory import`` decodes a file, else the typed ``csv`` text.

    Raises:
        StoreError: the file's bytes are not a CSV the import can read (the message names the file,
            the line and the fix, as the command line's does).
    """
    encoded = fields.get("csv_file", "")
    if not encoded:
        return fields.get("csv", "")
    name = Path(fields.get("csv_name", "") or "the chosen file").name[:200]
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise HTTPException(400, "csv_file: not base64; reload the page and choose the file again") from None
    try:
        return csvfile.decode(raw)
    except ValueError as e:
        raise StoreError(f"{name}: {e}") from e


@router.post("/inventory/preview", response_class=HTMLResponse)
async def inventory_preview(request: Request, ctx: Ctx):
    """What the POSTed CSV would change (422 with the import's error when it would be refused)."""
    fields = await form(request, ctx)
    csv_text = fields.get("csv", "")
    try:
        csv_text = posted_csv(fields)
        preview = data.preview_import(ctx.store, csv_text)
    except StoreError as e:
        return page(request, ctx, "preview.html", 422, preview=None, error=str(e), csv_text=csv_text)
    return page(request, ctx, "preview.html", preview=preview, error=None, csv_text=csv_text)


@router.post("/inventory/import")
async def inventory_import(request: Request, ctx: Ctx):
    """Import the POSTed CSV (the text the preview showed)."""
    csv_text = (await form(request, ctx)).get("csv", "")
    try:
        n = data.import_text(ctx.store, csv_text)
    except StoreError as e:
        return page(request, ctx, "preview.html", 422, preview=None, error=str(e), csv_text=csv_text)
    return RedirectResponse(f"/console/inventory?imported={n}", 303)


@router.get("/inventory/low.json")
async def inventory_low(ctx: Ctx, limit: int = 50):
    """The low items as ``edge status --json`` and the voice give them (:func:`edge.stock.low.report`):
    ``{"total", "items": [{"sku", "quantity", "unit", "why"}], "said"}``, at most ``limit`` (1..1000) items."""
    items, said = await asyncio.to_thread(low_report, ctx.store, max(1, min(int(limit), 1000)))
    return {**items, "said": said}


@router.get("/status", response_class=HTMLResponse)
async def status_page(request: Request, ctx: Ctx, window: str = "hour"):
    """The dashboard over the last ``window`` (``hour`` or ``day``: the ring's charts, reply times by
    path, wake words) and the governor, voice service, LLM chain, models and the doctor, read now."""
    if window not in status.WINDOWS:
        raise HTTPException(400, f"window: {window[:20]!r} is not one of {', '.join(status.WINDOWS)}")
    board = await asyncio.to_thread(status.dashboard, ctx)
    parts = await asyncio.to_thread(status.parts, ctx)
    return page(request, ctx, "status.html", parts=parts, board=board, window=window)


@router.get("/login", response_class=HTMLResponse)
async def login_page(request: Request, ctx: OpenCtx, next: str = "/console/records"):
    """The login form for clients that are not loopback."""
    return page(request, ctx, "login.html", next=_local(next), error=None)


def _local(path: str) -> str:
    """Only a console path is a place to go after the login (no open redirect)."""
    return path if path.startswith("/console/") and not path.startswith("//") else "/console/records"


@router.post("/login")
async def login(request: Request, ctx: OpenCtx):
    """Check ``api.token``; a session cookie and a redirect to ``next`` (401 wrong, 429 too many)."""
    fields = await form(request, ctx)
    client, nxt = client_of(request), _local(fields.get("next", ""))
    if ctx.sessions.blocked(client):
        return page(request, ctx, "login.html", 429, next=nxt,
                    error=f"too many failed logins from {client}; wait {access.LOGIN_WINDOW_S:.0f} s")
    if not access.token_matches(fields.get("token", ""), ctx.token):
        ctx.sessions.failed(client)
        return page(request, ctx, "login.html", 401, next=nxt, error="wrong token (api.token in the box's settings)")
    return RedirectResponse(nxt, 303, headers={"Set-Cookie": access.cookie_header(ctx.sessions.new())})


@router.post("/logout")
async def logout(request: Request, ctx: Ctx):
    """End the session."""
    await form(request, ctx)
    ctx.sessions.end(request.cookies.get(access.SESSION_COOKIE))
    return RedirectResponse("/console/login", 303, headers={
        "Set-Cookie": f"{access.SESSION_COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0"})
