"""The running sums of the records (edge.stock.summary, schema 8) on four months of generated site
history written through the real store (three boxes, logs, transfers, counts, undos, other boxes'
records pulled in: bench/records_site.py): the sums the triggers kept equal the sums recomputed
from the records, a store of schema 7 gets them when opened, and every question that reads them
gives what a plain read of the records gives, for periods on and off UTC day and hour boundaries."""
from __future__ import annotations

import random
import sqlite3
import sys
from datetime import timedelta, timezone

import pytest

from edge.stock import history, summary
from edge.stock.periods import Calendar, utc_iso
from edge.stock.store import Store
from tests.helpers import REPO

sys.path.insert(0, str(REPO / "bench"))

STANDS = history.STANDS


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from records_site import NOW, TZ, make_site

    store = make_site(tmp_path_factory.mktemp("site"))
    yield store, NOW, TZ
    store.close()


def tables(path) -> tuple[list, list]:
    with sqlite3.connect(path) as conn:
        days = conn.execute("SELECT * FROM record_days WHERE used <> 0 OR received <> 0 OR moved <> 0 OR counted <> 0 "
                            "OR counts <> 0 OR logs <> 0 OR change <> 0 ORDER BY day, sku").fetchall()
        hours = conn.execute("SELECT * FROM record_hours WHERE standing <> 0 ORDER BY hour, box").fetchall()
    return days, hours


def copy_of(path, to):
    """A copy of the open store (its WAL included: the backup API, not a file copy)."""
    with sqlite3.connect(path) as src, sqlite3.connect(to) as dst:
        src.backup(dst)
    return to


def rebuilt(path, tmp_path) -> tuple[list, list]:
    copy = copy_of(path, tmp_path / "rebuilt.db")
    with sqlite3.connect(copy) as conn:
        summary.rebuild(conn)
    return tables(copy)


def test_the_triggers_keep_the_sums_a_recount_gives(site, tmp_path):
    store, _, _ = site
    days, hours = tables(store.path)
    assert len(days) > 500 and len(hours) > 500  # months of several items and boxes
    with sqlite3.connect(store.path) as conn:
        undos = conn.execute("SELECT COUNT(*) FROM records WHERE undoes IS NOT NULL").fetchone()[0]
        kinds = {k for (k,) in conn.execute("SELECT DISTINCT kind FROM records")}
    assert undos > 10 and kinds >= {"log", "transfer", "count", "undo"}
    assert (days, hours) == rebuilt(store.path, tmp_path)


def test_a_schema_7_store_gets_the_sums_when_opened(site, tmp_path):
    store, now, tz = site
    old = copy_of(store.path, tmp_path / "v7.db")
    with sqlite3.connect(old) as conn:
        for t in ("records_summary_add", "records_summary_undo"):
            conn.execute(f"DROP TRIGGER {t}")
        conn.execute("DROP TABLE record_days")
        conn.execute("DROP TABLE record_hours")
        conn.execute("PRAGMA user_version = 7")
    with Store(old, calendar=Calendar(tz, 0, lambda: now)) as s:
        assert s.get("DRL-6") is not None
    assert tables(old) == tables(store.path)


def raw_sums(conn, sku, a, b):
    return conn.execute(
        "SELECT COALESCE(SUM(CASE WHEN r.kind = 'log' AND r.delta < 0 THEN -r.delta END), 0), "
        "COALESCE(SUM(CASE WHEN r.kind = 'log' AND r.delta > 0 THEN r.delta END), 0), "
        "COALESCE(SUM(CASE WHEN r.kind = 'transfer' AND r.delta > 0 THEN r.delta END), 0), "
        "COALESCE(SUM(CASE WHEN r.kind = 'count' THEN r.delta END), 0), COUNT(CASE WHEN r.kind = 'count' THEN 1 END), "
        f"COUNT(CASE WHEN r.kind = 'log' THEN 1 END) FROM records AS r WHERE r.sku = ? AND r.time >= ? AND r.time < ? "
        f"AND {STANDS}", (sku, a, b)).fetchone()


def raw_top(conn, a, b, what):
    cond = "r.delta < 0" if what == "used" else "r.delta > 0"
    rows = conn.execute(f"SELECT r.sku, SUM(ABS(r.delta)) AS q FROM records AS r WHERE r.time >= ? AND r.time < ? "
                        f"AND r.kind = 'log' AND {cond} AND {STANDS} GROUP BY r.sku ORDER BY q DESC, r.sku", (a, b))
    return [(s, q) for s, q in rows]


def periods(now, tz, rng):
    """Said periods (local midnights), and ranges starting and ending at odd minutes."""
    cal = Calendar(tz, 0, lambda: now)
    out = [cal.resolve(w).utc_bounds() for w in ("today", "yesterday", "this week", "last week", "this month",
                                                 "last month", "in november", "in september", "this morning",
                                                 "over the last 3 days", "since monday")]
    for _ in range(15):
        a = now - timedelta(days=rng.uniform(0, 120))
        out.append((utc_iso(a), utc_iso(a + timedelta(hours=rng.uniform(0.2, 24 * 40)))))
    out.append((utc_iso(now.replace(hour=0, minute=0).astimezone(timezone.utc).replace(hour=0)),
                utc_iso(now.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0))))
    return out


def test_the_questions_read_from_the_sums_give_what_the_records_give(site):
    store, now, tz = site
    rng = random.Random(5)
    checked = whole = 0
    with store.reading() as conn:
        skus = [s for (s,) in conn.execute("SELECT sku FROM items")]
        boxes = [b for (b,) in conn.execute("SELECT DISTINCT box FROM records")]
        for a, b in periods(now, tz, rng):
            whole += summary.split(a, b)[0] is not None
            for sku in skus:
                assert history.sums(conn, sku, a, b) == tuple(raw_sums(conn, sku, a, b)), (sku, a, b)
            for what in ("used", "received"):
                assert history.top(conn, a, b, what) == raw_top(conn, a, b, what), (what, a, b)
            for box in (None, *boxes):
                mine = "" if box is None else "AND r.box = ?"
                want = conn.execute(f"SELECT COUNT(*) FROM records AS r WHERE r.time >= ? AND r.time < ? {mine} AND {STANDS}",
                                    (a, b) + (() if box is None else (box,))).fetchone()[0]
                assert history.standing(conn, a, b, box) == want, (box, a, b)
            checked += 1
    assert checked == 27 and 10 <= whole < checked  # read from the sums with pieces, and from the records alone


def test_split_keeps_whole_days_and_hours_and_the_pieces_at_either_end():
    whole, pieces = summary.split("2026-11-30T23:00:00.000+00:00", "2026-12-31T23:00:00.000+00:00")
    assert whole == ("2026-12-01", "2026-12-31")
    assert pieces == [("2026-11-30T23:00:00.000+00:00", "2026-12-01T00:00:00.000+00:00"),
                      ("2026-12-31T00:00:00.000+00:00", "2026-12-31T23:00:00.000+00:00")]
    assert summary.split("2026-12-01T00:00:00.000+00:00", "2026-12-02T00:00:00.000+00:00") == (("2026-12-01", "2026-12-02"), [])
    assert summary.split("2026-12-01T05:30:00.000+00:00", "2026-12-01T06:10:00.000+00:00", "hour") == (
        None, [("2026-12-01T05:30:00.000+00:00", "2026-12-01T06:10:00.000+00:00")])
    assert summary.split("2026-12-01T05:30:00.000+00:00", "2026-12-01T08:00:00.000+00:00", "hour")[0] == (
        "2026-12-01T06", "2026-12-01T08")
