"""Phrasings of the stock-room commands beyond the first templates, each by the general rule that
takes it (sentences of our own, not the evaluation's): log verbs ("cut", "fitted", "swapped out"), a
use said after the verb ("went on the door", "topped up the van with …"), "… out of bin 30" without a
verb, counts said as measured or "there's only", a recount of a place, stock questions with "stock",
"carry", "where does … live", low stock of one item, undo and cancel with what is said around them, a
place slot that holds no place, "a tub of …" as one, what an item is for that is not the item, and
the paraphrase path's statement that is a log. Real grammar, real store, real encoder; never a wrong
write."""
from __future__ import annotations

import pytest

from edge.models.embed import Encoder
from edge.stages import dialog
from edge.stages.nlu.grammar import Grammar, text_direction
from edge.stages.nlu.paraphrase import Paraphraser
from edge.stages.nlu.slots import purpose_span
from edge.stages.nlu.understand import Understanding
from tests.helpers import INVENTORY, csv_store, say
from tests.stockroom import stockroom

CSV = """sku,item,location,quantity,unit,aliases,reorder_level
FUS-5A,fuse,bin 30,60,pcs,fuses,10
PNT-WHT,white paint,shelf C,4,can,paint,5
CBL-CU,copper cable,rack 3,250,m,,20
SLC,silicone,shelf G,9,tube,,2
ACE,acetone,bin 95,12,l,,2
GLV-S,work gloves S,shelf A,6,box,,3
GLV-L,work gloves L,shelf A,2,box,,3
"""


@pytest.fixture(scope="module")
def g() -> Grammar:
    return Grammar(stockroom(2000))


@pytest.fixture
def box(tmp_path):
    with csv_store(tmp_path, CSV) as s:
        yield s, Understanding(s.items())



@pytest.mark.parametrize("text, sku, quantity, location", [
    ("cut 3 metres off the copper cable", "CBL-CU-25", 3, None),
    ("fitted two fuses", "FUS-5A", 2, None),
    ("we swapped out four fuses", "FUS-5A", 4, None),
    ("replaced 2 washers", "WSH-M8", 2, None),
    ("5 fuses out of bin 30", "FUS-5A", 5, "bin 30"),
    ("two drill bits taken out of drawer 4", "DRL-BIT-6", 2, "drawer 4"),
])
def test_more_verbs_of_stock_out(g, text, sku, quantity, location):
    got = g.parse(text)
    assert (got.intent, got.sku, got.quantity, got.direction, got.location) == ("log_record", sku, quantity, "out",
                                                                                 location)


@pytest.mark.parametrize("text, sku, quantity", [
    ("a can of white paint went on the back door", "PNT-WHT", 1),
    ("three cable ties were used on the loom", "TIE-CBL-200", 3),
    ("I used 2 fuses on the old pump", "FUS-5A", 2),
    ("topped up the van with two cans of paint", "PNT-WHT", 2),
])
def test_what_it_was_used_on_is_said_after_the_verb(g, text, sku, quantity):
    got = g.parse(text)
    assert (got.intent, got.sku, got.quantity, got.direction) == ("log_record", sku, quantity, "out")


def test_a_stock_place_said_where_the_use_goes_says_no_direction(g):
    """"… went into bin 30": put there, or taken from there? Asked (direction None), never out."""
    got = g.parse("four fuses went into bin 30")
    assert (got.intent, got.sku, got.quantity, got.direction, got.location) == ("log_record", "FUS-5A", 4, None,
                                                                                 "bin 30")


def test_a_place_slot_must_hold_a_place(g):
    """"{item} off {location}" does not take "knocked off two fuses": the words after "off" are no place."""
    got = g.parse("knocked off two fuses")
    assert got is None or got.location is None


@pytest.mark.parametrize("text, sku, quantity, location", [
    ("just weighed the copper cable, 240 metres", "CBL-CU-25", 240, None),
    ("there's only 55 fuses in bin 30", "FUS-5A", 55, "bin 30"),
    ("we did a recount of bin 30, there are 58 fuses", "FUS-5A", 58, "bin 30"),
])
def test_counts_said_as_measured_or_as_what_is_there(g, text, sku, quantity, location):
    got = g.parse(text)
    assert (got.intent, got.sku, got.quantity, got.location) == ("stock_count", sku, quantity, location)


@pytest.mark.parametrize("text, sku, unknown", [
    ("do we carry any fuses", "FUS-5A", None),
    ("do we stock sprockets", None, "sprockets"),
    ("where does the copy paper live", "PPR-A4", None),
    ("where do the angle grinders go", None, "angle grinders"),
    ("fuses, where are they and how many", "FUS-5A", None),
    ("safety goggles, how many have we got", "GOG-SAF", None),
])
def test_stock_questions_said_other_ways(g, text, sku, unknown):
    got = g.parse(text)
    assert (got.intent, got.sku, got.unknown) == ("query_stock", sku, unknown)


