"""The console's pictures in Debian's chromium (playwright, the browser of tests/test_console.py): the
History chart of a store with four months of generated site history (bench/records_site.py: three
boxes, logs, transfers, counts, undos) read back from the page and compared with the records
questions; its CSV; the Status dashboard drawn from a ring of samples of this machine's real signals
and the events of a running voice service's turns; one rule and one wording for "low" on the
inventory page, in the voice's answer, in ``edge status`` and in the console's JSON. Screenshots at
phone and desktop width go to examples/console/ (the README shows them)."""
from __future__ import annotations

import hashlib
import json
import math
import sys
from datetime import datetime, timedelta

import httpx
import pytest

from edge.config import load_settings
from edge.events import IntentEvent, NoSpeech, TurnEnd, Wake
from edge.governor.governor import Governor
from edge.service.console import dashboard
from edge.service.console.ring import Ring, take
from edge.service.runstate import ServiceState
from edge.stock import history
from edge.stock.periods import Calendar, Period, resolve
from edge.stock.questions import Question, answer
from edge.stock.store import Store
from tests.helpers import REPO
from tests.test_console import WIDTHS, Page, Running, browser, engine, lan, unlabelled_controls  # noqa: F401

sys.path.insert(0, str(REPO / "bench"))

SHOTS = REPO / "examples" / "console"
VENDOR = REPO / "edge" / "service" / "console" / "static" / "vendor" / "uplot"


@pytest.fixture(scope="module")
def server(engine):  # noqa: F811
    s = Running(engine)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from records_site import NOW, TZ, make_site

    folder = tmp_path_factory.mktemp("site")
    make_site(folder).close()
    store = Store(folder / "crib.db", box="crib", calendar=Calendar(TZ, 0, lambda: NOW))
    yield store, NOW, TZ
    store.close()


def drawn(pg, chart_id: str) -> dict:
    """What uPlot holds for the chart (its data arrays) and how many canvas pixels are not blank."""
    return pg.evaluate("""id => {
        const u = window.edgeCharts[id];
        const c = u.ctx.canvas, d = u.ctx.getImageData(0, 0, c.width, c.height).data;
        let ink = 0;
        for (let i = 3; i < d.length; i += 4) { if (d[i] > 0) { ink++; } }
        return {data: u.data, ink: ink, width: c.width, height: c.height};
    }""", chart_id)


