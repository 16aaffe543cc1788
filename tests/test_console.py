"""The web console (edge.service.console) on the real API server (uvicorn in a thread) and a real
store, driven by Debian's chromium through playwright (pointed at /usr/bin/chromium: it cannot
download a browser) and, for the access rules, by httpx. Screenshots of every page, at 360 px
and desktop width, go to out/console-screenshots/ in the checkout."""
from __future__ import annotations

import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from drivers.audio import wav_frames
from edge.config import ApiSettings, load_settings
from edge.governor.governor import Governor
from edge.llm.chain import EngineChain
from edge.loop.build import printer, run_frames
from edge.service.api.app import ServerThread, create_app
from edge.service.console.live import Follower
from edge.service.console.routes import ConsoleContext
from tests.helpers import INVENTORY, REPO, SESSION_WAKE, SESSIONS
from tests.test_cli import edge

CHROMIUM = "/usr/bin/chromium"
SHOTS = REPO / "out" / "console-screenshots"
WIDTHS = {"phone": 360, "desktop": 1280}
TOKEN = "console-test-token-0123456789"


@pytest.fixture(scope="module")
def engine():
    chain = EngineChain([]).start()  # grammar only: the console needs no LLM
    yield chain
    chain.close()


class Running:
    """The API with the console on ``host``, serving a context whose store each test sets."""

    def __init__(self, engine, host="127.0.0.1", **api):
        self.ctx = ConsoleContext(store=None, hosts=(host,))  # type: ignore[arg-type]
        self.app = create_app(engine, ApiSettings(host=host, **api), console=self.ctx)
        self.thread = ServerThread(self.app, host, 0).start()
        self.url = f"http://127.0.0.1:{self.thread.port}"

    def stop(self):
        self.thread.stop()


@pytest.fixture(scope="module")
def server(engine):
    s = Running(engine)
    yield s
    s.stop()


@pytest.fixture
def store(server, inventory_store):
    server.ctx.store = inventory_store
    return inventory_store


