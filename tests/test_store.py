"""Tests for edge.stock.store against a real SQLite file and the shared inventory.csv."""
from __future__ import annotations

import csv
import io
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

from edge.stock.schema import SCHEMA_VERSION
from edge.stock.store import Item, Record, Store, StoreError

INVENTORY = Path(__file__).resolve().parents[2] / "shared/audio/sessions/inventory.csv"

pytestmark = pytest.mark.skipif(not INVENTORY.is_file(), reason=f"missing {INVENTORY}")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "store.db"  # parent dir does not exist yet


@pytest.fixture
def store(db_path: Path):
    with Store(db_path) as s:
        s.import_csv(INVENTORY)
        yield s


def test_import_inventory(db_path: Path) -> None:
    with Store(db_path) as s:
        assert s.import_csv(INVENTORY).rows == 10
        items = s.items()
        assert len(items) == 10
        bolt = s.get("BLT-M8-30")
        assert bolt == Item(
            sku="BLT-M8-30",
            item="M8 bolt",
            location="bin 12",
            quantity=140,
            unit="pcs",
            aliases=("m8 bolts", "m eight bolts", "M8 screws"),
        )
        assert s.get("PNT-WHT").quantity == 0
        assert s.get("NOPE") is None
        # importing again upserts, does not duplicate
        assert s.import_csv(INVENTORY).rows == 10
        assert len(s.items()) == 10


def test_pragmas_and_schema_version(store: Store, db_path: Path) -> None:
    assert store.schema_version == SCHEMA_VERSION
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()
    # synchronous is per connection: check the store's own (2 == FULL)
    assert store._db().execute("PRAGMA synchronous").fetchone()[0] == 2


def test_log_in_and_out_updates_quantity(store: Store) -> None:
    rec, item = store.log("BLT-M8-30", 10, "add ten m8 bolts", "t1")
    assert item.quantity == 150
    assert isinstance(rec, Record)
    assert rec.sku == "BLT-M8-30" and rec.delta == 10 and rec.undoes is None
    assert rec.utterance == "add ten m8 bolts" and rec.turn_id == "t1"
    t = datetime.fromisoformat(rec.time)
    assert t.utcoffset() is not None and t.utcoffset().total_seconds() == 0

    rec2, item2 = store.log("BLT-M8-30", -40, "take out forty m8 bolts", "t2")
    assert item2.quantity == 110
    assert rec2.id > rec.id
    assert store.get("BLT-M8-30").quantity == 110
    assert [r.delta for r in store.records()] == [10, -40]


def test_log_unknown_sku_raises_and_writes_nothing(store: Store) -> None:
    with pytest.raises(StoreError, match="NOPE"):
        store.log("NOPE", 1, "add one nope", "t1")
    assert store.records() == []


def test_log_rejects_non_int_delta(store: Store) -> None:
    for bad in (1.5, "3", True, 0):
        with pytest.raises(StoreError):
            store.log("FUS-5A", bad, "x", "t")  # type: ignore[arg-type]
    assert store.records() == []
    assert store.get("FUS-5A").quantity == 60


def test_undo_writes_compensating_record(store: Store) -> None:
    rec, item = store.log("GLV-NIT-L", 20, "add twenty gloves", "t1")
    assert item.quantity == 32
    result = store.undo("undo that", "t2")
    assert result is not None
    undo_rec, undo_item = result
    assert undo_item.quantity == 12
    assert undo_rec.delta == -20 and undo_rec.undoes == rec.id and undo_rec.sku == "GLV-NIT-L"
    history = store.records()
    assert len(history) == 2
    assert history[0] == rec and history[1] == undo_rec
    # nothing left to undo
    assert store.undo("undo", "t3") is None
    assert len(store.records()) == 2
    assert store.get("GLV-NIT-L").quantity == 12


def test_undo_on_fresh_store_is_none(store: Store) -> None:
    assert store.undo("undo", "t1") is None
    assert store.records() == []


def test_second_undo_reverts_earlier_record(store: Store) -> None:
    first, _ = store.log("FUS-5A", 5, "add five fuses", "t1")
    second, _ = store.log("DRL-BIT-6", -3, "take three drill bits", "t2")
    u1, item1 = store.undo("undo", "t3")
    assert u1.undoes == second.id and u1.delta == 3 and item1.quantity == 25
    u2, item2 = store.undo("undo again", "t4")
    assert u2.undoes == first.id and u2.delta == -5 and item2.quantity == 60
    assert store.undo("and again", "t5") is None
    assert [r.undoes for r in store.records()] == [None, None, second.id, first.id]


