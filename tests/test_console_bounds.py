"""The console's bounds, on the real API server and a real store: no page inside another site's
frame (checked in Debian's chromium), records and inventory in pages of 200 rows with totals and
next/previous links (chromium), a CSRF token per client and per login session, only form bodies,
and a chosen CSV file decoded exactly as ``edge inventory import`` decodes it."""
from __future__ import annotations

import base64
import codecs

import httpx
import pytest

from edge.service.console.data import PAGE_ROWS
from edge.stock.store import Store
from tests.helpers import INVENTORY
from tests.test_cli import edge
from tests.test_console import TOKEN, Page, Running, browser, csrf_of, engine, lan, page, server, store  # noqa: F401

HEADER = "sku,item,location,quantity,unit,aliases\n"


# --------------------------------------------------------------------------------------------
# framing, in the browser


def test_no_console_page_can_be_framed_by_another_site(page, server, store):
    rec, _ = store.log("GLV-NIT-L", 20, "log twenty boxes of nitrile gloves received", "turn-a")
    confirm = f"{server.url}/console/records/undo?id={rec.id}"
    pg = page.page
    seen = {}
    pg.on("response", lambda r: seen.setdefault(r.url, r.headers))
    pg.goto(confirm)
    pg.wait_for_selector("#confirm-undo")  # served at the top level
    for path in ("/console/records/undo?id=" + str(rec.id), "/console/records", "/console/inventory",
                 "/console/login", "/console/nowhere", "/api/tags"):
        r = pg.request.get(server.url + path)
        assert r.headers.get("x-frame-options") == "DENY", path
        assert r.headers.get("content-security-policy") == "frame-ancestors 'none'", path
    # another site's page framing the confirm page: chromium refuses to show it
    pg.set_content(f'<iframe id="f" src="{confirm}" width="600" height="400"></iframe>')
    pg.wait_for_load_state("load")
    frame = pg.frame_locator("#f")
    assert frame.locator("#confirm-undo").count() == 0
    assert store.get("GLV-NIT-L").quantity == 32


# --------------------------------------------------------------------------------------------
# paging, in the browser


def test_records_are_shown_200_a_page_with_totals_and_links(page, server, store):
    n = 2 * PAGE_ROWS + 50
    for i in range(n):
        store.log("BLT-M8-30", 1, f"log one M8 bolt number {i}", f"turn-{i}")
    pg = page.goto(server.url + "/console/records")
    assert pg.locator("tbody tr").count() == PAGE_ROWS
    assert f"Records 1–{PAGE_ROWS} of {n}" in pg.inner_text("main")
    assert pg.locator("#prev-page").count() == 0
    newest = store.records()[-1].id
    assert pg.locator(f"#record-{newest}").count() == 1
    pg.locator("#next-page").first.click()
    pg.wait_for_url("**page=2")
    assert pg.locator("tbody tr").count() == PAGE_ROWS
    assert f"Records {PAGE_ROWS + 1}–{2 * PAGE_ROWS} of {n}" in pg.inner_text("main")
    pg.locator("#next-page").first.click()
    pg.wait_for_url("**page=3")
    assert pg.locator("tbody tr").count() == 50 and pg.locator("#next-page").count() == 0
    assert pg.locator(f"#record-{store.records()[0].id}").count() == 1  # the oldest, last
    pg.locator("#prev-page").first.click()
    pg.wait_for_url("**page=2")
    # a search keeps its words across pages
    pg = page.goto(server.url + "/console/records?q=bolt+number+1")
    matching = sum(1 for i in range(n) if "1" in str(i))
    assert f"of {matching}" in pg.inner_text(".pager")
    assert page.problems == []


def test_inventory_is_shown_200_a_page(page, server, store, tmp_path):
    csv_path = tmp_path / "big.csv"
    csv_path.write_text(HEADER + "".join(f"PRT-{i:04d},part {i},bin {i % 50},{i},pcs,\n" for i in range(300)))
    store.import_csv(csv_path)
    total = len(store.items())
    pg = page.goto(server.url + "/console/inventory")
    assert pg.locator("tbody tr").count() == PAGE_ROWS
    assert f"Items 1–{PAGE_ROWS} of {total}" in pg.inner_text("main")
    pg.locator("#next-page").first.click()
    pg.wait_for_url("**page=2")
    assert pg.locator("tbody tr").count() == total - PAGE_ROWS
    pg = page.goto(server.url + "/console/inventory?q=part&page=2")
    assert f"Items {PAGE_ROWS + 1}–300 of 300" in pg.inner_text("main")
    assert page.problems == []


# --------------------------------------------------------------------------------------------
# CSRF and form bodies, over HTTP


def test_each_client_has_its_own_csrf_token(server, store):
    rec, _ = store.log("GLV-NIT-L", 20, "log twenty boxes", "turn-a")
    with httpx.Client(base_url=server.url, timeout=30) as a, httpx.Client(base_url=server.url, timeout=30) as b:
        token_a = csrf_of(a.get(f"/console/records/undo?id={rec.id}").text)
        token_b = csrf_of(b.get(f"/console/records/undo?id={rec.id}").text)
        assert token_a != token_b
        assert b.post("/console/records/undo", data={"id": rec.id, "csrf": token_a}).status_code == 403
        with httpx.Client(base_url=server.url, timeout=30) as c:  # no cookie at all: no token is right
            assert c.post("/console/records/undo", data={"id": rec.id, "csrf": token_a}).status_code == 403
        assert store.get("GLV-NIT-L").quantity == 32
        assert a.post("/console/records/undo", data={"id": rec.id, "csrf": token_a}).status_code == 303
    assert store.get("GLV-NIT-L").quantity == 12


