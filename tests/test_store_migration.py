"""A store written by the code before schema 4 (tests/fixtures/store_schema3.sql, dumped from a file
that commit 0e83104's store wrote: an import, logs, an undo, another box's movements, a stock-count
import) opens, migrates to schema 4 and keeps every record as it was."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from edge.stock.schema import SCHEMA_VERSION
from edge.stock.store import Store

DUMP = Path(__file__).parent / "fixtures" / "store_schema3.sql"
OLD_COLS = "id, time, sku, delta, utterance, turn_id, undoes, box, gid, seq"


def _old_file(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    conn.executescript(DUMP.read_text(encoding="utf-8"))
    rows = conn.execute(f"SELECT {OLD_COLS} FROM records ORDER BY id").fetchall()
    items = conn.execute("SELECT sku, location, quantity FROM items ORDER BY sku").fetchall()
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
    conn.close()
    return rows, items


def test_a_schema_3_store_migrates_and_keeps_every_record(tmp_path):
    path = tmp_path / "old.db"
    before, items = _old_file(path)
    assert len(before) == 10 and any(r[6] is not None for r in before)  # undo links are in the dump
    with Store(path) as s:
        assert s.schema_version == SCHEMA_VERSION == 8
        assert s.box == "crib"
        conn = sqlite3.connect(path)
        after = conn.execute(f"SELECT {OLD_COLS} FROM records ORDER BY id").fetchall()
        conn.close()
        assert after == before  # ids, times, deltas, undo links, boxes, gids, seqs
        for sku, location, quantity in items:
            item = s.get(sku)
            assert item.quantity == quantity and item.location == location
            assert item.stock == ((location, quantity),)
        records = s.records()
        assert [r.kind for r in records] == ["log", "log", "undo", "log", "log", "undo", "count", "count", "count",
                                             "log"]
        assert all(r.location == s.get(r.sku).location for r in records)
        # the migrated store keeps working: a log, an undo that walks back past nothing imported
        rec, bolt = s.log("BLT-M8-30", -1, "one bolt", "new-1")
        assert rec.location == "bin 12" and bolt.quantity == dict(((k, q) for k, _l, q in items))["BLT-M8-30"] - 1
        undone = s.undo("undo that", "new-2")
        assert undone[0].undoes == rec.id and undone[0].kind == "undo"
        assert s.meta("pushed_seq") == "2"


def test_migrating_twice_changes_nothing(tmp_path):
    path = tmp_path / "old.db"
    _old_file(path)
    with Store(path) as s:
        first = s.records()
    with Store(path) as s:
        assert s.records() == first and s.schema_version == 8


def test_schema_6_gains_the_time_indexes_and_the_history_answers_from_them(tmp_path):
    """A schema-6 file (a migrated file without the version-7 and 8 steps, as the code before them
    wrote it) opens as version 8 with the indexes on time and (sku, time) and the running sums, and a
    period question is planned on them."""
    from edge.stock import history
    path = tmp_path / "old.db"
    _old_file(path)
    Store(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP INDEX records_time")
    conn.execute("DROP INDEX records_sku_time")
    conn.execute("DROP INDEX items_quantity")
    for trigger in ("records_summary_add", "records_summary_undo"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE record_days")
    conn.execute("DROP TABLE record_hours")
    conn.execute("PRAGMA user_version = 6")
    conn.close()
    with Store(path) as s:
        assert s.schema_version == 8
        with s.reading() as c:
            names = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
            assert {"records_time", "records_sku_time", "items_quantity"} <= names
            plan = " ".join(str(r) for r in c.execute(
                "EXPLAIN QUERY PLAN SELECT * FROM records AS r WHERE r.sku = ? AND r.time >= ? AND r.time < ?",
                ("BLT-M8-30", "2025", "2027")))
            assert "records_sku_time" in plan
            used = history.totals(c, "BLT-M8-30", "2000-01-01", "2100-01-01").used
        # the same figure as a plain pass over the records: out logs that were not undone
        recs = s.records()
        undone = {r.undoes for r in recs if r.undoes is not None}
        assert used == sum(-r.delta for r in recs if r.sku == "BLT-M8-30" and r.kind == "log" and r.delta < 0
                           and r.id not in undone)
