"""A fresh user's wrong records, closed in the dialog: new places are confirmed, undo follows
the item or count said, a unit that is not the item's is asked about, an item found only from
its place is read back. Real SQLite store, real understanding (grammar, no LLM), real dialog."""
from __future__ import annotations

import pytest

from edge.stages import dialog
from edge.stages.nlu.types import Intent
from edge.stages.nlu.understand import Understanding
from tests.helpers import csv_store, say

CSV = """sku,item,location,quantity,unit,aliases,reorder_level
FUS-5A,fuse,bin 30,60,pcs,fuses,10
ORG-10,o-ring,bin 204,80,pcs,o-rings,10
CBL-RED,red cable,shelf C,50,m,cable,10
GLV-NIT-L,nitrile gloves,shelf A,12,box,gloves,5
BLT-M12,hex bolt M12 x 100 mm,bin 31,40,pcs,,5
DEGR,degreaser,shelf F,25,l,,5
"""


@pytest.fixture
def box(tmp_path):
    with csv_store(tmp_path, CSV) as s:
        yield s, Understanding(s.items())



def undo(box, text: str, turn: str) -> dialog.Outcome:
    """An undo as the understanding hands it on (the intent and the words, no item)."""
    return dialog.act(Intent("undo", text=text), box[0], text, turn)


@pytest.mark.parametrize("text", ["move 3 fuses from bin 30 to bin 12 please", "move 3 fuses from bin 30 to uh bin 12"])
def test_a_transfer_to_a_new_place_asks_first_and_drops_fillers(box, text):
    store, _ = box
    out = say(box, text, "t1")
    assert out.text == "Bin 12 is a new place for fuses: move them there? Say yes or no."
    assert store.records() == [] and store.get("FUS-5A").at("bin 12") is None
    done = dialog.follow_up(out.pending, "yes", store, "t1")
    assert store.get("FUS-5A").at("bin 12") == 3 and store.get("FUS-5A").at("bin 30") == 57
    assert [p for p, _q in store.get("FUS-5A").places()] == ["bin 30", "bin 12"] and done.record is not None
    assert store.place_contents("bin 12 please", 5)[1] == 0


def test_a_no_to_a_new_place_writes_nothing(box):
    store, _ = box
    out = say(box, "move 5 fuses from bin 30 to bin 31", "t1")
    assert out.pending.kind == "confirm" and "new place" in out.text
    assert dialog.follow_up(out.pending, "no", store, "t1").record is None
    assert store.records() == [] and store.get("FUS-5A").at("bin 31") is None


def test_a_corrected_or_kind_only_destination_never_becomes_a_place(box):
    store, _ = box
    for k, text in enumerate(["move 3 fuses from bin 30 to the bin", "move 3 fuses from bin 30 to bin 31, no, to bin 12"]):
        out = say(box, text, f"t{k}")
        assert out.record is None and "moved 3" not in out.text.lower()
    assert store.records() == [] and [p for p, _q in store.get("FUS-5A").places()] == ["bin 30"]


def test_a_count_in_a_new_place_asks_first(box):
    store, _ = box
    out = say(box, "we counted 10 fuses in bin 90", "t1")
    assert out.text == "Bin 90 is a new place for fuses: count 10 fuses there? Say yes or no."
    assert store.records() == []
    done = dialog.follow_up(out.pending, "yes", store, "t1")
    assert done.record.kind == "count" and store.get("FUS-5A").at("bin 90") == 10


def test_undo_naming_an_item_undoes_that_items_record_only(box):
    store, _ = box
    say(box, "we used 3 fuses", "t1")
    say(box, "we used 2 metres of red cable", "t2")
    say(box, "we used 1 box of gloves", "t3")
    out = undo(box, "undo the fuses", "t4")
    assert out.record.sku == "FUS-5A" and out.text.startswith("Undone: 3 fuses")
    assert store.get("FUS-5A").quantity == 60 and store.get("GLV-NIT-L").quantity == 11
    again = undo(box, "undo the fuses", "t5")
    assert again.record is None and again.text == "There is no record of fuses to undo."
    cable = undo(box, "undo the red cable", "t6")
    assert cable.record.sku == "CBL-RED" and store.get("CBL-RED").quantity == 50 and store.get("GLV-NIT-L").quantity == 11


def test_undo_the_last_two_undoes_two(box):
    store, _ = box
    say(box, "we used 3 fuses", "t1")
    say(box, "we used 1 box of gloves", "t2")
    say(box, "we used 4 o-rings", "t3")
    out = undo(box, "undo the last two", "t4")
    assert out.text.count("Undone:") == 2 and "4 o-rings" in out.text and "1 box of nitrile gloves" in out.text
    assert store.get("ORG-10").quantity == 80 and store.get("GLV-NIT-L").quantity == 12
    assert store.get("FUS-5A").quantity == 57


@pytest.mark.parametrize("said", ["undo the last ten", "undo the last 6 records"])
def test_undo_of_more_than_the_most_at_once_undoes_nothing_and_says_so(box, said):
    store, _ = box
    for k in range(7):
        say(box, "we used 1 fuse", f"t{k}")
    out = undo(box, said, "u1")
    assert out.record is None and "at most 5" in out.text and "nothing was undone" in out.text
    assert store.get("FUS-5A").quantity == 53 and len([r for r in store.records() if r.undoes]) == 0
    assert undo(box, "undo the last five", "u2").text.count("Undone:") == 5


