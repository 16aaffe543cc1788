"""Phrasings found in review, fixed by cause: undo said with a reason or as a request ("reverse
that, wrong item", "can you cancel that last entry") or naming its item ("delete the washers
entry"); a count with its figure after the place ("count for bin 60 is 790", read back when only
the place named the item); "about to run out" as low stock; a place said as a place word and
number with a cabinet, cupboard or locker ("what's in cabinet 3"), never an item; fractions of a measure
in words ("three quarters of a litre"). Real SQLite store, real understanding (no LLM), real dialog."""
from __future__ import annotations

import pytest

from edge.stages import dialog
from edge.stages.nlu.guards import fractions
from edge.stages.nlu.understand import Understanding
from tests.helpers import csv_store, say

CSV = """sku,item,location,quantity,unit,aliases,reorder_level
FUS-5A,fuse,bin 30,60,pcs,fuses,10
WSH-M10,flat washer M10,bin 205,320,pcs,washers,10
NUT-M8,hex nut M8,bin 60,800,pcs,nuts,100
CBL,flex cable,shelf E,50,m,cable,60
IPA,isopropyl alcohol,bin 286,10,l,IPA,2
"""


@pytest.fixture
def box(tmp_path):
    with csv_store(tmp_path, CSV) as s:
        yield s, Understanding(s.items())



def moves(store) -> list[tuple[str, float, str]]:
    return [(r.sku, r.delta, r.kind) for r in store.records()]


@pytest.mark.parametrize("text, sku, delta", [
    ("Hang on, reverse that, wrong item.", "FUS-5A", 3), ("Can you cancel that last entry?", "FUS-5A", 3),
    ("could you undo that please", "FUS-5A", 3), ("Delete the washers entry.", "WSH-M10", 5),
    ("scratch the washer record", "WSH-M10", 5)])
def test_undo_said_with_a_reason_a_request_or_its_item(box, text, sku, delta):
    store, _ = box
    say(box, "we used 5 washers", "t0")
    say(box, "we used 3 fuses", "t0")
    out = say(box, text)
    assert out.record is not None and moves(store)[2:] == [(sku, delta, "undo")]


def test_a_count_with_its_figure_after_the_place_is_read_back_then_written(box):
    store, _ = box
    out = say(box, "Count for bin 60 is 790.")
    assert out.text == "Count 790 hex nuts, M8, in bin 60? Say yes or no." and store.records() == []
    dialog.follow_up(out.pending, "yes", store, "t1")
    assert moves(store) == [("NUT-M8", -10, "count")]
    say(box, "the count for the fuses was 58", "t2")  # the item said: written as any count
    assert moves(store)[1:] == [("FUS-5A", -2, "count")]


def test_a_count_read_back_refused_writes_nothing(box):
    store, _ = box
    out = say(box, "the count for bin 60 was 790")
    assert dialog.follow_up(out.pending, "no", store, "t1").record is None and store.records() == []


@pytest.mark.parametrize("text", ["Is there anything we're about to run out of?", "what are we about to run out of",
                                  "anything we are close to running out of"])
def test_about_to_run_out_is_low_stock(box, text):
    store, nlu = box
    assert nlu.understand(text).intent == "low_stock"
    assert "flex cable" in say(box, text).text and store.records() == []


def test_a_cabinet_cupboard_or_locker_is_a_place(tmp_path):
    with csv_store(tmp_path, CSV + "GOG,safety goggles,cabinet 3,8,pcs,goggles,2\n") as store:
        nlu = Understanding(store.items())
        got = nlu.understand("What's in cabinet 3?")
        assert (got.intent, got.location) == ("place_contents", "cabinet 3")
        assert "safety goggles" in dialog.act(got, store, "", "t1").text
        assert nlu.understand("what's in cupboard 2").intent != "log_record"  # never an unknown item "cupboard"
        text = "we used 2 goggles from locker 5"
        out = dialog.act(nlu.understand(text), store, text, "t2")
        assert "locker 5" in out.text and store.records() == []  # a place the goggles are not in: asked


@pytest.mark.parametrize("said, norm", [("3 quarters of a litre of ipa", "0.75 litre of ipa"),
                                        ("a quarter of a metre of cable", "0.25 metre of cable"),
                                        ("half of a litre of oil", "0.5 litre of oil")])
def test_a_fraction_of_a_measure_is_its_decimal(said, norm):
    assert fractions(said) == norm


@pytest.mark.parametrize("text, sku, delta", [("Used three quarters of a litre of IPA.", "IPA", -0.75),
                                              ("We used two and a half metres of flex cable", "CBL", -2.5)])
def test_a_fraction_in_words_is_logged_for_a_unit_that_allows_it(box, text, sku, delta):
    store, _ = box
    assert say(box, text).record is not None and moves(store) == [(sku, delta, "log")]


def test_a_fraction_of_an_item_counted_whole_is_asked(box):
    store, _ = box
    out = say(box, "used three quarters of a fuse")
    assert out.pending is not None and out.pending.kind == "quantity" and store.records() == []


def test_undo_naming_an_item_of_many_in_the_inventory_takes_the_one_just_logged(tmp_path):
    with csv_store(tmp_path, CSV + "WSH-M8,flat washer M8,bin 204,100,pcs,washers,10\n") as store:
        nlu = Understanding(store.items())
        for text in ("we used 5 M10 washers", "we used 3 fuses", "Delete the washers entry."):
            dialog.act(nlu.understand(text), store, text, "t1")
        assert moves(store)[2:] == [("WSH-M10", 5, "undo")]
        out = dialog.act(nlu.understand("undo the washers"), store, "undo the washers", "t2")
        assert out.record is None and len(store.records()) == 3  # both washers could be meant: nothing undone
