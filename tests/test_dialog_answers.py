"""The dialog's questions and the answers to them, with Intents built by hand against a real SQLite
store: a place said narrows the items asked about, a place said by its kind, numbers read out in
groups ("bin one eighteen"), sized names in questions as family and size, a log that said neither in
nor out, a destination that is not one place, low stock of some items, and the speculation's
preview of moves and counts (the same reply, nothing written)."""
from __future__ import annotations

import pytest

from edge.loop.speculation import PreviewInventory
from edge.stages import dialog, reply
from edge.stages.nlu.followup import ask_back_text, direction_answer, place_choice, variant_pick
from edge.stages.nlu.types import Intent
from tests.helpers import csv_store

CSV = """sku,item,location,quantity,unit,aliases,reorder_level
DB-6,drill bit 6 mm,drawer 4,25,pcs,,10
DB-6,drill bit 6 mm,bin 118,10,pcs,,10
DB-8,drill bit 8 mm,drawer 4,18,pcs,,10
DB-10,drill bit 10 mm,bin 5,4,pcs,,10
MDB-6,masonry drill bit 6 mm,bin 146,7,pcs,,2
WDB-6,wood drill bit 6 mm,bin 144,89,pcs,,20
CD-115,cutting disc 115 mm,shelf D,30,pcs,,10
CD-125,cutting disc 125 mm,shelf D,45,pcs,,15
CD-125,cutting disc 125 mm,drawer 12,20,pcs,,15
CD-230,cutting disc 230 mm,shelf D,8,pcs,,10
HB-20,hex bolt M10 x 20 mm,bin 191,36,pcs,,5
HB-25,hex bolt M10 x 25 mm,bin 42,21,pcs,,5
HB-30,hex bolt M10 x 30 mm,bin 156,53,pcs,,10
HB-40,hex bolt M10 x 40 mm,bin 256,8,pcs,,2
HB-50,hex bolt M10 x 50 mm,bin 20,75,pcs,,30
HB-60,hex bolt M10 x 60 mm,bin 169,205,pcs,,50
HB-80,hex bolt M10 x 80 mm,bin 22,48,pcs,,20
HB-100,hex bolt M10 x 100 mm,drawer 25,207,pcs,,50
FUS-5A,fuse 5 A,bin 30,60,pcs,,
OIL-CUT,cutting oil,shelf F,12,l,,15
"""
DRILLS = ("DB-6", "DB-8", "DB-10")
DISCS = ("CD-115", "CD-125", "CD-230")
BOLTS = ("HB-20", "HB-25", "HB-30", "HB-40", "HB-50", "HB-60", "HB-80", "HB-100")


@pytest.fixture
def store(tmp_path):
    with csv_store(tmp_path, CSV) as s:
        yield s


def test_a_place_said_narrows_the_items_asked_about_and_decides_when_one_is_there(store):
    took = Intent("log_record", quantity=1, direction="out", location="drawer 4", candidates=DRILLS,
                  variant_missing="millimetre", text="took one drill bit out of drawer four")
    out = dialog.act(took, store, took.text, "t1")
    assert out.text == "6 or 8 millimetre?" and store.records() == []
    done = dialog.follow_up(out.pending, "the eight mil one", store, "t1")
    assert (done.record.sku, done.record.delta, done.record.location) == ("DB-8", -1, "drawer 4")
    one = Intent("log_record", quantity=2, direction="out", location="bin 5", candidates=DRILLS,
                 variant_missing="millimetre", text="two drill bits from bin five")
    done = dialog.act(one, store, one.text, "t2")
    assert (done.record.sku, done.record.delta) == ("DB-10", -2) and done.pending is None
    unknown = Intent("log_record", quantity=2, direction="out", location="bin 5", candidates=DRILLS,
                     unknown="titanium", text="two titanium drill bits from bin five")
    assert dialog.act(unknown, store, unknown.text, "t3").record is None  # a word that names nothing is said


def test_a_place_said_by_its_kind_is_the_one_place_of_that_kind(store):
    used = Intent("log_record", sku="CD-125", quantity=5, direction="out", location="the shelf", text="…from the shelf")
    done = dialog.act(used, store, used.text, "t1")
    assert (done.record.location, done.record.delta) == ("shelf D", -5) and done.pending is None
    into = Intent("log_record", sku="DB-6", quantity=5, direction="in", location="shelf", text="five onto the shelf")
    asked = dialog.act(into, store, into.text, "t2")
    assert asked.pending is not None and asked.record is None  # a kind alone never becomes a new place
    assert place_choice("the shelf", ("shelf D", "drawer 12")) == "shelf D"
    assert place_choice("the drawer", ("drawer 4", "drawer 12")) is None