def shot(pg, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_the_vendored_chart_library_is_the_one_its_note_names():
    note = (VENDOR / "VERSION.md").read_text()
    for name in ("uPlot.iife.min.js", "uPlot.min.css"):
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() in note, name
    assert "MIT" in (VENDOR / "LICENSE").read_text()


def test_the_history_chart_draws_the_figures_of_the_records_questions(browser, server, site):  # noqa: F811
    store, now, tz = site
    server.ctx.store = store
    for label, width in WIDTHS.items():
        p = Page(browser, width)
        try:
            for by, period in (("week", "in the last 12 weeks"), ("day", "last month")):
                pg = p.goto(f"{server.url}/console/history?item=GLV-L&period={period.replace(' ', '+')}&by={by}")
                pg.wait_for_function("window.edgeCharts && window.edgeCharts['chart-history']")
                got = drawn(pg, "chart-history")
                assert got["ink"] > 1000, got["ink"]  # bars and a line, not an empty canvas
                xs, used, received, stock = got["data"]
                buckets = json.loads(pg.inner_text("#chart-data"))["buckets"]
                assert len(xs) == len(buckets) >= (12 if by == "week" else 30)
                for k, b in enumerate(buckets):  # each bar is the total question over its day or week
                    start, end = datetime.fromisoformat(b["start"]), datetime.fromisoformat(b["end"])
                    assert xs[k] == start.timestamp() and (end - start) <= timedelta(days=7 if by == "week" else 1, hours=1)
                    f = answer(store, Question("total", "any", "GLV-L", period_fixed=Period(start, end, "x", "x"))).facts
                    assert (used[k], received[k]) == (f["used"], f["received"]), (by, k)
                    if k:  # the stock line moves by the change question's figure
                        change = answer(store, Question("change", "any", "GLV-L", period_fixed=Period(start, end, "x", "x")))
                        assert stock[k] - stock[k - 1] == change.facts["change"], (by, k)
                after = answer(store, Question("change", "any", "GLV-L", period_fixed=Period(end, now, "x", "x"))).facts
                assert stock[-1] == store.get("GLV-L").quantity - after["change"]
                assert sum(used) > 0 and sum(received) > 0
                assert unlabelled_controls(pg) == []
                assert pg.evaluate("document.documentElement.scrollWidth") <= width
                shot(pg, f"history-{by}-{label}")
            assert p.problems == [], p.problems
        finally:
            p.close()


def test_the_chart_for_every_item_counts_the_records_and_its_csv_is_the_chart(browser, server, site):  # noqa: F811
    store, now, tz = site
    server.ctx.store = store
    p = Page(browser)
    try:
        pg = p.goto(f"{server.url}/console/history?period=last+month")
        pg.wait_for_function("window.edgeCharts && window.edgeCharts['chart-history']")
        xs, records = drawn(pg, "chart-history")["data"]
        month = resolve("last month", now, tz)
        assert len(xs) == (month.end - month.start).days
        total = answer(store, Question("entries", "any", None, period_fixed=month, limit=1)).facts["total"]
        assert sum(records) == total > 100
        csv_url = pg.get_attribute("#chart-csv", "href")
        assert p.problems == [], p.problems
    finally:
        p.close()
    rows = httpx.get(server.url + csv_url).text.splitlines()
    assert rows[0] == "start,end,records" and [int(r.split(",")[2]) for r in rows[1:]] == records
    item = httpx.get(f"{server.url}/console/history.csv?item=GLV-L&period=last+month").text.splitlines()
    assert item[0] == "start,end,used,received,stock,unit" and item[1].endswith(",box")
    assert httpx.get(f"{server.url}/console/history.csv?item=NOPE").status_code == 400


@pytest.fixture
def running(tmp_path, site):
    """A voice service's state file and events (real ServiceState and events), and a ring of
    samples of this machine's signals (the real governor) over the last two hours."""
    store, _, _ = site
    state = ServiceState(tmp_path / "service-state.json")
    events = tmp_path / "events.jsonl"
    ring = Ring(tmp_path / "console-samples.db")
    governor = Governor(load_settings(board="x86-dev"))
    t0 = datetime.now().timestamp() - 7200
    source = {"template": "grammar", "paraphrase": "paraphrase", "model": "llm", "documents": "docs"}
    lines, done = [], []
    for k in range(120):  # a turn a minute, some false wakes
        turn = f"t{k}"
        lines.append(Wake(k * 1000, turn, "okay nabu", 0.9))
        if k % 9 == 4:
            lines.append(NoSpeech(k * 1000 + 10, turn, 3000))
        else:
            path = ("template", "template", "paraphrase", "model", "documents")[k % 5]
            ms = 300 + (k * 37) % 900 + (1500 if path == "model" else 0)
            lines.append(IntentEvent(k * 1000 + 5, turn, "ask", {}, source[path]))
            lines.append(TurnEnd(k * 1000 + 9, turn, {"total_ms": ms}))
            done.append((path, ms))
            state.event(lines[-1])
            state.write()
        ring.add(take(governor, state.path, clock=lambda k=k: t0 + 60 * k))
    events.write_text("".join(e.to_json() + "\n" for e in lines))
    reply_ms: dict[str, list] = {}
    for path, ms in done[-100:]:
        reply_ms.setdefault(path, []).append(ms)
    return {"state": state, "events": events, "ring": ring, "governor": governor, "reply_ms": reply_ms, "turns": len(done)}


def nearest_rank(values, q):
    v = sorted(values)
    return v[math.ceil(q * len(v)) - 1]


def test_the_status_dashboard_draws_the_ring_and_says_the_figures_in_words(browser, server, site, running):  # noqa: F811
    store, _, _ = site
    ctx = server.ctx
    ctx.store, ctx.ring, ctx.governor, ctx.events = store, running["ring"], running["governor"], (running["events"],)
    ctx.state_file = running["state"].path
    try:
        for label, width in WIDTHS.items():
            p = Page(browser, width)
            try:
                for window in ("hour", "day"):
                    pg = p.goto(f"{server.url}/console/status?window={window}")
                    pg.wait_for_function("window.edgeCharts && window.edgeCharts['chart-memory']")
                    board = json.loads(pg.inner_text("#board-data"))
                    mem, load = drawn(pg, "chart-memory"), drawn(pg, "chart-load")
                    assert mem["ink"] > 500 and load["ink"] > 500
                    n = len(mem["data"][0])
                    assert mem["data"][1] == board["mem_used_mib"] and (55 <= n <= 60 if window == "hour" else n == 120)
                    assert all(isinstance(v, int) and v > 0 for v in board["mem_used_mib"])
                    assert board["reserve_mib"][0] == round(running["governor"].snapshot.mem.total_bytes * 0.7 / 2**20)
                    turns = drawn(pg, "chart-turns")
                    assert turns["ink"] > 200 and turns["data"][1] == [h["turns"] for h in board["turns_per_hour"]]
                    if window == "day":  # every turn after the first sample
                        assert sum(turns["data"][1]) == running["turns"] - 1
                    words = " ".join(pg.inner_text(f"#{part}") for part in ("dashboard", "governor", "models"))
                    for wrong in ("None", "True", "False", "[", "signal unknown"):
                        assert wrong not in words, wrong
                    assert pg.inner_text("main").count("does not let edge read") <= 1
                    for path, ms in running["reply_ms"].items():  # the last 100 turns by path
                        row = pg.inner_text(f"#path-{path}")
                        assert f"{nearest_rank(ms, 0.95)} ms" in row, (path, row)
                    assert "Wake words heard: 120; dismissed because no speech followed: 13" in pg.inner_text("#wakes")
                    assert unlabelled_controls(pg) == []
                    assert pg.evaluate("document.documentElement.scrollWidth") <= width
                    shot(pg, f"status-{window}-{label}")
                assert p.problems == [], p.problems
            finally:
                p.close()
    finally:
        ctx.ring = ctx.governor = ctx.state_file = None
        ctx.events = ()


def test_turn_figures_keep_the_last_hundred_turns(running):
    got = dashboard.turn_figures((running["events"],))
    assert len(got["turns"]) == 100 and sum(f["turns"] for f in got["by_path"].values()) == 100
    assert got["wakes"] == 120 and got["dismissed"] == 13 and running["turns"] == 107


LOW_CSV = """sku,item,location,quantity,unit,aliases,reorder_level
PNT-WHT,white paint,shelf F,0,can,paint,
GLV-L,nitrile gloves,shelf B,10,box,gloves,10
TIE-300,cable ties,drawer 9,4,pack,ties,
GOG-SAF,safety goggles,shelf A,11,pcs,goggles,10
FUS-5A,fuse,bin 3,2,pcs,fuses,
"""


def test_low_is_one_rule_and_one_wording_everywhere(browser, server, tmp_path):  # noqa: F811
    from edge.stages import dialog
    from edge.stages.nlu.types import Intent
    from tests.test_cli import edge

    (tmp_path / "inv.csv").write_text(LOW_CSV)
    path = tmp_path / "edge.db"
    with Store(path) as s:
        s.import_csv(tmp_path / "inv.csv")
        s.log("FUS-5A", -3, "used three fuses", "t1")  # one more than the records had: below zero
    store = Store(path)
    server.ctx.store = store
    try:
        want = {"PNT-WHT": "out of stock", "GLV-L": "reorder at 10", "FUS-5A": "below zero"}
        p = Page(browser)
        try:
            pg = p.goto(server.url + "/console/inventory?low=1")
            shown = {r.get_attribute("id").removeprefix("item-"): r.locator("strong").inner_text()
                     for r in pg.locator("tbody tr[id]").all()}
            assert p.problems == []
        finally:
            p.close()
        api = httpx.get(server.url + "/console/inventory/low.json").json()
        said = dialog.act(Intent("low_stock"), store, "what are we running low on", "t9").text
    finally:
        store.close()
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\nstore: {{path: {path}}}\n")
    status = json.loads(edge("status", "--json", "--config", cfg).stdout)["low_stock"]
    assert shown == want
    assert {i["sku"]: i["why"] for i in api["items"]} == want and api["total"] == 3
    assert {i["sku"]: i["why"] for i in status["items"]} == want and status["total"] == 3
    assert said.startswith("Low on stock:") and all(f"({w})" in said for w in want.values()), said
    assert api["said"] == f"low stock: {', '.join(f'{k} {q} {u} ({w})' for k, q, u, w in [(i['sku'], i['quantity'], i['unit'], i['why']) for i in status['items']])}"


def test_the_ring_keeps_only_its_latest_samples(tmp_path):
    ring = Ring(tmp_path / "ring.db", size=5)
    for k in range(8):
        ring.add(take(None, None, clock=lambda k=k: 1000.0 + k))
    assert len(ring) == 5 and [s.t for s in ring.since(0)] == [1003.0, 1004.0, 1005.0, 1006.0, 1007.0]
    assert ring.latest().mem_used is None  # nothing read without a governor: unknown, not 0


NEW_ROUTES = ("/console/history?period=last+month", "/console/history.csv?period=today", "/console/inventory/low.json",
              "/console/status?window=day")


def test_the_new_routes_keep_the_login_and_the_host_check(lan):  # noqa: F811
    with httpx.Client(base_url=lan.lan_url, timeout=30) as c:  # another address, not logged in
        for path in NEW_ROUTES:
            r = c.get(path)
            assert r.status_code == 303 and r.headers["location"].startswith("/console/login"), path
    with httpx.Client(timeout=30) as c:
        for path in NEW_ROUTES:
            assert c.get(lan.url + path).status_code == 200, path  # loopback
            r = c.get(lan.url + path, headers={"Host": "rebind.example"})
            assert r.status_code == 400 and "Host header" in r.text, path


def test_the_chain_moves_are_listed_in_words_latest_first():
    from edge.llm.chain import EngineChain
    from edge.service.console.status import move_lines

    at = {"now": 1000.0}
    chain = EngineChain([], clock=lambda: at["now"]).start()
    try:
        at["now"] += 185
        assert move_lines(chain) == ["3 min ago: start → grammar (start: no LLM step configured; grammar only)"]
    finally:
        chain.close()


def test_the_chart_of_a_place_counts_its_records(browser, server, site):  # noqa: F811
    store, now, tz = site
    server.ctx.store = store
    p = Page(browser, 360)
    try:
        pg = p.goto(f"{server.url}/console/history?place=SHELF+B&period=last+month")  # any case, as said
        pg.wait_for_function("window.edgeCharts && window.edgeCharts['chart-history']")
        got = drawn(pg, "chart-history")
        assert got["ink"] > 500 and "Records at shelf B" in pg.inner_text("h2#use-over-time")
        assert p.problems == [], p.problems
        shot(pg, "history-place-phone")
    finally:
        p.close()
    xs, records = got["data"]
    month = resolve("last month", now, tz)
    a, b = month.utc_bounds()
    with store.reading() as conn:  # a plain count of the records that stand at the place
        want = conn.execute("SELECT COUNT(*) FROM records AS r WHERE r.time >= ? AND r.time < ? AND r.location = 'shelf B' "
                            f"AND {history.STANDS}", (a, b)).fetchone()[0]
    assert sum(records) == want > 10 and len(xs) == 30
    assert answer(store, Question("entries", "any", None, period_fixed=month, location="shelf B")).facts["total"] == want
    csv = httpx.get(f"{server.url}/console/history.csv?place=shelf+B&period=last+month")
    assert csv.status_code == 200 and [int(r.split(",")[2]) for r in csv.text.splitlines()[1:]] == records
    assert "history-shelf-B.csv" in csv.headers["content-disposition"]
    assert httpx.get(f"{server.url}/console/history.csv?place=nowhere").status_code == 400
    assert httpx.get(f"{server.url}/console/history.csv?place=shelf+B&item=GLV-L").status_code == 400