def test_records_are_append_only(store: Store, db_path: Path) -> None:
    store.log("FUS-5A", 5, "add five fuses", "t1")
    conn = sqlite3.connect(db_path)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("UPDATE records SET delta = 500")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("DELETE FROM records")
        conn.rollback()
    finally:
        conn.close()
    assert [r.delta for r in store.records()] == [5]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_bad_csv_missing_column(tmp_path: Path, store: Store) -> None:
    bad = _write(tmp_path / "no_qty.csv", "sku,item,location,unit,aliases\nX-1,thing,bin 1,pcs,\n")
    with pytest.raises(StoreError) as ei:
        store.import_csv(bad)
    msg = str(ei.value)
    assert "no_qty.csv" in msg and "line 1" in msg and "quantity" in msg and "fix" in msg


def test_bad_csv_non_integer_quantity(tmp_path: Path, store: Store) -> None:
    bad = _write(
        tmp_path / "bad_qty.csv",
        "sku,item,location,quantity,unit,aliases\n"
        "NEW-1,thing,bin 1,4,pcs,\n"
        "NEW-2,other,bin 2,twelve,pcs,\n",
    )
    with pytest.raises(StoreError) as ei:
        store.import_csv(bad)
    msg = str(ei.value)
    assert "bad_qty.csv" in msg and "line 3" in msg and "quantity" in msg and "twelve" in msg
    # all-or-nothing: the good row before the bad one was not imported
    assert store.get("NEW-1") is None


def test_missing_csv_file(tmp_path: Path, store: Store) -> None:
    with pytest.raises(StoreError, match="nothere.csv"):
        store.import_csv(tmp_path / "nothere.csv")


def test_data_survives_close_and_reopen(db_path: Path) -> None:
    with Store(db_path) as s:
        s.import_csv(INVENTORY)
        rec, _ = s.log("SPN-10", 2, "add two spanners", "t1")
    with Store(db_path) as s:
        assert s.schema_version == SCHEMA_VERSION
        assert s.get("SPN-10").quantity == 8
        assert s.records() == [rec]
        u, item = s.undo("undo", "t2")
        assert u.undoes == rec.id and item.quantity == 6


def test_a_folder_as_the_store_is_named_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"is a folder; point store.path at a file in it, such as .*edge.db"):
        Store(tmp_path)


def test_closed_store_raises(db_path: Path) -> None:
    s = Store(db_path)
    s.close()
    s.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        s.items()


def test_newer_schema_version_is_refused(db_path: Path) -> None:
    Store(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StoreError, match="99"):
        Store(db_path)


def test_export_csv(db_path: Path) -> None:
    fixed = datetime(2025, 1, 31, 9, 15, 2, 123000, tzinfo=timezone.utc)
    with Store(db_path, clock=lambda: fixed) as s:
        s.import_csv(INVENTORY)
        s.log("TIE-CBL-200", -25, 'take 25 cable ties, "urgent"', "t1")
        s.undo("undo", "t2")
        buf = io.StringIO(newline="")
        assert s.export_csv(buf) == 2
    text = buf.getvalue()
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows == [
        ["id", "time", "sku", "delta", "utterance", "turn_id", "undoes", "location", "kind", "counted"],
        ["1", "2025-01-31T09:15:02.123+00:00", "TIE-CBL-200", "-25", 'take 25 cable ties, "urgent"', "t1", "",
         "drawer 7", "log", ""],
        ["2", "2025-01-31T09:15:02.123+00:00", "TIE-CBL-200", "25", "undo", "t2", "1", "drawer 7", "undo", ""],
    ]


def test_reimport_is_a_stock_count_in_the_history_and_undo_stops_there(tmp_path):
    """Re-importing an inventory must not leave quantities that the history cannot explain,
    and voice undo must not reach behind a stock count (found by a fresh-clone review)."""
    s = Store(tmp_path / "e.db")
    s.import_csv(INVENTORY)
    s.log("GLV-NIT-L", 20, "log twenty boxes", "t1")
    assert s.get("GLV-NIT-L").quantity == 32
    s.import_csv(INVENTORY)  # the sheet still says 12: a stock count of 12
    recs = s.records()
    assert [(r.sku, r.delta) for r in recs] == [("GLV-NIT-L", 20), ("GLV-NIT-L", -20)]
    assert recs[1].turn_id.startswith("import:") and "stock count" in recs[1].utterance
    assert s.get("GLV-NIT-L").quantity == 12
    assert s.undo("undo that", "t2") is None  # nothing after the count to undo
    s.log("DRL-BIT-6", -3, "used three", "t3")
    rec, item = s.undo("undo that", "t4")
    assert (rec.sku, rec.delta, item.quantity) == ("DRL-BIT-6", 3, 25)
    s.import_csv(INVENTORY)  # unchanged quantities: no new records
    assert len(s.records()) == 4


def test_empty_item_name_or_location_is_refused(tmp_path):
    bad = tmp_path / "inv.csv"
    bad.write_text("sku,item,location,quantity,unit,aliases\nNEW-1,,,5,pcs,\n")
    with pytest.raises(StoreError, match=r"inv.csv: line 2, column 'item': empty"):
        Store(tmp_path / "e.db").import_csv(bad)