def test_numbers_read_out_in_groups_answer_place_and_size_questions(store):
    used = Intent("log_record", sku="DB-6", quantity=2, direction="out", text="we used two drill bits 6 mm")
    out = dialog.act(used, store, used.text, "t1")
    assert out.text == "Drawer 4 or bin 118?"
    done = dialog.follow_up(out.pending, "bin one eighteen", store, "t1")
    assert (done.record.location, done.record.delta) == ("bin 118", -2)
    discs = [store.get(s) for s in DISCS]
    assert variant_pick("the one twenty five", discs) == "CD-125"
    assert variant_pick("one fifteen", discs) == "CD-115"
    assert place_choice("one eighteen", ("drawer 4", "bin 118")) == "bin 118"


def test_a_variant_question_names_up_to_eight_variants(store):
    used = Intent("log_record", quantity=5, direction="out", candidates=BOLTS, variant_missing="length",
                  text="we used five M10 bolts")
    out = dialog.act(used, store, used.text, "t1")
    assert out.text == "20, 25, 30, 40, 50, 60, 80 or 100 millimetre?"
    done = dialog.follow_up(out.pending, "eighty", store, "t1")
    assert (done.record.sku, done.record.delta) == ("HB-80", -5)


def test_sized_names_in_questions_are_family_and_size_never_mms(store):
    sixes = [store.get(s) for s in ("DB-6", "MDB-6", "WDB-6")]
    assert ask_back_text(sixes) == "drill bits, masonry drill bits or wood drill bits, 6 millimetre?"
    assert ask_back_text([store.get("DB-8"), store.get("MDB-6")]) == "drill bits 8 millimetre or masonry drill bits 6 millimetre?"
    assert ask_back_text([store.get(s) for s in BOLTS]) == "Which hex bolt? Please say its size too."
    assert ask_back_text(sixes[:2], "zh") == "drill bit（6毫米）还是masonry drill bit（6毫米）？"
    every = " ".join(ask_back_text([store.get(s) for s in group]) for group in (DRILLS, DISCS, BOLTS))
    assert "mms" not in every
    assert reply.plural("fuse 5 A") == "fuses 5 A" and reply.plural("drill bit") == "drill bits"
    assert reply.amount(store.get("FUS-5A"), 10) == "10 fuses, 5 amp"


def test_a_log_that_said_neither_in_nor_out_asks_and_never_guesses(store):
    said = Intent("log_record", sku="FUS-5A", quantity=3, text="three fuses 5 amp for the pump")
    out = dialog.act(said, store, said.text, "t1")
    assert out.text == "3 fuses, 5 amp: used or received?" and out.pending.kind == "direction" and store.records() == []
    assert dialog.follow_up(out.pending, "hmm", store, "t1").record is None and store.records() == []
    done = dialog.follow_up(out.pending, "we used them", store, "t1")
    assert done.record.delta == -3
    assert direction_answer("they came in") == "in" and direction_answer("用了", "zh") == "out"
    zh = dialog.act(said, store, said.text, "t2", language="zh")
    assert zh.text.endswith("用了还是收到？") and zh.pending.kind == "direction"


def test_a_destination_that_is_not_one_place_is_asked_again(store):
    move = Intent("transfer", sku="DB-6", quantity=5, location="drawer 4", to_location="er bin 62", text="move …")
    out = dialog.act(move, store, move.text, "t1")
    assert out.text == "Move them where?" and store.records() == []
    new = dialog.follow_up(out.pending, "bin sixty two", store, "t1")
    assert new.text.startswith("Bin 62 is a new place for drill bits") and store.records() == []
    done = dialog.follow_up(new.pending, "yes", store, "t1")
    assert done.record is not None and store.get("DB-6").at("bin 62") == 5


def test_low_stock_of_some_items_or_of_one_place(store):
    discs = dialog.act(Intent("low_stock", candidates=DISCS), store, "are we low on cutting discs", "t1")
    assert discs.text == "Low on stock: 8 cutting discs, 230 millimetre (reorder at 10)."
    shelf = dialog.act(Intent("low_stock", location="shelf F"), store, "anything low on shelf F", "t2")
    assert shelf.text == "Low on stock: 12 l of cutting oil (reorder at 15)."
    every = dialog.act(Intent("low_stock"), store, "what is running low", "t3")
    assert "drill bits, 10 millimetre" in every.text and "cutting oil" in every.text


def test_the_preview_of_a_move_or_a_count_is_the_reply_and_writes_nothing(store):
    move = Intent("transfer", sku="DB-6", quantity=5, location="drawer 4", to_location="bin 118", text="move …")
    count = Intent("stock_count", sku="CD-125", quantity=40, location="shelf D", text="count …")
    previews = [dialog.act(i, PreviewInventory(store), i.text, f"p{k}").text for k, i in enumerate((move, count))]
    assert store.records() == []
    real = [dialog.act(i, store, i.text, f"t{k}").text for k, i in enumerate((move, count))]
    assert previews == real and len(store.records()) == 3