@pytest.fixture(scope="module")
def browser():
    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: apt-get install chromium (scripts/setup.sh does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        yield b
        b.close()


class Page:
    """A browser page that records console errors, uncaught exceptions and failed requests."""

    def __init__(self, browser, width=1280):
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.problems: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("response", lambda r: r.status >= 400 and self.problems.append(f"{r.status} {r.url}"))

    def goto(self, url):
        self.page.goto(url, wait_until="load")
        return self.page

    def close(self):
        self.page.close()


@pytest.fixture
def page(browser):
    p = Page(browser)
    yield p
    p.close()


def unlabelled_controls(page) -> list[str]:
    """Form controls (not hidden) without a label a screen reader would read."""
    return page.evaluate("""() => [...document.querySelectorAll('input, select, textarea, button')]
        .filter(e => e.type !== 'hidden' && !e.hidden)
        .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim())
        .map(e => e.outerHTML)""")


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


# --------------------------------------------------------------------------------------------
# in the browser


def test_every_page_loads_without_errors_at_phone_and_desktop_width(browser, server, store):
    store.log("GLV-NIT-L", 20, "log twenty boxes of nitrile gloves received", "turn-a")
    store.log("DRL-BIT-6", -3, "we used three drill bits from drawer four", "turn-b")
    csv_text = INVENTORY.read_text().replace("BLT-M8-30,M8 bolt,bin 12,140", "BLT-M8-30,M8 bolt,bin 12,150")
    for label, width in WIDTHS.items():
        p = Page(browser, width)
        try:
            for name, path in (("records", "/console/records"), ("inventory", "/console/inventory"),
                               ("live-empty", "/console/live"),
                               ("undo", "/console/records/undo?id=" + str(store.records()[-1].id))):
                pg = p.goto(server.url + path)
                assert pg.locator("h1").count() == 1
                assert unlabelled_controls(pg) == [], name
                # nothing wider than the window: readable at 360 px without sideways scrolling of the page
                assert pg.evaluate("document.documentElement.scrollWidth") <= width, name
                shot(pg, f"{name}-{label}")
            pg = p.goto(server.url + "/console/inventory")
            pg.fill("#csv", csv_text)
            pg.click("#preview")
            pg.wait_for_selector("#changes")
            shot(pg, f"preview-{label}")
            assert p.problems == [], p.problems
        finally:
            p.close()


def test_undo_from_the_records_page_changes_the_store(page, server, store):
    rec, _ = store.log("GLV-NIT-L", 20, "log twenty boxes of nitrile gloves received", "turn-a")
    pg = page.goto(server.url + "/console/records")
    row = pg.locator(f"#record-{rec.id}")
    assert "nitrile gloves" in row.inner_text() and "+20" in row.inner_text()
    row.get_by_role("link", name="Undo…").click()
    pg.wait_for_selector("#confirm-undo")
    assert store.get("GLV-NIT-L").quantity == 32  # asked, not done yet
    pg.click("#confirm-undo")
    pg.wait_for_selector("[role=status]")
    assert "Undone" in pg.inner_text("[role=status]")
    assert store.get("GLV-NIT-L").quantity == 12
    recs = store.records()
    assert [r.delta for r in recs] == [20, -20] and recs[1].undoes == rec.id
    assert f"undone by #{recs[1].id}" in pg.locator(f"#record-{rec.id}").inner_text()
    assert pg.locator("text=Undo…").count() == 0  # nothing left to undo
    assert page.problems == []


def test_a_csv_import_shows_its_preview_and_then_applies(page, server, store, tmp_path):
    csv_path = tmp_path / "count.csv"
    csv_path.write_text(INVENTORY.read_text().replace("BLT-M8-30,M8 bolt,bin 12,140", "BLT-M8-30,M8 bolt,bin 12,150")
                        + "HEX-5,hex key,drawer 9,15,pcs,allen keys\n")
    pg = page.goto(server.url + "/console/inventory")
    pg.set_input_files("#csv-file", str(csv_path))
    pg.wait_for_function("document.getElementById('csv-bytes').value.length > 0")  # the file's bytes, base64
    pg.click("#preview")
    pg.wait_for_selector("#changes")
    rows = pg.locator("#changes tbody tr").all_inner_texts()
    assert len(rows) == 2, rows
    assert re.search(r"BLT-M8-30\s+M8 bolt\s+quantity\s+140\s+150", rows[0]), rows
    assert re.search(r"HEX-5\s+hex key\s+new\s+—\s+15", rows[1]), rows
    assert store.get("BLT-M8-30").quantity == 140 and store.get("HEX-5") is None  # a preview writes nothing
    pg.click("#apply")
    pg.wait_for_selector("[role=status]")
    assert "Imported 11 rows" in pg.inner_text("[role=status]")
    assert store.get("BLT-M8-30").quantity == 150 and store.get("HEX-5").quantity == 15
    assert "hex key" in pg.locator("#item-HEX-5").inner_text()
    assert page.problems == []


def test_a_bad_csv_is_not_imported_and_says_why(page, server, store):
    pg = page.goto(server.url + "/console/inventory")
    pg.fill("#csv", "sku,item,location,quantity,unit,aliases\nBLT-M8-30,M8 bolt,bin 12,lots,pcs,\n")
    pg.click("#preview")
    alert = pg.inner_text("[role=alert]")
    assert "quantity" in alert and "line 2" in alert, alert
    assert store.get("BLT-M8-30").quantity == 140


# --------------------------------------------------------------------------------------------
# the rules, over HTTP


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def test_a_post_without_the_csrf_token_is_refused(server, store):
    rec, _ = store.log("GLV-NIT-L", 20, "log twenty boxes", "turn-a")
    with httpx.Client(base_url=server.url, timeout=30) as c:
        for form in ({"id": rec.id}, {"id": rec.id, "csrf": "guessed"}):
            r = c.post("/console/records/undo", data=form)
            assert r.status_code == 403 and "CSRF" in r.text
        r = c.post("/console/inventory/import", data={"csv": INVENTORY.read_text().replace(",140,", ",1,")})
        assert r.status_code == 403
        assert store.get("GLV-NIT-L").quantity == 32 and store.get("BLT-M8-30").quantity == 140
        token = csrf_of(c.get(f"/console/records/undo?id={rec.id}").text)
        r = c.post("/console/records/undo", data={"id": rec.id, "csrf": token})
        assert r.status_code == 303 and store.get("GLV-NIT-L").quantity == 12  # with it, the same POST works
        r = c.post("/console/records/undo", data={"id": rec.id, "csrf": token})
        assert r.status_code == 409 and "already undone" in r.text  # once only


def test_an_import_preview_names_the_items_the_file_leaves_out(server, store):
    short = "".join(line for line in INVENTORY.read_text().splitlines(keepends=True)
                    if not line.startswith(("FUS-5A,", "GOG-SAF,")))
    with httpx.Client(base_url=server.url, timeout=30) as c:
        token = csrf_of(c.get("/console/inventory").text)
        r = c.post("/console/inventory/preview", data={"csv": short, "csrf": token})
    assert r.status_code == 200
    assert re.search(r"2 items are in the store\s+but not in this file: kept \(FUS-5A, GOG-SAF\)", r.text), r.text
    assert store.get("FUS-5A").quantity == 60  # a preview writes nothing


def test_any_record_can_be_undone_from_the_console_once_and_an_undo_cannot(server, store):
    older, _ = store.log("GLV-NIT-L", 20, "log twenty boxes", "turn-a")
    store.log("FUS-5A", -2, "two fuses", "turn-b")  # the latest change; the older one is still undoable
    with httpx.Client(base_url=server.url, timeout=30) as c:
        page_html = c.get("/console/records").text
        assert f'href="/console/records/undo?id={older.id}"' in page_html
        token = csrf_of(c.get(f"/console/records/undo?id={older.id}").text)
        r = c.post("/console/records/undo", data={"id": older.id, "csrf": token})
        assert r.status_code == 303
        assert store.get("GLV-NIT-L").quantity == 12 and store.get("FUS-5A").quantity == 58
        undo = store.records()[-1]
        assert undo.undoes == older.id
        r = c.post("/console/records/undo", data={"id": undo.id, "csrf": token})
        assert r.status_code == 409 and f"record {undo.id} is itself an undo" in r.text
        assert c.get("/console/records/undo?id=999").status_code == 404
        assert len(store.records()) == 3


def test_another_host_name_is_refused(server, store):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        r = c.get("/console/records", headers={"Host": f"attacker.example:{server.thread.port}"})
        assert r.status_code == 400 and "Host header" in r.text
        assert c.get("/console/records", headers={"Host": f"localhost:{server.thread.port}"}).status_code == 200


def test_records_search_filter_and_csv_export(server, store):
    store.log("GLV-NIT-L", 20, "log twenty boxes of nitrile gloves received", "turn-a")
    store.log("DRL-BIT-6", -3, "we used three drill bits", "turn-b")
    with httpx.Client(base_url=server.url, timeout=30) as c:
        gloves = c.get("/console/records", params={"q": "gloves"}).text
        assert "turn-a" in gloves and "turn-b" not in gloves
        used = c.get("/console/records", params={"kind": "out"}).text
        assert "turn-b" in used and "turn-a" not in used
        r = c.get("/console/records.csv")
        assert r.headers["content-type"].startswith("text/csv")
        lines = r.text.splitlines()
        assert lines[0] == "id,time,sku,delta,utterance,turn_id,undoes,location,kind,counted" and len(lines) == 3
        low = c.get("/console/inventory", params={"low": 1}).text
        assert "PNT-WHT" in low and "BLT-M8-30" not in low  # 0 cans of paint; 140 bolts are not low


def lan_address() -> str | None:
    """This machine's non-loopback IPv4 address (the one its default route leaves from), if any."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sk:
            sk.connect(("192.0.2.1", 9))  # UDP: no packet is sent, only the route is looked up
            ip = sk.getsockname()[0]
    except OSError:
        return None
    return None if ip.startswith("127.") else ip


@pytest.fixture
def lan(engine, inventory_store):
    """The API and console on every address with api.token, and this machine's LAN address to come from."""
    ip = lan_address()
    if ip is None:
        pytest.skip("no non-loopback address on this machine to connect from")
    s = Running(engine, host="0.0.0.0", token=TOKEN, allowed_hosts=[ip])
    s.ctx.store = inventory_store
    s.lan_url = f"http://{ip}:{s.thread.port}"
    yield s
    s.stop()


def test_loopback_needs_no_login_and_the_api_keeps_its_token(lan):
    with httpx.Client(timeout=30) as c:
        assert c.get(f"{lan.url}/console/records").status_code == 200
        assert c.get(f"{lan.url}/api/tags").status_code == 401


def test_another_address_must_log_in_and_gets_a_strict_session_cookie(lan, inventory_store):
    rec, _ = inventory_store.log("GLV-NIT-L", 20, "log twenty boxes", "turn-a")
    with httpx.Client(base_url=lan.lan_url, timeout=30) as c:
        r = c.get("/console/records")
        assert r.status_code == 303 and r.headers["location"] == "/console/login?next=/console/records"
        assert c.post("/console/records/undo", data={"id": rec.id}).status_code == 401
        login = c.get("/console/login?next=/console/records")
        assert login.status_code == 200 and 'type="password"' in login.text
        token = csrf_of(login.text)
        r = c.post("/console/login", data={"csrf": token, "token": "wrong-token-xxxxxxxx", "next": "/console/records"})
        assert r.status_code == 401 and "set-cookie" not in r.headers
        r = c.post("/console/login", data={"csrf": token, "token": TOKEN, "next": "/console/records"})
        assert r.status_code == 303 and r.headers["location"] == "/console/records"
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/console" in cookie
        assert c.get("/console/records").status_code == 200  # the session cookie is sent back
        assert c.post("/console/records/undo", data={"id": rec.id}).status_code == 403  # still needs CSRF
        assert inventory_store.get("GLV-NIT-L").quantity == 32
        assert c.post("/console/logout", data={"csrf": token}).status_code == 403  # the login rotated the token
        session_token = csrf_of(c.get("/console/records").text)
        assert session_token != token
        r = c.post("/console/logout", data={"csrf": session_token})
        assert r.status_code == 303 and c.get("/console/records").status_code == 303  # logged out


def test_failed_logins_are_limited_per_address(lan):
    with httpx.Client(base_url=lan.lan_url, timeout=30) as c:
        token = csrf_of(c.get("/console/login").text)
        codes = [c.post("/console/login", data={"csrf": token, "token": f"wrong-{i}"}).status_code for i in range(6)]
        assert codes == [401] * 5 + [429]
        assert c.post("/console/login", data={"csrf": token, "token": TOKEN}).status_code == 429  # even the right one


def test_no_cors_headers_for_another_origin(server, store):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        r = c.get("/console/records", headers={"Origin": "http://attacker.example"})
        assert r.status_code == 403 and "access-control-allow-origin" not in r.headers  # cross-origin: refused
        r = c.options("/console/records/undo", headers={"Origin": "http://attacker.example",
                                                         "Access-Control-Request-Method": "POST"})
        assert "access-control-allow-origin" not in r.headers and r.status_code >= 400


def test_a_login_is_required_in_the_browser_from_another_address(browser, lan):
    p = Page(browser, 360)
    try:
        pg = p.goto(lan.lan_url + "/console/inventory")
        assert pg.url.startswith(lan.lan_url + "/console/login")
        shot(pg, "login-phone")
        pg.fill("#token", TOKEN)
        pg.click("#login")
        pg.wait_for_selector("h1:has-text('Inventory')")
        assert pg.url == lan.lan_url + "/console/inventory"
        assert pg.locator("#item-BLT-M8-30").count() == 1
        assert pg.locator("button:has-text('Log out')").count() == 1
        cookies = pg.context.cookies()
        (c,) = [c for c in cookies if c["name"] == "edge_console"]
        assert c["httpOnly"] and c["sameSite"] == "Strict"
        # a 303 to the login page is the only 3xx: nothing else failed
        assert p.problems == [], p.problems
    finally:
        p.close()


# --------------------------------------------------------------------------------------------
# Live: a turn run through the voice loop appears as it happens


def test_a_turn_run_through_the_loop_appears_on_the_live_page(page, server, store, rig_grammar, tmp_path, request):
    events_file = tmp_path / "events.jsonl"
    events_file.write_text('{"type": "wake", "t_ms": 0, "turn_id": "oldturn", "wake_word": "alexa", "score": 0.9}\n')
    server.ctx.events = (events_file,)
    settings, stages = rig_grammar
    saved, stages.store = stages.store, store
    request.addfinalizer(lambda: setattr(stages, "store", saved))  # the shared rig gets its store back
    pg = page.goto(server.url + "/console/live")
    pg.wait_for_function("document.getElementById('live-state').textContent.startsWith('Connected')")
    stages.wake.flush()
    # the voice loop as `edge run` runs it: its printer truncates the file and writes each event as it happens
    run_frames(wav_frames(SESSIONS / "query_m8_bolts.wav"), stages, settings, tmp_path, printer(True, events_file))
    pg.wait_for_selector("#turns li [data-field=timings]", timeout=60_000)
    turns = pg.locator("#turns li")
    assert turns.count() == 1  # the turn of the earlier run is not replayed
    text = turns.first.inner_text()
    assert "Wake word: hey_mycroft" in text
    assert re.search(r"Heard: .*bolts", text, re.I), text
    assert "Meant: query_stock (sku=BLT-M8-30" in text and "Reply: " in text and "140" in text
    assert "total" in text  # the turn's timings
    pg.set_viewport_size({"width": 360, "height": 900})
    assert pg.evaluate("document.documentElement.scrollWidth") <= 360
    shot(pg, "live-phone")
    pg.set_viewport_size({"width": 1280, "height": 900})
    shot(pg, "live-desktop")
    assert page.problems == []


def test_the_follower_gives_whole_lines_and_starts_over_after_truncation(tmp_path):
    f = tmp_path / "events.jsonl"
    f.write_bytes(b'{"type": "old"}\n')
    fol = Follower(f)
    assert fol.new_lines() == []  # from now on
    with open(f, "ab") as fh:
        fh.write(b'{"type": "a"}\n{"type": "b"')
    assert fol.new_lines() == [b'{"type": "a"}']  # the half-written line waits
    with open(f, "ab") as fh:
        fh.write(b'}\n')
    assert fol.new_lines() == [b'{"type": "b"}']
    f.write_bytes(b'{"type": "new"}\n')  # a new run truncated the file
    assert fol.new_lines() == [b'{"type": "new"}']


def test_the_follower_notices_a_rewrite_that_already_grew_past_the_old_end(tmp_path):
    f = tmp_path / "events.jsonl"
    f.write_bytes(b'{"type": "wake", "turn_id": "old"}\n')
    fol = Follower(f)
    f.write_bytes(b'{"type": "wake", "turn_id": "new1"}\n{"type": "reply", "turn_id": "new1"}\n')
    assert fol.new_lines() == [b'{"type": "wake", "turn_id": "new1"}', b'{"type": "reply", "turn_id": "new1"}']


# --------------------------------------------------------------------------------------------
# Status


def test_the_status_page_shows_governor_service_chain_models_and_doctor(browser, engine, inventory_store, tmp_path):
    settings = load_settings(board="x86-dev", overrides={"store": {"path": str(tmp_path / "x.db")}})
    ctx = ConsoleContext(store=inventory_store, settings=settings)
    app = create_app(engine, ApiSettings(), governor=Governor(settings), state_file=tmp_path / "service-state.json",
                     console=ctx)
    thread = ServerThread(app, "127.0.0.1", 0).start()
    p = Page(browser, 1280)
    try:
        pg = p.goto(f"http://127.0.0.1:{thread.port}/console/status")
        text = {s: pg.inner_text(f"#{s}") for s in ("governor", "voice-service", "llm-chain", "models", "doctor")}
        assert re.search(r"Thermal level\s+normal", text["governor"]), text["governor"]
        assert "not running" in text["voice-service"]  # no service-state.json: said so
        assert re.search(r"grammar\s.*yes", text["llm-chain"]), text["llm-chain"]
        assert re.search(r"wake-hey-mycroft\s+wake_word\s+[\d.]+ MiB\s+CC-BY-NC-SA-4.0\s+no", text["models"]), text["models"]
        for check in ("packages", "models", "memory", "disk"):
            assert re.search(rf"^{check}\s+(ok|warn|fail)\s", text["doctor"], re.M), (check, text["doctor"])
        assert unlabelled_controls(pg) == []
        shot(pg, "status-desktop")
        pg.set_viewport_size({"width": 360, "height": 900})
        assert pg.evaluate("document.documentElement.scrollWidth") <= 360
        shot(pg, "status-phone")
        assert p.problems == [], p.problems
    finally:
        p.close()
        thread.stop()


def test_every_control_is_reachable_with_the_keyboard(page, server, store):
    rec, _ = store.log("GLV-NIT-L", 20, "log twenty boxes", "turn-a")
    pg = page.goto(server.url + "/console/records")
    wanted = pg.evaluate("""() => [...document.querySelectorAll('a[href], input, select, textarea, button')]
        .filter(e => e.type !== 'hidden' && !e.hidden && e.offsetParent !== null).length""")
    seen = []
    for _ in range(wanted + 2):
        pg.keyboard.press("Tab")
        seen.append(pg.evaluate("""() => { const e = document.activeElement;
            return e.tagName + '|' + (e.id || e.getAttribute('href') || e.textContent.trim()); }"""))
    for target in ("INPUT|q", "SELECT|kind", "BUTTON|Show", "A|/console/records.csv",
                   f"A|/console/records/undo?id={rec.id}", "A|/console/inventory"):
        assert target in seen, (target, seen)
    for _ in range(wanted + 2):  # back onto the Undo link, then open it with the keyboard
        if pg.evaluate("document.activeElement.getAttribute('href')") == f"/console/records/undo?id={rec.id}":
            break
        pg.keyboard.press("Shift+Tab")
    pg.keyboard.press("Enter")
    pg.wait_for_selector("#confirm-undo")
    pg.focus("#confirm-undo")
    pg.keyboard.press("Enter")
    pg.wait_for_selector("[role=status]")
    assert store.get("GLV-NIT-L").quantity == 12


# --------------------------------------------------------------------------------------------
# edge serve, as a user runs it


def test_edge_serve_serves_the_console_from_the_configured_store(tmp_path):
    with socket.socket() as sk:  # a free port (the race with another process is accepted)
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    out = tmp_path / "out"
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\noutput_dir: {out}\nllm: {{engine: none}}\n")
    edge("inventory", "import", INVENTORY, "--config", cfg)
    proc = subprocess.Popen([sys.executable, "-m", "edge.cli", "serve", "--config", cfg, "--port", str(port)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as c:
            while True:
                try:
                    r = c.get("/console/inventory")
                    break
                except httpx.TransportError:
                    assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else ""
                    time.sleep(0.2)
            assert r.status_code == 200 and "BLT-M8-30" in r.text  # the config's store
            live = c.get("/console/live").text
            assert str(out / "events.jsonl") in live and str(out / "wyoming-events.jsonl") in live
            assert c.get("/console/static/console.css").status_code == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0  # a clean stop
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_history_page_shows_the_figures_the_voice_says(server, tmp_path):
    """The history view and the voice read the same query code: the same figures for one item and
    period (a record at 23:59:59 and one at 00:00:00 fall on their own days; the undone one never counts)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from edge.stock.periods import Calendar
    from edge.stock.store import Store
    from tests.helpers import say_to_store

    berlin = ZoneInfo("Europe/Berlin")
    at = {"t": datetime(2026, 11, 30, 9, 0, tzinfo=berlin)}
    csv = tmp_path / "inv.csv"
    csv.write_text("sku,item,location,quantity,unit,aliases\nDRL-6,drill bit,drawer 4,20,pcs,drill bits\n")
    mine = Store(tmp_path / "edge.db", clock=lambda: at["t"], calendar=Calendar(berlin, 0, lambda: at["t"]))
    mine.import_csv(csv)
    mine.log("DRL-6", -3, "3 drill bits", "a")
    at["t"] = datetime(2026, 11, 30, 23, 59, 59, tzinfo=berlin)
    mine.log("DRL-6", 10, "10 in", "b")
    at["t"] = datetime(2026, 12, 1, 0, 0, 0, tzinfo=berlin)
    mine.log("DRL-6", -2, "2 drill bits", "c")
    mine.log("DRL-6", -4, "4 drill bits", "d")
    mine.undo("undo that", "e")
    at["t"] = datetime(2026, 12, 4, 15, 0, tzinfo=berlin)
    saved, server.ctx.store = server.ctx.store, mine
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            week = c.get("/console/history", params={"item": "DRL-6", "period": "this week"}).text
            monday = c.get("/console/history", params={"item": "DRL-6", "since": "2026-11-30", "until": "2026-11-30"}).text
            vague = c.get("/console/history", params={"item": "DRL-6", "period": "that week"}).text
        assert '<td class="num" id="used">5</td>' in week and '<td class="num" id="received">10</td>' in week
        assert '<td class="num" id="used">3</td>' in monday and '<td class="num" id="received">10</td>' in monday
        assert "Which week?" in vague and 'id="used"' not in vague
        said = say_to_store(mine, "how many drill bits did we use this week").text
        assert said == "This week: 5 drill bits used, on Monday and Tuesday, and 10 drill bits came in (net +5)."
    finally:
        server.ctx.store = saved
        mine.close()
