"""How many a log says: "the" or "this" before the item names which item, never a count (asked);
"a"/"one" is one; "a couple of" is two, read back before it is written. Real SQLite store, real
understanding (grammar, no LLM), real dialog."""
from __future__ import annotations

import pytest

from edge.stages import dialog
from edge.stages.nlu.understand import Understanding
from tests.helpers import csv_store, say

CSV = """sku,item,location,quantity,unit,aliases,reorder_level
SPN-17,spanner,drawer 26,10,pcs,spanners,2
PAP-A4,copy paper,shelf P,40,pack,paper,5
HEXK-SET,hex key set,drawer 31,4,set,allen keys,1
GRS,grease,shelf G,10,tub,,2
FUS-5A,fuse,bin 30,60,pcs,fuses,10
MASK,FFP2 mask,shelf A,25,box,masks,3
"""


@pytest.fixture
def box(tmp_path):
    with csv_store(tmp_path, CSV) as s:
        yield s, Understanding(s.items())



@pytest.mark.parametrize("text", ["put down that Pete had the spanner", "we received the paper",
                                  "signing out the hex key set", "we used the tub of grease", "Dave nicked the spanner again",
                                  "took this spanner"])
def test_an_article_before_the_item_is_no_count(box, text):
    store, _ = box
    out = say(box, text)
    assert out.record is None and store.records() == []
    assert out.pending is None or out.pending.kind == "quantity"


def test_the_asked_count_is_written_after_the_answer(box):
    store, _ = box
    out = say(box, "we received the paper")
    assert out.pending is not None and out.pending.kind == "quantity"
    done = dialog.follow_up(out.pending, "four", store, "t1")
    assert [(r.sku, r.delta) for r in store.records()] == [("PAP-A4", 4)] and done.record is not None


@pytest.mark.parametrize("text, sku", [("we used a tub of grease", "GRS"), ("took a spanner", "SPN-17"),
                                       ("one spanner used", "SPN-17"), ("we used the 3 fuses", "FUS-5A")])
def test_a_or_one_or_a_number_is_still_written(box, text, sku):
    store, _ = box
    out = say(box, text)
    assert out.record is not None and store.records()[0].sku == sku
    assert store.records()[0].delta == (-3 if "3" in text else -1)


@pytest.mark.parametrize("text, sku", [("a couple of boxes of FFP2 masks went out", "MASK"),
                                       ("we used a couple of fuses", "FUS-5A"), ("took couple spanners", "SPN-17")])
def test_a_couple_is_read_back_as_two_before_it_is_written(box, text, sku):
    store, _ = box
    out = say(box, text)
    assert out.pending is not None and out.pending.kind == "confirm" and store.records() == []
    assert out.text.startswith("Log 2 ") and out.text.endswith(" used? Say yes or no.")
    done = dialog.follow_up(out.pending, "yes", store, "t1")
    assert [(r.sku, r.delta) for r in store.records()] == [(sku, -2)] and done.record is not None


def test_a_couple_read_back_refused_writes_nothing(box):
    store, _ = box
    out = say(box, "we received a couple of packs of paper")
    assert out.text == "Log 2 packs of copy paper received? Say yes or no."
    assert dialog.follow_up(out.pending, "no", store, "t1").record is None and store.records() == []


def test_a_couple_in_a_question_is_not_read_back(box):
    out = say(box, "do we have a couple of spanners")
    assert out.pending is None and out.record is None and "10" in out.text


@pytest.mark.parametrize("answer, delta", [("two", -2), ("three", -3)])
def test_a_couple_read_back_answered_with_a_number_takes_that_number(box, answer, delta):
    store, _ = box
    out = say(box, "a couple of boxes of FFP2 masks went out")
    done = dialog.follow_up(out.pending, answer, store, "t1")
    assert [(r.sku, r.delta) for r in store.records()] == [("MASK", delta)] and done.record is not None


def test_a_roll_of_the_item_is_one_roll(tmp_path):
    with csv_store(tmp_path, "sku,item,location,quantity,unit,aliases,reorder_level\n"
                             "TAPE-BLU,blue insulating tape,drawer 38,20,roll,,2\n") as store:
        text = "used a roll of the blue insulating tape"
        out = dialog.act(Understanding(store.items()).understand(text), store, text, "t1")
        assert out.record is not None and [(r.sku, r.delta) for r in store.records()] == [("TAPE-BLU", -1)]