def test_a_number_word_misheard_as_a_name_still_picks_the_size_it_sounds_like(store):
    bolts = [store.get(s) for s in BOLTS]
    assert variant_pick("Eddie.", bolts) == "HB-80"  # whisper's "eighty" in one voice
    assert variant_pick("the thirty ones", bolts) == "HB-30"
    assert variant_pick("purple", bolts) is None
    drills = [store.get(s) for s in ("DB-8", "DB-10")] + [bolts[6]]  # 8 and 80 sound alike: never guessed
    assert variant_pick("Eddie", drills) is None


def test_while_the_box_waits_recognition_is_told_what_the_question_offers(store):
    used = Intent("log_record", quantity=5, direction="out", candidates=BOLTS, variant_missing="length", text="…")
    pending = dialog.act(used, store, used.text, "t1").pending
    assert dialog.answer_phrases(pending)[:2] == ["20 millimetre", "25 millimetre"] and dialog.offers(pending)
    where = dialog.act(Intent("log_record", sku="DB-6", quantity=2, direction="out", text="…"), store, "…", "t2").pending
    assert dialog.answer_phrases(where) == ["drawer 4", "bin 118", "never mind"]
    anything = dialog.act(Intent("log_record", quantity=2, direction="out", text="…"), store, "…", "t3").pending
    assert not dialog.offers(anything)  # "Which item?": the inventory's own phrases stay


def test_a_size_or_number_said_with_a_fraction_word_is_that_number(store):
    took = Intent("log_record", quantity=2, direction="out", location="drawer 4", candidates=DRILLS,
                  variant_missing="millimetre", text="we used two drill bits from drawer 4")
    out = dialog.act(took, store, took.text, "t1")
    assert dialog.follow_up(out.pending, "six and a half millimetre", store, "t1").record is None  # not offered
    assert store.records() == []
    cut = Intent("log_record", sku="OIL-CUT", quantity=None, direction="out", text="we used cutting oil")
    ask = dialog.act(cut, store, cut.text, "t2")
    assert dialog.follow_up(ask.pending, "two and a half", store, "t2").record.delta == -2.5


def test_read_backs_name_a_sized_item_by_family_and_size(store):
    used = Intent("log_record", sku="HB-40", quantity=9, direction="out", text="we used nine M10 x 40 bolts")
    out = dialog.act(used, store, used.text, "t1")
    assert out.text.startswith("That would take hex bolts, M10, 40 millimetre below zero: there are only 8 in bin 256.")
    assert "Log 9 hex bolts, M10, 40 millimetre, used anyway?" in out.text and "mm" not in out.text


def test_stock_taken_out_of_an_item_in_several_places_comes_from_the_one_that_has_any(store):
    store.count("DB-6", 0, "drawer 4 is empty", "c1", location="drawer 4")
    used = Intent("log_record", sku="DB-6", quantity=2, direction="out", text="we used two drill bits 6 mm")
    done = dialog.act(used, store, used.text, "t1")
    assert (done.record.location, done.record.delta) == ("bin 118", -2) and done.pending is None
    into = Intent("log_record", sku="DB-6", quantity=2, direction="in", text="two drill bits 6 mm came in")
    assert dialog.act(into, store, into.text, "t2").text == "Drawer 4 or bin 118?"  # stock in: still asked


def test_which_of_many_is_answered_by_thread_and_length_said_as_ten_by_eighty(store):
    grabbed = Intent("log_record", quantity=2, direction="out", candidates=BOLTS, text="grabbed two hex bolts")
    out = dialog.act(grabbed, store, grabbed.text, "t1")
    assert out.text == "Which hex bolt? Please say its size too."
    done = dialog.follow_up(out.pending, "ten by eighty", store, "t1")
    assert (done.record.sku, done.record.delta) == ("HB-80", -2)
    assert dialog.follow_up(out.pending, "twelve by eighty", store, "t1").record is None  # not stocked: not guessed


def test_a_variant_question_reads_the_sizes_smallest_first_and_an_ordinal_follows_it(store):
    shuffled = ("HB-100", "HB-30", "HB-20", "HB-80")
    used = Intent("log_record", quantity=1, direction="out", candidates=shuffled, variant_missing="length", text="…")
    out = dialog.act(used, store, used.text, "t1")
    assert out.text == "20, 30, 80 or 100 millimetre?"
    assert dialog.follow_up(out.pending, "the second one", store, "t1").record.sku == "HB-30"


def test_never_mind_as_the_answer_cancels_and_says_so(store):
    used = Intent("log_record", quantity=6, direction="out", candidates=BOLTS, variant_missing="length", text="…")
    out = dialog.act(used, store, used.text, "t1")
    for said, language in (("never mind", "en"), ("Forget it.", "en"), ("算了", "zh")):
        done = dialog.follow_up(out.pending, said, store, "t1", language=language)
        assert done.text == reply.text("cancelled", language) and done.pending is None
    assert store.records() == []
    assert dialog.follow_up(out.pending, "eighty", store, "t1").record is not None
