"""The console does not undo a record that a later stock count settled: it says so and offers what
would be right (the real API server and store, Debian's chromium through playwright, and httpx)."""
from __future__ import annotations

import httpx

from tests.test_console import browser, csrf_of, engine, page, server, shot, store  # noqa: F401  (fixtures)


def test_the_console_says_a_later_count_settled_the_record_and_offers_the_count(page, server, store):  # noqa: F811
    log, _ = store.log("FUS-5A", -3, "we used 3 fuses", "turn-a")
    count, _ = store.count("FUS-5A", 50, "count 50 fuses", "turn-b")
    pg = page.goto(server.url + "/console/records")
    pg.locator(f"#record-{log.id}").get_by_role("link", name="Undo…").click()
    pg.wait_for_selector("#count-settled")
    said = pg.inner_text("#count-settled")
    assert "a later stock count already settled the stock" in said
    assert f"record {count.id}" in said and "counted 50" in said and "53 instead of 50" in said, said
    assert pg.locator("#confirm-undo").count() == 0  # not offered
    shot(pg, "undo-count-settled")
    pg.click("#undo-count")  # what would be right if the count was wrong: undo the count first
    pg.wait_for_selector("#confirm-undo")
    pg.click("#confirm-undo")
    pg.wait_for_selector("[role=status]")
    assert store.get("FUS-5A").quantity == 57
    pg = page.goto(server.url + f"/console/records/undo?id={log.id}")  # now the change itself can go
    pg.click("#confirm-undo")
    pg.wait_for_selector("[role=status]")
    assert store.get("FUS-5A").quantity == 60
    assert page.problems == []


def test_a_post_of_an_undo_a_later_count_settled_is_refused(server, store):  # noqa: F811
    log, _ = store.log("FUS-5A", -3, "we used 3 fuses", "turn-a")
    with httpx.Client(base_url=server.url, timeout=30) as c:
        token = csrf_of(c.get(f"/console/records/undo?id={log.id}").text)
        store.count("FUS-5A", 50, "count 50 fuses", "turn-b")  # counted while the page was open
        r = c.post("/console/records/undo", data={"id": log.id, "csrf": token})
    assert r.status_code == 409 and "already settled the stock" in r.text and "nothing was changed" in r.text
    assert store.get("FUS-5A").quantity == 50 and len(store.records()) == 2
