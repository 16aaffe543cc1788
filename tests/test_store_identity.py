"""Global identity of records (box id, ULID, per-box sequence) in edge.stock.store, on real SQLite
files: the migration of an existing store, own records, other boxes' movements applied."""
from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from ulid import ULID

from edge.stock.schema import LOCAL_BOX, MIGRATIONS, SCHEMA_VERSION
from edge.stock.store import Movement, Store, StoreError
from tests.helpers import INVENTORY

pytestmark = pytest.mark.skipif(not INVENTORY.is_file(), reason=f"missing {INVENTORY}")

V2_RECORDS = [  # (time, sku, delta, utterance, turn_id, undoes)
    ("2025-01-31T09:15:02.123+00:00", "FUS-5A", 5, "add five fuses", "a1", None),
    ("2025-01-31T09:16:00.000+00:00", "FUS-5A", -5, "undo", "a2", 1),
    ("2025-01-31T10:00:00.500+00:00", "SPN-10", 2, "add two spanners", "a3", None),
    ("2025-02-01T08:00:00.000+00:00", "SPN-10", -1, "take a spanner", "a4", None),
]


def _version_2_file(db: Path) -> None:
    """A store as schema version 2 (the code before global identity) left it."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        for step in MIGRATIONS[0] + MIGRATIONS[1]:
            conn.execute(step)
        conn.execute("INSERT INTO items VALUES ('FUS-5A', 'fuse', 'drawer 1', 60, 'pcs', 'fuses')")
        conn.execute("INSERT INTO items VALUES ('SPN-10', 'spanner', 'wall', 7, 'pcs', '')")
        conn.executemany("INSERT INTO records (time, sku, delta, utterance, turn_id, undoes) "
                         "VALUES (?, ?, ?, ?, ?, ?)", V2_RECORDS)
        conn.execute("PRAGMA user_version = 2")
    finally:
        conn.close()


@pytest.mark.parametrize("box", [None, "goods-in"])
def test_a_version_2_store_migrates_and_keeps_every_record(tmp_path: Path, box: str | None) -> None:
    db = tmp_path / "v2.db"
    _version_2_file(db)
    with Store(db, box=box) as s:
        assert s.schema_version == SCHEMA_VERSION
        assert s.box == (box or LOCAL_BOX)
        assert [(r.id, r.time, r.sku, r.delta, r.utterance, r.turn_id, r.undoes) for r in s.records()] == [
            (i, *row) for i, row in enumerate(V2_RECORDS, start=1)]
        moves = s.movements()
        assert [(m.box, m.seq) for m in moves] == [(s.box, n) for n in (1, 2, 3, 4)]
        assert len({m.gid for m in moves}) == 4
        for m, row in zip(moves, V2_RECORDS, strict=True):
            # the ULID's time part is the record's own time, to the millisecond
            assert ULID.from_str(m.gid).datetime == datetime.fromisoformat(row[0])
        assert moves[1].undoes == moves[0].gid and moves[0].undoes is None
        assert {i.sku: i.quantity for i in s.items()} == {"FUS-5A": 60, "SPN-10": 7}
        rec, item = s.log("SPN-10", 3, "add three spanners", "a5")  # new records carry on the sequence
        assert item.quantity == 10 and s.movements()[-1].seq == 5
        undone, item = s.undo("undo", "a6")
        assert undone.undoes == rec.id and item.quantity == 7


def test_new_records_get_box_seq_and_time_ordered_ulids(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db", box="crib") as s:
        s.import_csv(INVENTORY)
        for n in range(5):
            s.log("FUS-5A", n + 1, "add fuses", f"t{n}")
        moves = s.movements()
        assert [m.seq for m in moves] == [1, 2, 3, 4, 5] and {m.box for m in moves} == {"crib"}
        assert [m.gid for m in moves] == sorted(m.gid for m in moves)
        assert s.movements("crib", after_seq=3) == moves[3:]
        assert s.cursors() == {"crib": 5}
    conn = sqlite3.connect(tmp_path / "s.db")
    try:  # the file refuses a record without identity
        with pytest.raises(sqlite3.IntegrityError, match="needs box, gid and seq"):
            conn.execute("INSERT INTO records (time, sku, delta, utterance, turn_id) "
                         "VALUES ('2025-01-01T00:00:00.000+00:00', 'FUS-5A', 1, 'x', 'raw')")
    finally:
        conn.close()


def _other_box(tmp_path: Path, name: str = "line") -> list[Movement]:
    with Store(tmp_path / f"{name}.db", box=name) as o:
        o.import_csv(INVENTORY)
        o.log("FUS-5A", -10, "take ten fuses", "same-turn")
        o.log("SPN-10", 1, "add a spanner", "o2")
        o.undo("undo", "o3")
        return o.movements()


def test_other_boxes_movements_are_added_once_and_in_order(tmp_path: Path) -> None:
    theirs = _other_box(tmp_path)
    with Store(tmp_path / "mine.db", box="goods-in") as s:
        s.import_csv(INVENTORY)
        fuses, spanners = s.get("FUS-5A").quantity, s.get("SPN-10").quantity
        s.log("FUS-5A", -1, "take a fuse", "same-turn")  # the same turn id on two boxes is no clash
        with pytest.raises(StoreError, match="number 2 of box line, but this store holds up to 0"):
            s.apply(theirs[1:])
        assert s.apply(theirs[:2]) == 2
        assert s.apply(theirs) == 1  # idempotent: only the third is new
        assert s.apply(theirs) == 0
        assert s.get("FUS-5A").quantity == fuses - 11 and s.get("SPN-10").quantity == spanners
        assert s.cursors() == {"goods-in": 1, "line": 3}
        mine = [m for m in s.movements() if m.box == "line"]
        assert mine == theirs  # the undo points at the same record by gid
        # undo on this box undoes this box's last record, not the pulled ones
        undone, item = s.undo("undo", "u1")
        assert undone.delta == 1 and item.sku == "FUS-5A" and item.quantity == fuses - 10
        assert s.undo("undo", "u2") is None


def test_a_bad_movement_is_refused_and_nothing_of_its_batch_is_applied(tmp_path: Path) -> None:
    theirs = _other_box(tmp_path)
    with Store(tmp_path / "mine.db", box="goods-in") as s:
        s.import_csv(INVENTORY)
        before = s.items()
        unknown = replace(theirs[1], sku="NOPE-1")
        with pytest.raises(StoreError, match="SKU 'NOPE-1'.*fix: add the item on this box"):
            s.apply([theirs[0], unknown], restore=True)  # a restore is this box's own history: all or none
        with pytest.raises(StoreError, match="two boxes share site.box"):
            s.apply([replace(theirs[0], box="goods-in", seq=1)])
        assert s.items() == before and s.records() == []


def test_a_box_id_is_fixed_once_records_have_been_pushed(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with Store(db) as s:
        s.import_csv(INVENTORY)
        s.log("FUS-5A", 1, "add a fuse", "t1")
    with Store(db, box="crib") as s:  # never pushed: the records become the crib's
        assert [m.box for m in s.movements()] == ["crib"]
        s.set_meta(pushed_seq="1")
    with pytest.raises(StoreError, match="belongs to box 'crib'.*site.box is 'line'.*fix: set site.box: crib"):
        Store(db, box="line")
    with pytest.raises(StoreError, match="site.box: 'Bad Box' is not a box id"):
        Store(db, box="Bad Box")
    with Store(db) as s:
        assert s.box == "crib" and s.meta("pushed_seq") == "1"


def test_negative_stock_is_kept_and_listed(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db", box="crib") as s:
        s.import_csv(INVENTORY)
        have = s.get("SPN-10").quantity
        s.log("SPN-10", -(have + 2), "take the spanners", "t1")
        assert [(i.sku, i.quantity) for i in s.negatives()] == [("SPN-10", -2)]


def test_a_box_id_already_held_by_pulled_records_is_not_taken(tmp_path: Path) -> None:
    theirs = _other_box(tmp_path, "line")
    db = tmp_path / "crib.db"
    with Store(db, box="crib") as s:
        s.import_csv(INVENTORY)
        s.apply(theirs)
    with pytest.raises(StoreError, match="holds records of another box 'line'"):
        Store(db, box="line")
    with Store(db) as s:
        assert s.box == "crib" and {m.box for m in s.movements()} == {"line"}