def test_low_stock_of_one_item_said_as_running_out(box):
    for k, text in enumerate(["are any of the work gloves running low", "are we running out of work gloves"]):
        out = say(box, text, f"t{k}")
        assert out.text == "Low on stock: 2 boxes of work gloves, large (reorder at 3)."


@pytest.mark.parametrize("text", ["no hang on, undo that", "I said that wrong, back it out", "scrap that last one",
                                  "that's wrong, take it off again", "hold on, take that back"])
def test_undo_with_what_is_said_around_it(box, text):
    store, _ = box
    say(box, "we used 3 fuses", "t1")
    out = say(box, text, "t2")
    assert out.text.startswith("Undone: 3 fuses") and store.get("FUS-5A").quantity == 60


@pytest.mark.parametrize("text", ["sorry, I was talking to my mate", "I'm speaking to Dave"])
def test_talking_to_someone_else_cancels(g, text):
    assert g.parse(text).intent == "cancel"


def test_a_container_or_a_measure_with_a_is_one(box):
    store, _ = box
    out = say(box, "a tube of silicone went on the window", "t1")
    assert out.record.delta == -1 and store.get("SLC").quantity == 8
    out = say(box, "used a litre of acetone on the floor", "t2")
    assert out.record.delta == -1 and store.get("ACE").quantity == 11


def test_an_unknown_item_in_a_container_is_said_unknown(box):
    store, _ = box
    out = say(box, "took a tub of grease", "t1")
    assert out.text == "I don't have grease in the inventory." and store.records() == []


def test_what_an_item_is_for_is_not_the_item(g):
    toks = "a tub of grease for the fuses from bin 30".split()
    assert purpose_span(toks, {7, 8}) == {4, 5, 6}
    assert purpose_span("we used 3 for the fuses".split(), set()) == set()  # nothing before "for" names an item
    got = g.parse("took a tub of grease for the fuses")
    assert (got.intent, got.sku, got.unknown, got.quantity) == ("log_record", None, "grease", 1)
    got = g.parse("we used 2 fuses for the new pump")
    assert (got.sku, got.quantity) == ("FUS-5A", 2)


@pytest.mark.parametrize("text, direction", [
    ("a litre of acetone for cleaning the floor", "out"), ("two fuses for the forklift", "out"),
    ("5 gloves taken out of the cupboard", "out"), ("20 gloves for restocking shelf A", "in"),
])
def test_what_a_log_is_for_says_its_direction(text, direction):
    assert text_direction(text) == direction


@pytest.fixture(scope="module")
def encoder():
    return Encoder.load()


def test_a_statement_taken_as_a_question_with_a_count_and_a_direction_is_a_log(tmp_path, encoder):
    """The paraphrase matcher takes it for a stock question; said as a statement with a count and
    what it was for, it is a log (out); a question stays a question."""
    with csv_store(tmp_path, CSV) as store:
        para = Paraphraser(encoder, store.items(), exemplars={"query_stock": ["how much {item} is left"],
                                                              "other": ["tell me a joke"]}, threshold=0.3)
        nlu = Understanding(store.items(), paraphraser=para)
        got = nlu.understand("knocked off a can of white paint for the forklift")
        assert (got.intent, got.sku, got.quantity, got.direction, got.source) == ("log_record", "PNT-WHT", 1, "out",
                                                                                  "paraphrase")
        got = nlu.understand("white paint, what have we got for the forklift")
        assert (got.intent, got.sku) == ("query_stock", "PNT-WHT")


def test_a_paraphrased_log_without_a_direction_asks_which(tmp_path, encoder):
    with csv_store(tmp_path, CSV) as store:
        para = Paraphraser(encoder, store.items(), exemplars={"log_record": ["{n} {item} please"],
                                                              "other": ["tell me a joke"]}, threshold=0.3)
        nlu = Understanding(store.items(), paraphraser=para)
        text = "a litre of acetone, please"
        got = nlu.understand(text)
        assert (got.intent, got.sku, got.quantity, got.direction) == ("log_record", "ACE", 1, None)
        out = dialog.act(got, store, text, "t1")
        assert out.text == "1 l of acetone: used or received?" and store.records() == []


@pytest.mark.parametrize("text, intent", [
    ("sorry, I was speaking to my colleague", "cancel"),
    ("are the cable ties running out", "low_stock"),
    ("I measured the paint, 3 cans left", "stock_count"),
    ("I messed that up, take it off", "undo"),
])
def test_the_exemplars_take_these_phrasings(tmp_path, encoder, text, intent):
    """The paraphrase matcher's own exemplars (not a test's) pick the intent of phrasings no template lists."""
    with csv_store(tmp_path, INVENTORY.read_text(encoding="utf-8")) as store:
        assert Paraphraser(encoder, store.items()).match(text)[0] == intent
