"""Two items whose names differ only by accents ("Muller clamp", "Müller clamp") cannot be told
apart by voice: a turn that hears such a name asks which one by place (or by SKU when they share
their places), never takes the one spelled as heard; a place said or a word only one name has
decides. Real SQLite store, real understanding (grammar), real dialog and follow-up."""
from __future__ import annotations

import pytest

from edge.stages import dialog
from edge.stages.nlu.understand import Understanding
from tests.helpers import csv_store, say

CSV = """sku,item,location,quantity,unit,aliases
MUL-1,Muller clamp,bin 3,10,pcs,MC clamp
MUL-2,Müller clamp,bin 4,20,pcs,
BRK-1,Mueller brake,shelf A,5,pcs,
BRK-2,Müeller brake,shelf A,5,pcs,
FUS-5A,fuse,bin 30,60,pcs,fuses
"""


@pytest.fixture
def box(tmp_path):
    with csv_store(tmp_path, CSV) as s:
        yield s, Understanding(s.items())



@pytest.mark.parametrize("text", ["we used 3 Muller clamps", "we used 3 Müller clamps", "we used 3 muller",
                                  "we used 3 Muler clamps"])
def test_a_name_that_sounds_like_another_items_is_asked_by_place(box, text):
    store, nlu = box
    assert nlu.understand(text).candidates == ("MUL-1", "MUL-2")  # neither spelling is taken as heard
    out = say(box, text)
    assert out.text == "The Muller clamps in bin 3 or the Müller clamps in bin 4? Please say the place."
    assert store.records() == [] and out.pending.kind == "choose_item"
    assert {"bin 3", "bin 4", "MUL-1", "MUL-2"} <= set(dialog.answer_phrases(out.pending))
    done = dialog.follow_up(out.pending, "bin four", store, "t1")
    assert done.text == "Logged 3 Müller clamps used. Now 17 in bin 4."
    assert [(r.sku, r.delta) for r in store.records()] == [("MUL-2", -3)]


def test_a_stock_question_asks_too_and_takes_a_sku_as_the_answer(box):
    store, _ = box
    out = say(box, "how many Muller clamps are there")
    assert out.pending is not None and "Please say the place." in out.text
    assert dialog.follow_up(out.pending, "MUL 1", store, "t1").text == "There are 10 Muller clamps in bin 3."


def test_names_alike_in_one_place_are_asked_by_sku(box):
    store, _ = box
    out = say(box, "we used 1 mueller brake")
    assert out.text == "BRK-1 or BRK-2? Please say the SKU."
    assert dialog.follow_up(out.pending, "the sku is B R K 2", store, "t1").record.sku == "BRK-2"


@pytest.mark.parametrize("text, sku", [
    ("we used 3 Muller clamps from bin 4", "MUL-2"),  # the place said decides
    ("we used 2 MC clamps", "MUL-1"),                 # a name only one of them has
])
def test_a_place_or_a_name_of_its_own_tells_them_apart(box, text, sku):
    store, _ = box
    out = say(box, text)
    assert out.pending is None and [r.sku for r in store.records()] == [sku]
