"""A grade written without a unit ("hydraulic oil 46", "bearing 6204 ZZ") is a variant: the name
without it is a family the box asks about, and a bare number answers the question. Real SQLite,
the real template path and dialog."""
from __future__ import annotations

import pytest

from edge.stages import dialog
from edge.stages.nlu.grammar import Grammar
from tests.helpers import csv_store

CSV = """sku,item,location,quantity,unit,aliases
OIL-HYD-32,hydraulic oil 32,bin 157,15,l,
OIL-HYD-46,hydraulic oil 46,shelf F,60,l,hydraulic fluid
OIL-HYD-68,hydraulic oil 68,bin 188,17,l,
OIL-GEAR,gear oil,bin 3,9,l,
OIL-CUT,cutting oil,bin 4,5,l,
"""


@pytest.fixture
def room(tmp_path):
    with csv_store(tmp_path, CSV) as s:
        yield s, Grammar(s.items())


def test_the_name_without_its_grade_is_the_family(room):
    _, g = room
    i = g.parse("we used 2 litres of hydraulic oil")
    assert (i.intent, i.sku, set(i.candidates)) == ("log_record", None, {"OIL-HYD-32", "OIL-HYD-46", "OIL-HYD-68"})
    assert g.parse("how much gear oil do we have").sku == "OIL-GEAR"  # a name without a grade is itself
    assert g.parse("we used 2 litres of hydraulic oil 68").sku == "OIL-HYD-68"


@pytest.mark.parametrize("answer, sku", [("forty six", "OIL-HYD-46"), ("46 please", "OIL-HYD-46"),
                                         ("sixty eight", "OIL-HYD-68"), ("the first one", "OIL-HYD-32")])
def test_a_bare_number_answers_which_grade(room, answer, sku):
    store, g = room
    asked = dialog.act(g.parse("we used 2 litres of hydraulic oil"), store, "we used 2 litres of hydraulic oil", "t1")
    assert asked.pending is not None and not store.records()
    done = dialog.follow_up(asked.pending, answer, store, "t1")
    (rec,) = store.records()
    assert (rec.sku, rec.delta) == (sku, -2), done.text


@pytest.mark.parametrize("answer", ["thirty", "forty six or sixty eight"])
def test_a_number_no_grade_has_or_two_numbers_write_nothing(room, answer):
    store, g = room
    asked = dialog.act(g.parse("we used 2 litres of hydraulic oil"), store, "we used 2 litres of hydraulic oil", "t1")
    dialog.follow_up(asked.pending, answer, store, "t1")
    assert store.records() == []


BEARINGS = """sku,item,location,quantity,unit,aliases
BRG-6204,bearing 6204 2RS,drawer 35,16,pcs,6204 bearing
BRG-6204-ZZ,bearing 6204 ZZ,bin 57,13,pcs,
BRG-6205,bearing 6205 2RS,drawer 35,9,pcs,
BRG-6205-ZZ,bearing 6205 ZZ,bin 58,7,pcs,
BRG-6304-ZZ,bearing 6304 ZZ,bin 125,18,pcs,
V-SPB-1700,V belt SPB 1700,shelf H,4,pcs,
"""


@pytest.fixture
def bearings(tmp_path):
    with csv_store(tmp_path, BEARINGS) as s:
        yield s, Grammar(s.items())


@pytest.mark.parametrize("text, intent, sku, quantity", [
    ("how many 6205 2RS bearings have we got", "query_stock", "BRG-6205", None),
    ("took 4 of the 6204 ZZ bearings", "log_record", "BRG-6204-ZZ", 4),
    ("we used two 6304ZZ bearings", "log_record", "BRG-6304-ZZ", 2),
    ("count of 6205 zz bearings is 6", "stock_count", "BRG-6205-ZZ", 6),   # the designation is no count
])
def test_a_bearing_designation_said_before_the_word_picks_the_bearing(bearings, text, intent, sku, quantity):
    _, g = bearings
    got = g.fill_slots(intent, text) if intent == "stock_count" else g.parse(text)  # (a count as the paraphrase path fills it)
    assert (got.intent, got.sku, got.quantity, got.candidates) == (intent, sku, quantity, ())


@pytest.mark.parametrize("answer, sku", [("ZZ", "BRG-6205-ZZ"), ("the 2RS ones", "BRG-6205"), ("double z", "BRG-6205-ZZ")])
def test_a_bearing_without_its_seal_asks_for_the_seal(bearings, answer, sku):
    store, g = bearings
    text = "used 3 6205 bearings"
    asked = dialog.act(g.parse(text), store, text, "t1")
    assert asked.text == "2RS or ZZ?" and not store.records()
    dialog.follow_up(asked.pending, answer, store, "t1")
    (rec,) = store.records()
    assert (rec.sku, rec.delta) == (sku, -3)


def test_a_designation_not_stocked_is_asked_among_the_nearest_of_its_seal(bearings):
    store, g = bearings
    text = "we got 10 6206 2RS bearings in"
    got = g.parse(text)
    assert (got.sku, got.quantity, got.heard_variant) == (None, 10, "6206")
    asked = dialog.act(got, store, text, "t1")
    assert asked.text == "I don't have bearings, 6206; there are 6204 and 6205. Which one?" and not store.records()
