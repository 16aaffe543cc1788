"""Site sync of schema 4 records against a real PostgreSQL: places, kinds, counted values and
transfers travel; a stock count made on two boxes counts once; a transfer is undone as one everywhere."""
from __future__ import annotations

import psycopg
import pytest

from edge.site.sync import SiteSync
from tests import pgserver
from tests.helpers import INVENTORY
from tests.site_helpers import Box, check_site, new_site_db, run_server

server = pytest.fixture(scope="module")(run_server)
dsn = pytest.fixture(new_site_db)

pytestmark = [
    pytest.mark.skipif(not pgserver.available(), reason="PostgreSQL 15 not installed (apt-get install postgresql)"),
    pytest.mark.skipif(not INVENTORY.is_file(), reason=f"missing {INVENTORY}"),
]


def _sync(*boxes: Box) -> None:
    for b in boxes:
        with b.store() as s:
            sync = SiteSync(s, b.settings())
            try:
                sync.sync_once()
            finally:
                sync.close()


def test_counts_transfers_and_their_undo_travel_and_a_double_count_counts_once(tmp_path, dsn):
    a, b = Box(tmp_path, "goods-in", dsn), Box(tmp_path, "line", dsn)
    with a.store() as s:
        s.count("WSH-M8", 490, "counted 490 washers", "a1")
        s.transfer("BLT-M8-30", 10, "bin 12", "bin 99", "move ten bolts to bin 99", "a2")
    with b.store() as s:
        s.count("WSH-M8", 490, "counted 490 washers", "b1")  # the same shelf, counted on both boxes offline
        s.log("WSH-M8", -5, "five washers", "b2")
    _sync(a, b, a)
    for box in (a, b):
        with box.store() as s:
            assert s.get("WSH-M8").quantity == 485  # not 500 - 10 - 10 - 5
            assert s.get("BLT-M8-30").stock == (("bin 12", 130), ("bin 99", 10))
    with psycopg.connect(dsn) as c:
        rows = c.execute("SELECT box, sku, delta, location, kind, counted, op IS NOT NULL FROM edge_movements "
                         "ORDER BY box, seq").fetchall()
    assert rows == [("goods-in", "WSH-M8", -10, "bin 2023", "count", 490, False),
                    ("goods-in", "BLT-M8-30", -10, "bin 12", "transfer", None, True),
                    ("goods-in", "BLT-M8-30", 10, "bin 99", "transfer", None, True),
                    ("line", "WSH-M8", -10, "bin 2023", "count", 490, False),
                    ("line", "WSH-M8", -5, "bin 2023", "log", None, False)]
    with a.store() as s:
        s.undo("undo that", "a3")  # the transfer, as one
    _sync(a, b)
    with b.store() as s:
        assert s.get("BLT-M8-30").stock == (("bin 12", 140), ("bin 99", 0))
        assert [r.kind for r in s.records()][-2:] == ["undo", "undo"]
    with a.store() as s, b.store() as t:
        assert {i.sku: i.quantity for i in s.items()} == {i.sku: i.quantity for i in t.items()}
        assert set(s.movements()) == set(t.movements())


def test_plain_logs_still_merge_by_adding(tmp_path, dsn):
    a, b = Box(tmp_path, "goods-in", dsn), Box(tmp_path, "line", dsn)
    written = {"goods-in": a.log(6, undo_every=3), "line": b.log(5)}
    _sync(a, b, a)
    check_site(dsn, [a, b], written)


def test_text_travels_unchanged_through_the_batch_insert(tmp_path, dsn):
    """A push sends each column as one array: quotes, backslashes, braces, commas, the word NULL
    and non-ASCII text must come out as they went in."""
    a, b = Box(tmp_path, "goods-in", dsn), Box(tmp_path, "line", dsn)
    said = ['take "two" fuses, {please}', "back\\slash 'n' NULL", "zwei Schrauben „rein“ 十个"]
    with a.store() as s:
        for n, text in enumerate(said):
            s.log("FUS-5A", n + 1, text, f"t{n}", location=f"bin {{{n},x}}" if n else None)
        s.count("TIE-CBL-200", 299, "NULL", "t9")
    _sync(a, b)
    with a.store() as s, b.store() as t:
        assert [m.utterance for m in t.movements("goods-in")][:3] == said
        assert set(t.movements("goods-in")) == set(s.movements("goods-in"))
        assert {i.sku: i.stock for i in s.items()} == {i.sku: i.stock for i in t.items()}