def test_the_login_form_token_is_not_the_session_token(lan, inventory_store):
    with httpx.Client(base_url=lan.lan_url, timeout=30) as c:
        before = csrf_of(c.get("/console/login").text)
        r = c.post("/console/login", data={"csrf": before, "token": TOKEN, "next": "/console/records"})
        assert r.status_code == 303
        after = csrf_of(c.get("/console/records").text)
        assert after != before
        rec, _ = inventory_store.log("GLV-NIT-L", 20, "log twenty boxes", "turn-a")
        assert c.post("/console/records/undo", data={"id": rec.id, "csrf": before}).status_code == 403
        assert c.post("/console/records/undo", data={"id": rec.id, "csrf": after}).status_code == 303


@pytest.mark.parametrize("content_type", ["text/plain", "application/json", None])
def test_a_post_that_is_not_a_form_is_refused(server, store, content_type):
    rec, _ = store.log("GLV-NIT-L", 20, "log twenty boxes", "turn-a")
    with httpx.Client(base_url=server.url, timeout=30) as c:
        token = csrf_of(c.get(f"/console/records/undo?id={rec.id}").text)
        headers = {"content-type": content_type} if content_type else {}
        r = c.post("/console/records/undo", content=f"id={rec.id}&csrf={token}".encode(), headers=headers)
        assert r.status_code == 415, r.text
        assert "application/x-www-form-urlencoded" in r.text
    assert store.get("GLV-NIT-L").quantity == 32


def test_a_search_over_the_utterance_cap_is_refused_saying_so(server, store):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        for path in ("/console/records", "/console/inventory"):
            r = c.get(path, params={"q": "bolt " * 300})
            assert r.status_code == 400 and "at most 1,000 characters" in r.text, path


# --------------------------------------------------------------------------------------------
# a chosen CSV file: the command line's decoding and messages


def encodings(tmp_path):
    text = HEADER + "BLT-M8-30,M8 bolt,bin 12,150,pcs,\nWSH-1,Unterlegscheibe groß,bin 3,40,pcs,\n"
    return {"latin-1.csv": text.encode("latin-1"),
            "utf-16-bom.csv": codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
            "utf-16-no-bom.csv": text.replace("groß", "gross").encode("utf-16-le"),
            "utf-8.csv": text.encode("utf-8")}


def cli_import(tmp_path, name: str, raw: bytes):
    """``edge inventory import`` of ``raw`` into a fresh store: (exit status, message without the path)."""
    d = tmp_path / name.replace(".", "-")
    d.mkdir()
    (d / name).write_bytes(raw)
    cfg = d / "edge.yaml"
    cfg.write_text(f"board: x86-dev\nstore: {{path: {d / 'edge.db'}}}\nllm: {{engine: none}}\n")
    Store(d / "edge.db").close()
    r = edge("inventory", "import", d / name, "--config", cfg, check=False)
    return r.returncode, r.stderr.strip().replace(f"{d / name}: ", "").removeprefix("edge: ")


@pytest.mark.parametrize("name", ["latin-1.csv", "utf-16-bom.csv", "utf-16-no-bom.csv", "utf-8.csv"])
def test_a_chosen_file_is_decoded_as_edge_inventory_import_decodes_it(server, store, tmp_path, name):
    raw = encodings(tmp_path)[name]
    code, message = cli_import(tmp_path, name, raw)
    with httpx.Client(base_url=server.url, timeout=30) as c:
        token = csrf_of(c.get("/console/inventory").text)
        r = c.post("/console/inventory/preview", data={"csrf": token, "csv_file": base64.b64encode(raw).decode(),
                                                       "csv_name": name, "csv": ""})
    if code == 0:
        assert r.status_code == 200, r.text
        assert "groß" in r.text or "gross" in r.text
        assert "\ufffd" not in r.text
    else:
        assert code == 2 and r.status_code == 422
        assert message and message in r.text.replace("&#39;", "'"), (message, r.text)
        assert f"{name}: {message}" in r.text.replace("&#39;", "'")
    assert store.get("BLT-M8-30").quantity == 140  # a preview writes nothing


def test_a_latin_1_file_chosen_in_the_browser_is_refused_as_the_command_line_refuses_it(page, server, store, tmp_path):
    raw = encodings(tmp_path)["latin-1.csv"]
    code, message = cli_import(tmp_path, "latin-1.csv", raw)
    assert code == 2 and "Latin-1" in message
    path = tmp_path / "latin-1.csv"
    path.write_bytes(raw)
    pg = page.goto(server.url + "/console/inventory")
    pg.set_input_files("#csv-file", str(path))
    pg.wait_for_function("document.getElementById('csv-bytes').value.length > 0")
    pg.click("#preview")
    assert f"latin-1.csv: {message}" in pg.inner_text("[role=alert]")
    assert store.get("BLT-M8-30").quantity == 140
    assert INVENTORY.exists()
