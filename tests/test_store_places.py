"""Stock per place, transfers, counts, low stock, decimals and the CSV rules of schema 4, against a
real SQLite file."""
from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest

from edge.stock.store import Movement, Store, StoreError

CSV = """sku,item,location,quantity,unit,aliases,reorder_level
HB-12-80,hex bolt M12 x 80 mm,bin 12,241,pcs,hex bolts 80,50
HB-12-80,hex bolt M12 x 80 mm,bin 90,40,pcs,,50
WSH-3,washer,bin 3,42,pcs,washers,
CBL-2,copper cable,reel 1,12.5,m,cable,20
GLV-L,nitrile gloves L,shelf A,3,box,gloves large,5
"""


def _csv(tmp_path: Path, text: str, name: str = "inv.csv") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "edge.db") as s:
        assert s.import_csv(_csv(tmp_path, CSV)).rows == 5
        yield s


def test_one_sku_on_two_rows_is_stored_in_two_places(store):
    bolt = store.get("HB-12-80")
    assert bolt.quantity == 281 and bolt.location == "bin 12"
    assert bolt.stock == (("bin 12", 241), ("bin 90", 40))
    assert bolt.reorder_level == 50 and bolt.at("Bin 90") == 40 and bolt.place("BIN 90") == "bin 90"
    assert store.get("CBL-2").quantity == 12.5 and store.get("WSH-3").reorder_level is None
    assert [i.sku for i in store.items()] == ["CBL-2", "GLV-L", "HB-12-80", "WSH-3"]


def test_a_log_names_its_place_or_uses_the_only_one(store):
    rec, item = store.log("HB-12-80", -3, "three bolts out of bin 12", "t1", location="bin 12")
    assert rec.location == "bin 12" and rec.kind == "log" and item.at("bin 12") == 238 and item.quantity == 278
    with pytest.raises(StoreError, match=r"stored in 2 places \(bin 12, bin 90\); say which"):
        store.log("HB-12-80", -1, "one bolt", "t2")
    with pytest.raises(StoreError, match="not stored at 'bin 5'"):
        store.log("HB-12-80", -1, "one bolt from bin 5", "t3", location="bin 5")
    rec, item = store.log("WSH-3", -2, "two washers", "t4")
    assert rec.location == "bin 3" and item.quantity == 40
    rec, item = store.log("WSH-3", 10, "ten washers into bin 4", "t5", location="bin 4")  # stock in: a new place
    assert item.stock == (("bin 3", 40), ("bin 4", 10))
    # a retry of the same turn writes nothing more
    assert store.log("HB-12-80", -3, "three bolts out of bin 12", "t1", location="bin 12")[0].id == 1
    assert len(store.records()) == 3


def test_log_many_writes_all_or_none(store):
    with pytest.raises(StoreError, match="unknown sku 'NOPE'"):
        store.log_many([("WSH-3", -1, None), ("NOPE", -1, None)], "a washer and a nope", "t1")
    assert store.records() == [] and store.get("WSH-3").quantity == 42
    done = store.log_many([("WSH-3", -1, None), ("GLV-L", -1, None)], "a washer and gloves", "t2")
    assert [r.sku for r, _i in done] == ["WSH-3", "GLV-L"] and store.get("GLV-L").quantity == 2


def test_a_transfer_is_two_rows_and_one_undo(store):
    out, into, item = store.transfer("HB-12-80", 30, "bin 12", "bin 90", "move thirty bolts to bin 90", "t1")
    assert (out.delta, out.location, into.delta, into.location) == (-30, "bin 12", 30, "bin 90")
    assert out.kind == into.kind == "transfer" and out.op == into.op is not None
    assert item.stock == (("bin 12", 211), ("bin 90", 70)) and item.quantity == 281
    assert store.transfer("HB-12-80", 30, "bin 12", "bin 90", "again", "t1")[0] == out  # a retry
    undo, item = store.undo("undo that", "t2")
    assert item.stock == (("bin 12", 241), ("bin 90", 40))
    undos = [r for r in store.records() if r.kind == "undo"]
    assert [(r.undoes, r.delta) for r in undos] == [(out.id, 30), (into.id, -30)]
    assert undo.op is not None and [r.id for r in store.operation(undo.op)] == [r.id for r in undos]
    assert store.undo("undo again", "t3") is None
    with pytest.raises(StoreError, match="from bin 12 to itself"):
        store.transfer("HB-12-80", 1, "bin 12", "Bin 12", "nowhere", "t4")
    with pytest.raises(StoreError, match="positive"):
        store.transfer("HB-12-80", -1, "bin 12", "bin 90", "backwards", "t5")


