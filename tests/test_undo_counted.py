"""An undo that a later stock count already settled is refused (edge.stock.undo): against a real
SQLite store, a second box's count pulled into it, and the voice path (understanding + dialog)."""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import INVENTORY, say_to_store

from edge.stock.store import CountSettled, Store


@pytest.fixture
def store(tmp_path: Path):
    with Store(tmp_path / "edge.db", box="goods-in") as s:
        s.import_csv(INVENTORY)
        yield s


def test_an_undo_after_a_count_is_refused_and_the_count_stays(store: Store) -> None:
    log, item = store.log("FUS-5A", -3, "we used 3 fuses", "t1")
    assert item.quantity == 57
    count, _ = store.count("FUS-5A", 50, "count 50 fuses", "t2")
    with pytest.raises(CountSettled) as e:
        store.undo_record(log.id, "console: undo", "t3")
    (c,) = e.value.covered
    assert (c.record_id, c.count_id, c.counted, c.now, c.would) == (log.id, count.id, 50, 50, 53)
    assert "undo the count (record 2) first" in str(e.value) and "53 instead of 50" in str(e.value)
    assert store.get("FUS-5A").quantity == 50 and len(store.records()) == 2  # nothing written
    assert store.settled_by_count(log.id) == e.value.covered
    # what the refusal offers: the count undone first, then the change, gives 60 again
    store.undo_record(count.id, "console: undo the count", "t4")
    assert store.get("FUS-5A").quantity == 57 and store.settled_by_count(log.id) == []
    assert store.undo_record(log.id, "console: undo", "t5")[1].quantity == 60


def test_an_import_is_a_later_count_too(store: Store, tmp_path: Path) -> None:
    log, _ = store.log("FUS-5A", -3, "we used 3 fuses", "t1")
    counted = tmp_path / "counted.csv"
    counted.write_text(INVENTORY.read_text().replace("FUS-5A,fuse,bin 30,60", "FUS-5A,fuse,bin 30,50"))
    store.import_csv(counted)
    with pytest.raises(CountSettled):
        store.undo_record(log.id, "console: undo", "t2")
    assert store.get("FUS-5A").quantity == 50


def test_a_transfer_undone_after_later_counts_is_refused(store: Store) -> None:
    store.count("FUS-5A", 10, "count 10 fuses on shelf Z", "t0", location="shelf Z")
    out, _into, item = store.transfer("FUS-5A", 8, "bin 30", "shelf Z", "move 8 fuses to shelf Z", "t1")
    assert dict(item.places()) == {"bin 30": 52, "shelf Z": 18}
    store.count("FUS-5A", 60, "count 60 fuses in bin 30", "t2", location="bin 30")
    store.count("FUS-5A", 13, "count 13 fuses on shelf Z", "t3", location="shelf Z")
    with pytest.raises(CountSettled) as e:
        store.undo_record(out.id, "console: undo the move", "t4")
    assert [(c.location, c.now, c.would) for c in e.value.covered] == [("bin 30", 60, 68), ("shelf Z", 13, 5)]
    assert dict(store.get("FUS-5A").places()) == {"bin 30": 60, "shelf Z": 13}


def test_a_count_at_another_place_or_before_the_change_does_not_block(store: Store) -> None:
    store.count("FUS-5A", 55, "count 55 fuses", "t0")
    store.count("FUS-5A", 4, "count 4 fuses on shelf Z", "t1", location="shelf Z")
    log, _ = store.log("FUS-5A", -3, "we used 3 fuses from bin 30", "t2", location="bin 30")
    store.count("FUS-5A", 5, "count 5 fuses on shelf Z", "t3", location="shelf Z")
    assert store.undo_record(log.id, "console: undo", "t4")[1].at("bin 30") == 55


def test_the_voice_says_a_later_count_settled_it(store: Store, tmp_path: Path) -> None:
    """The count came from another box of the site: this box's "undo that" reaches the log."""
    out = say_to_store(store, "we used 3 fuses")
    assert store.get("FUS-5A").quantity == 57, out.text
    with Store(tmp_path / "yard.db", box="yard") as yard:
        yard.import_csv(INVENTORY)
        yard.apply(store.movements("goods-in"))
        yard.count("FUS-5A", 50, "count 50 fuses", "y1")
        store.apply(yard.movements("yard"))
    assert store.get("FUS-5A").quantity == 50
    held = len(store.records())
    for words in ("undo that", "scratch the last one"):
        out = say_to_store(store, words)
        assert "stock count after it (50 fuses in bin 30)" in out.text and "stays 50 in bin 30" in out.text, out.text
        assert "count them again" in out.text
        assert store.get("FUS-5A").quantity == 50 and len(store.records()) == held
    zh = say_to_store(store, "撤销上一条", language="zh")
    assert "没有撤销" in zh.text and store.get("FUS-5A").quantity == 50, zh.text