def test_undo_naming_an_unknown_item_undoes_nothing(box):
    store, _ = box
    say(box, "we used 3 fuses", "t1")
    out = undo(box, "undo the widgets", "t2")
    assert out.record is None and store.get("FUS-5A").quantity == 57


def test_boxes_of_an_item_counted_in_pcs_are_asked_about(box):
    store, _ = box
    out = say(box, "we used 2 boxes of o-rings", "t1")
    assert out.text == "O-rings are counted in pcs: how many pcs?" and out.pending.kind == "quantity"
    assert store.records() == []
    done = dialog.follow_up(out.pending, "forty", store, "t1")
    assert done.record.delta == -40
    same = say(box, "we used 1 box of gloves", "t2")  # the item's own unit: written
    assert same.record is not None and same.record.delta == -1


def test_an_item_found_only_from_its_place_is_read_back(box):
    store, _ = box
    out = say(box, "add 5 to bin 30", "t1")
    assert out.text == "5 fuses into bin 30? Say yes or no." and store.records() == []
    done = dialog.follow_up(out.pending, "yes", store, "t1")
    assert done.record.delta == 5 and store.get("FUS-5A").quantity == 65


def test_a_new_place_that_would_also_take_stock_below_zero_says_both(box):
    store, _ = box
    out = say(box, "move 100 fuses from bin 30 to bin 31", "t1")
    assert out.text == "Bin 31 is a new place for fuses, and there are only 60 in bin 30: move 100 fuses there? Say yes or no."
    assert store.records() == []


def test_a_change_heard_second_hand_is_read_back_and_written_after_a_yes(box):
    store, _ = box
    out = say(box, "the night crew says they used 5 fuses", "t1")
    assert out.text == "That is second-hand: log 5 fuses used? Say yes or no." and out.pending.kind == "confirm"
    assert store.records() == []
    assert dialog.follow_up(out.pending, "no", store, "t1").record is None and store.records() == []
    out = say(box, "apparently someone took 3 fuses and 2 o-rings", "t2")
    assert out.text == "That is second-hand: log 3 fuses used and log 2 o-rings used? Say yes or no."
    done = dialog.follow_up(out.pending, "yes", store, "t2")
    assert done.record is not None and [(r.sku, r.delta) for r in store.records()] == [("FUS-5A", -3), ("ORG-10", -2)]


@pytest.mark.parametrize("text, said", [
    ("the wholesaler will deliver 40 fuses on friday", "Nothing logged: 40 fuses are still to come"),
    ("suppose I took 6 o-rings", "Nothing logged: 6 o-rings were only a what-if."),
])
def test_a_planned_or_supposed_change_writes_nothing(box, text, said):
    store, nlu = box
    intent = nlu.fill_slots("log_record", text)  # as the paraphrase path hands it on
    out = dialog.act(intent, store, text, "t1")
    assert out.text.startswith(said) and out.pending is None and store.records() == []


def test_a_what_if_question_says_the_stock_and_what_would_be_left(box):
    store, _ = box
    out = say(box, "if we used 8 fuses how many would be left", "t1")
    assert out.text == "There are 60 fuses in bin 30. After using 8 there would be 52; nothing was logged."
    assert store.records() == [] and out.pending is None


def test_a_container_said_without_a_count_asks_unless_the_item_is_counted_in_it(box):
    store, _ = box
    out = say(box, "received a bag of o-rings", "t1")
    assert out.text == "O-rings are counted in pcs: how many pcs?" and store.records() == []
    dialog.follow_up(out.pending, "forty", store, "t1")
    assert [(r.sku, r.delta) for r in store.records()] == [("ORG-10", 40)]
    say(box, "took a box of nitrile gloves", "t2")
    assert [(r.sku, r.delta) for r in store.records()][1:] == [("GLV-NIT-L", -1)]


def test_a_question_about_the_log_is_answered_from_the_records(box):
    store, _ = box
    assert say(box, "did I already log the fuses?", "t1").text == "I have no record of fuses being logged."
    say(box, "we used 4 fuses", "t2")
    said = say(box, "have we logged the fuses", "t3").text
    assert said.startswith("Yes: the last record is 4 fuses used, at ") and len(store.records()) == 1
    assert say(box, "did we record the o-rings", "t4").text == "I have no record of o-rings being logged."
    undo(box, "undo that", "t5")
    assert "was undone" in say(box, "did I log the fuses", "t6").text


@pytest.mark.parametrize("text, sku, delta", [
    ("used 2 M twelve by a hundred bolts from bin 31", "BLT-M12", -2),   # "M" before a number: a thread, no metres
    ("used 2 cans of degreaser, sorry, 2 litres of degreaser", "DEGR", -2),  # the unit said last is kept
])
def test_a_thread_or_a_corrected_unit_is_no_other_unit(box, text, sku, delta):
    store, _ = box
    out = say(box, text, "t1")
    assert [(r.sku, r.delta) for r in store.records()] == [(sku, delta)], out.text