def test_a_count_keeps_the_value_and_the_difference(store):
    rec, item = store.count("WSH-3", 40, "counted forty washers in bin three", "t1", location="bin 3")
    assert (rec.kind, rec.counted, rec.delta) == ("count", 40, -2) and item.quantity == 40
    rec, item = store.count("WSH-3", 40, "counted forty again", "t2", location="bin 3")
    assert rec.delta == 0 and item.quantity == 40
    store.log("WSH-3", -5, "five washers", "t3")
    undone, item = store.undo("undo", "t4")
    assert item.quantity == 40
    undone, item = store.undo("undo", "t5")  # the second count: the first one stands
    assert item.quantity == 40
    undone, item = store.undo("undo", "t6")  # the first count: back to the imported 42
    assert item.quantity == 42


def test_a_count_made_on_two_boxes_counts_once(tmp_path):
    a, b = Store(tmp_path / "a.db", box="a"), Store(tmp_path / "b.db", box="b")
    inv = _csv(tmp_path, CSV)
    for s in (a, b):
        s.import_csv(inv)
    a.count("WSH-3", 40, "counted forty washers", "a1")
    b.count("WSH-3", 40, "counted forty washers", "b1")  # the same shelf, counted on both boxes before a sync
    b.log("WSH-3", -1, "one washer", "b2")
    a.apply(b.movements("b"))
    b.apply(a.movements("a"))
    assert a.get("WSH-3").quantity == b.get("WSH-3").quantity == 39  # not 42 - 2 - 2 - 1
    a.close()
    b.close()


def test_an_old_movement_arriving_after_a_count_does_not_change_it(tmp_path):
    a = Store(tmp_path / "a.db", box="a")
    a.import_csv(_csv(tmp_path, CSV))
    rec, _ = a.count("WSH-3", 30, "counted thirty", "a1")
    late = Movement("01AAAAAAAAAAAAAAAAAAAAAAAA", "z", 1, "2020-01-01T00:00:00.000+00:00", "WSH-3", -4, "old log",
                    "z1", None, "bin 3", "log")
    a.apply([late])
    assert a.get("WSH-3").quantity == 30  # the count already saw the stock of that time
    a.close()


def test_decimals_only_for_units_that_allow_them_and_no_bad_numbers(store):
    rec, item = store.log("CBL-2", -2.25, "two and a quarter metres of cable", "t1")
    assert rec.delta == -2.25 and item.quantity == 10.25
    with pytest.raises(StoreError, match="fraction, but 'pcs' is counted in whole units"):
        store.log("WSH-3", -1.5, "one and a half washers", "t2")
    for bad in (math.nan, math.inf, 10**12, True, "3"):
        with pytest.raises(StoreError):
            store.log("WSH-3", bad, "bad", f"t-{bad}")
    assert store.log("WSH-3", -2.0, "two washers", "t3")[0].delta == -2  # an integral float is a whole number


def test_low_stock_and_place_contents_are_bounded(store):
    low, total = store.low_stock(limit=5)
    assert [i.sku for i in low] == ["CBL-2", "GLV-L"] and total == 2  # 12.5 m of 20, 3 boxes of 5
    assert store.low_stock(limit=1)[1] == 2 and len(store.low_stock(limit=1)[0]) == 1
    rows, total = store.place_contents("Bin 12")
    assert [(i.sku, q) for i, q in rows] == [("HB-12-80", 241)] and total == 1
    assert store.place_contents("bin 404") == ([], 0)


def test_undo_record_undoes_any_record_of_this_box_and_says_why_not(store):
    first, _ = store.log("WSH-3", -1, "one washer", "t1")
    store.log("GLV-L", -1, "one box of gloves", "t2")
    undo, item = store.undo_record(first.id, "console: undo", "c1")
    assert undo.undoes == first.id and item.quantity == 42
    with pytest.raises(StoreError, match=f"record {first.id} is already undone \\(by record {undo.id}\\)"):
        store.undo_record(first.id, "console: undo", "c2")
    with pytest.raises(StoreError, match=f"record {undo.id} is itself an undo"):
        store.undo_record(undo.id, "console: undo", "c3")
    with pytest.raises(StoreError, match="there is no record 99"):
        store.undo_record(99, "console: undo", "c4")
    out, into, _ = store.transfer("HB-12-80", 5, "bin 90", "bin 12", "move five", "t3")
    store.undo_record(into.id, "console: undo the transfer", "c5")
    assert store.get("HB-12-80").stock == (("bin 12", 241), ("bin 90", 40))


