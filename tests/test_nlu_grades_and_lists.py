"""Grades and codes written in item names ("engine oil 10W-40", "bearing 6204 ZZ", "sanding sheet
P240"), sizes said in a question, plain words before a name, refusals that need no size, and the
lists the box says (the last item named instead of "and 1 more", none left first, a place's low
items, the sizes a family comes in). Real grammar and a real SQLite store; sentences of our own."""
from __future__ import annotations

import pytest

from edge.stages import dialog
from edge.stages.nlu.grammar import Grammar
from edge.stages.nlu.understand import Understanding
from edge.stock.store import Item
from tests.helpers import csv_store, say

ITEMS = [
    Item("OIL-E", "engine oil 5W-30", "bin 5", 40, "l", ()),
    Item("OIL-G", "gear oil", "bin 6", 12, "l", ()),
    Item("OIL-H46", "hydraulic oil 46", "bin 7", 60, "l", ()),
    Item("BRG-6204", "bearing 6204 2RS", "bin 20", 16, "pcs", ()),
    Item("BRG-6204-ZZ", "bearing 6204 ZZ", "bin 21", 4, "pcs", ()),
    Item("BRG-6305", "bearing 6305 2RS", "bin 22", 9, "pcs", ()),
    Item("SND-80", "sanding sheet P80", "shelf S", 40, "pcs", ()),
    Item("SND-240", "sanding sheet P240", "shelf S", 25, "pcs", ()),
    Item("WD", "WD-40 spray", "shelf F", 9, "can", ()),
    Item("CBL-1.5", "flex cable 1.5 mm", "reel 1", 80, "m", ()),
    Item("CBL-2.5", "flex cable 2.5 mm", "reel 2", 55, "m", ()),
    Item("OR-20", "o-ring 20 mm", "bin 40", 30, "pcs", ()),
    Item("OR-30", "o-ring 30 mm", "bin 41", 30, "pcs", ()),
]


@pytest.fixture(scope="module")
def g() -> Grammar:
    return Grammar(ITEMS)


@pytest.mark.parametrize("text, sku", [
    ("how much engine oil have we got", "OIL-E"),          # the grade is no part of the family's name
    ("how many wd 40 spray cans", "WD"),                   # a word after the code: "WD-40" stays the name
    ("how many metres of 2.5 flex cable are there", "CBL-2.5"),  # a question has no count: 2.5 is the size
])
def test_a_grade_or_a_bare_size_in_a_question(g, text, sku):
    got = g.parse(text)
    assert (got.intent, got.sku) == ("query_stock", sku)


def test_a_code_said_picks_the_items_named_with_it(g):
    got = g.parse("we used three P240 sheets")
    assert (got.sku, got.quantity) == ("SND-240", 3)
    got = g.parse("how many 6204 bearings are there")  # two bearings carry 6204: both asked, never one
    assert (got.sku, set(got.candidates)) == (None, {"BRG-6204", "BRG-6204-ZZ"})
    got = g.parse("how many bearings are there")
    assert set(got.candidates) == {"BRG-6204", "BRG-6204-ZZ", "BRG-6305"}


def test_a_plain_word_before_a_name_is_no_other_kind(g):
    got = g.parse("used four standard o-rings, the 20 mm ones")
    assert (got.sku, got.quantity, got.heard_variant) == ("OR-20", 4, None)


CSV = """sku,item,location,quantity,unit,aliases,reorder_level
FUS-5,fuse,bin 30,60,pcs,fuses,10
PNT,white paint,bin 30,0,can,paint,2
TAPE,duct tape,bin 30,3,roll,,6
GLV-S,work gloves S,bin 30,6,box,,3
NUT-10,hex nut M10,bin 31,150,pcs,,200
NUT-12,hex nut M12,bin 32,40,pcs,,50
CT-200,cable tie 200 mm,drawer 7,300,pcs,,100
CT-380,cable tie 380 mm,drawer 8,20,pcs,,100
"""


@pytest.fixture
def box(tmp_path):
    with csv_store(tmp_path, CSV) as s:
        yield s, Understanding(s.items())



def test_a_list_names_the_last_item_instead_of_one_more(box):
    out = say(box, "what's in bin 30")
    assert out.text == "In bin 30: fuse, 60; work gloves small, 6 box; white paint, 0 can; and duct tape, 3 roll."


def test_low_stock_says_what_is_out_first(box):
    out = say(box, "what needs reordering")
    assert out.text.startswith("Low on stock: 0 cans of white paint (out of stock), 20 cable ties, 380 millimetre (reorder at 100)")


def test_the_low_items_of_a_place(box):
    store, nlu = box
    intent = nlu.fill_slots("low_stock", "is anything in bin 32 getting short")
    assert intent.location == "bin 32"
    assert dialog.act(intent, store, intent.text, "t1").text == "Low on stock: 40 hex nuts, M12 (reorder at 50)."


def test_the_sizes_a_family_comes_in(box):
    out = say(box, "what sizes of cable ties do we have")
    assert out.text == "Cable ties come in 2 sizes: 200 and 380 millimetre." and out.pending is None
    assert say(box, "how many cable ties do we have").pending is not None  # a count asked: which one


@pytest.mark.parametrize("text, said", [
    ("don't log the cable ties", "OK, I won't log that. Nothing was logged."),
    ("the cable ties were logged this morning, no need", "Nothing logged again: you said that was already done."),
    ("hold off on logging the cable ties", "OK, I won't log that. Nothing was logged."),
])
def test_a_refused_log_asks_no_size(box, text, said):
    store, _ = box
    out = say(box, text)
    assert out.text == said and out.pending is None and store.records() == []
