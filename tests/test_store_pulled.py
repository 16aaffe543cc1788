"""Pulled movements applied a batch at a time (edge.stock.pulled) against real SQLite files:
each place settled once per batch holds what settling record by record holds, whatever the batches."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from edge.stock.places import recompute
from edge.stock.store import Movement, Store

CSV = """sku,item,location,quantity,unit,aliases,reorder_level
HB-12-80,hex bolt M12 x 80 mm,bin 12,241,pcs,hex bolts 80,50
HB-12-80,hex bolt M12 x 80 mm,bin 90,40,pcs,,50
WSH-3,washer,bin 3,42,pcs,washers,
CBL-2,copper cable,reel 1,12.5,m,cable,20
"""


def _stock(s: Store) -> dict[str, tuple]:
    return {i.sku: (i.quantity, i.stock) for i in s.items()}


def _histories(tmp_path: Path) -> tuple[list[Movement], list[Movement], dict]:
    """Two boxes' records (logs, a transfer to a new place, counts, undos of a log and of a count,
    decimals) and the stock either box holds once it has the other's."""
    inv = tmp_path / "inv.csv"
    inv.write_text(CSV, encoding="utf-8")
    a, b = Store(tmp_path / "a.db", box="a"), Store(tmp_path / "b.db", box="b")
    for s in (a, b):
        s.import_csv(inv)
    a.log("WSH-3", -2, "two washers", "a1")
    b.log("WSH-3", -1, "one washer", "b1")
    a.transfer("HB-12-80", 30, "bin 12", "bin 50", "thirty bolts to bin 50", "a2")
    b.count("HB-12-80", 200, "two hundred bolts in bin 12", "b2", location="bin 12")
    a.count("WSH-3", 40, "forty washers", "a3")
    b.log("HB-12-80", -3, "three bolts", "b3", location="bin 12")
    a.log("WSH-3", -5, "five washers", "a4")
    b.log("WSH-3", 4, "four washers back", "b4")
    a.log("CBL-2", -2.25, "cable", "a5")
    b.undo("undo", "b5")  # the washers back
    a.undo("undo", "a6")  # the five washers
    b.undo("undo", "b6")  # the three bolts
    b.undo("undo", "b7")  # the count of bin 12
    ours, theirs = a.movements("a"), b.movements("b")
    a.apply(theirs)
    b.apply(ours)
    assert _stock(a) == _stock(b)
    want = _stock(a)
    a.close()
    b.close()
    return ours, theirs, want


def _from_history(s: Store) -> dict[tuple[str, str], int | float]:
    conn = sqlite3.connect(s.path)
    try:
        return {(i.sku, p): recompute(conn, i.sku, p) for i in s.items() for p, _q in i.stock}
    finally:
        conn.close()


def test_batches_of_any_size_and_order_settle_to_the_same_stock(tmp_path: Path) -> None:
    ours, theirs, want = _histories(tmp_path)
    by_time = sorted(ours + theirs, key=lambda m: (m.gid[:10], m.box, m.seq))
    inv = tmp_path / "inv.csv"
    plans = {"one batch": [ours + theirs], "one record each": [[m] for m in by_time],
             "theirs first": [theirs, ours], "halves": [by_time[:7], by_time[7:]]}
    for name, batches in plans.items():
        with Store(tmp_path / f"{name}.db", box="c") as c:
            c.import_csv(inv)
            assert sum(c.apply(batch) for batch in batches) == len(ours) + len(theirs), name
            assert _stock(c) == want, name
            held = {(i.sku, p): q for i in c.items() for p, q in i.stock}
            assert held == _from_history(c), name  # every place is its history's quantity
            assert c.apply(ours + theirs) == 0  # idempotent on the gid
            assert _stock(c) == want


def test_a_count_and_the_logs_around_it_in_one_batch(tmp_path: Path) -> None:
    inv = tmp_path / "inv.csv"
    inv.write_text(CSV, encoding="utf-8")
    with Store(tmp_path / "z.db", box="z") as z:
        z.import_csv(inv)
        z.log("WSH-3", -2, "before the count", "z1")
        z.count("WSH-3", 30, "thirty washers", "z2")
        z.log("WSH-3", -4, "after the count", "z3")
        theirs = z.movements("z")
        z.log("WSH-3", -1, "later still", "z4")
        later = z.movements("z", after_seq=3)
        assert z.get("WSH-3").quantity == 25
    late = [Movement(f"01AAAAAAAAAAAAAAAAAAAAAAA{n}", "y", n, "2020-01-01T00:00:00.000+00:00", "WSH-3", -7,
                     "old log", f"y{n}", None, "bin 3", "log") for n in (1, 2)]
    with Store(tmp_path / "c.db", box="c") as c:
        c.import_csv(inv)
        assert c.apply([*theirs, late[0]]) == 4  # the old log is before the count: the count saw it
        assert c.get("WSH-3").quantity == 26
        assert c.apply([late[1], *later]) == 2  # no count in this batch: only the later log counts
        assert c.get("WSH-3").quantity == 25


def test_a_movement_for_an_unknown_sku_is_kept_aside_and_added_once_the_item_is_imported(tmp_path: Path) -> None:
    inv = tmp_path / "inv.csv"
    inv.write_text(CSV, encoding="utf-8")
    wider = tmp_path / "wider.csv"  # only the new row: a row of a known item would be a stock count
    wider.write_text("sku,item,location,quantity,unit,aliases\nWDG-1,widget,bin 99,5,pcs,widgets\n", encoding="utf-8")
    with Store(tmp_path / "crib.db", box="crib") as crib:
        crib.import_csv(inv)
        crib.import_csv(wider)
        crib.log("WSH-3", -1, "one washer", "c1")
        crib.log("WDG-1", -2, "two widgets", "c2")
        crib.count("WDG-1", 4, "four widgets in bin 99", "c3")
        crib.log("WSH-3", -3, "three washers", "c4")
        crib.log("WDG-1", 1, "a widget back", "c5")
        crib.undo("undo", "c6")  # the widget back
        theirs, want = crib.movements("crib"), _stock(crib)
    with Store(tmp_path / "line.db", box="line") as line:
        line.import_csv(inv)
        assert line.apply(theirs[:3]) == 3 and line.apply(theirs) == 3 and line.apply(theirs) == 0  # once by gid
        assert line.get("WSH-3").quantity == 42 - 4  # the crib's washers went on past the widgets
        assert line.get("WDG-1") is None and line.cursors()["crib"] == 6
        assert line.kept_aside() == [{"sku": "WDG-1", "box": "crib", "records": 4}]
        assert [m.seq for m in line.movements("crib")] == [1, 4]
        line.import_csv(wider)
        assert line.kept_aside() == [] and _stock(line) == want  # 5 - 2, counted 4, +1 undone: 4
        assert sorted(line.movements("crib"), key=lambda m: m.seq) == theirs  # the undo points at its record
        assert line.apply(theirs) == 0