def test_a_sku_with_two_names_or_a_repeated_place_is_refused_with_its_line(tmp_path):
    with Store(tmp_path / "e.db") as s:
        bad = CSV + "HB-12-80,hex bolt M12 x 50 mm,bin 91,1,pcs,,\n"
        with pytest.raises(StoreError, match=r"line 7, column 'item': HB-12-80 is 'hex bolt M12 x 50 mm' here but "
                                             r"'hex bolt M12 x 80 mm' on line 2"):
            s.import_csv(_csv(tmp_path, bad))
        with pytest.raises(StoreError, match=r"line 7, column 'unit'"):
            s.import_csv(_csv(tmp_path, CSV + "WSH-3,washer,bin 4,1,box,,\n"))
        with pytest.raises(StoreError, match=r"line 7, column 'location': WSH-3 is already listed at 'Bin 3' on line 4"):
            s.import_csv(_csv(tmp_path, CSV + "WSH-3,washer,Bin 3,1,pcs,,\n"))
        assert s.items() == []


def test_names_that_collide_under_the_unicode_key_are_refused_with_both(tmp_path):
    text = ("sku,item,location,quantity,unit,aliases\nS-1,Schrauben Ä,bin 1,1,pcs,\nS-2,Schrauben Ö,bin 2,1,pcs,\n"
            "S-3,ＭＳ８ Bolt,bin 3,1,pcs,\nS-4,Straße,bin 4,1,pcs,\n")
    with Store(tmp_path / "e.db") as s:
        assert s.import_csv(_csv(tmp_path, text)).rows == 4  # Ä and Ö differ; full-width is just another spelling
        clash = "sku,item,location,quantity,unit,aliases\nS-5,ms8 bolt,bin 5,1,pcs,\n"
        with pytest.raises(StoreError, match=r"line 2: S-5 'ms8 bolt' and S-3 'ＭＳ８ Bolt' \(the store\) are the same"):
            s.import_csv(_csv(tmp_path, clash, "b.csv"))
        clash = "sku,item,location,quantity,unit,aliases\nS-6,wire,bin 6,1,pcs,Wire-Rope\nS-7,wire rope,bin 7,1,pcs,\n"
        with pytest.raises(StoreError, match=r"line 3: S-7 'wire rope' and S-6 'Wire-Rope' \(line 2\)"):
            s.import_csv(_csv(tmp_path, clash, "c.csv"))
        clash = "sku,item,location,quantity,unit,aliases\nS-8,STRASSE,bin 8,1,pcs,\n"
        with pytest.raises(StoreError, match=r"S-8 'STRASSE' and S-4 'Straße'"):
            s.import_csv(_csv(tmp_path, clash, "c.csv"))


def test_a_reimport_is_a_count_per_place(store, tmp_path):
    again = CSV.replace("bin 90,40", "bin 90,35")
    store.import_csv(_csv(tmp_path, again, "again.csv"))
    (rec,) = store.records()
    assert (rec.kind, rec.location, rec.delta, rec.counted, rec.turn_id[:7]) == ("count", "bin 90", -5, 35, "import:")
    assert store.get("HB-12-80").quantity == 276


def test_twenty_thousand_rows_import(tmp_path):
    lines = ["sku,item,location,quantity,unit,aliases,reorder_level"]
    for n in range(20_000):
        lines.append(f"SKU-{n:05d},part {n} M{n % 30 + 3} x {n % 200 + 10} mm,bin {n % 997},{n % 500},pcs,"
                     f"part {n};p{n},{n % 7}")
    with Store(tmp_path / "e.db") as s:
        assert s.import_csv(_csv(tmp_path, "\n".join(lines) + "\n")).rows == 20_000
        assert s.get("SKU-19999").stock == (("bin 59", 499),)
        conn = sqlite3.connect(tmp_path / "e.db")
        assert conn.execute("SELECT COUNT(*) FROM stock").fetchone()[0] == 20_000
        # the turn's lookups are indexed: a query plan that names the index, not a scan of the table
        plan = conn.execute("EXPLAIN QUERY PLAN SELECT sku FROM stock WHERE place_key = ?", ("bin 1",)).fetchall()
        assert "stock_place" in str(plan)
        low = conn.execute("EXPLAIN QUERY PLAN SELECT sku FROM items WHERE reorder_level IS NOT NULL "
                           "AND quantity - reorder_level <= 0").fetchall()
        assert "items_low" in str(low)
        conn.close()


def test_a_misspelt_optional_column_or_two_reorder_levels_are_refused(tmp_path):
    with Store(tmp_path / "e.db") as s:
        bad = CSV.replace("reorder_level", "reorder_levl")
        with pytest.raises(StoreError, match=r"line 1: column 'reorder_levl' is not known; fix: did you mean 'reorder_level'"):
            s.import_csv(_csv(tmp_path, bad))
        two = CSV.replace("bin 90,40,pcs,,50", "bin 90,40,pcs,,60")
        with pytest.raises(StoreError, match=r"line 3, column 'reorder_level': HB-12-80 has 60 here but 50 on line 2"):
            s.import_csv(_csv(tmp_path, two, "b.csv"))
        assert s.items() == []
