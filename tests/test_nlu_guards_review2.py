"""Sentences a review found written as records: yes/no questions about a movement, orders and needs,
things that nearly happened, shortages and what "should be" there. Through the understanding and
the dialog on a real SQLite store: nothing is written and the reply says why; the contrast
sentences still write."""
from __future__ import annotations

import pytest

from edge.stages import dialog
from edge.stages.nlu.guards import asks_yes_no, guard
from edge.stages.nlu.guards_zh import guard_zh
from tests.helpers import csv_store, say_to_store

CSV = """sku,item,location,quantity,unit,aliases
FUS-5A,fuse,bin 30,60,pcs,fuses;保险丝
DRL-BIT-6,drill bit,drawer 4,25,pcs,drill bits;钻头
GLV-NIT-L,nitrile gloves,shelf A,12,box,gloves
WSH-M8,M8 washer,bin 13,500,pcs,washers;m8 washers
"""
ORDER = "Nothing logged: an order is not stock received; log it when it arrives."


@pytest.fixture
def box(tmp_path):
    with csv_store(tmp_path, CSV) as s:
        yield s



def nothing_written(store, text: str) -> dialog.Outcome:
    before = {i.sku: i.quantity for i in store.items()}
    out = say_to_store(store, text)
    assert store.records() == [] and {i.sku: i.quantity for i in store.items()} == before, out.text
    return out


@pytest.mark.parametrize("text", [
    "did we use 3 fuses?", "were 3 fuses used", "did anyone take 3 fuses from bin 30",
    "should I log 3 fuses used?", "have we used 3 fuses", "was 1 box of gloves taken?",
])
def test_a_yes_no_question_about_a_movement_is_answered_from_the_records(box, text):
    out = nothing_written(box, text)
    assert out.pending is None and "record" in out.text.lower()


@pytest.mark.parametrize("text", ["did we use 3 fuses?", "Were 3 fuses used", "should I log 3 fuses used?",
                                  "so did anyone take 3 fuses", "3 fuses used?"])
def test_asks_yes_no(text):
    assert asks_yes_no(text)


@pytest.mark.parametrize("text", ["we're short 5 fuses", "can you log 3 fuses used", "could you log 3 fuses used",
                                  "we used 3 fuses", "can I log 3 fuses used"])
def test_a_statement_or_a_request_is_no_yes_no_question(text):
    assert not asks_yes_no(text)


@pytest.mark.parametrize("text", [
    "order 200 washers", "we need 200 washers", "we should get 200 washers", "I want to order 50 fuses",
    "please reorder 10 drill bits", "put in an order for 20 gloves", "we'd need 3 fuses", "the fitter wants 3 fuses",
    "Bob asked for 3 fuses", "we could use 3 fuses", "we ordered 200 washers",
])
def test_an_order_or_a_need_is_no_receipt(box, text):
    out = nothing_written(box, text)
    assert out.text == ORDER


@pytest.mark.parametrize("text", ["I almost used 3 fuses", "we nearly used 3 fuses", "we nearly took 2 drill bits"])
def test_what_nearly_happened_is_not_logged(box, text):
    out = nothing_written(box, text)
    assert out.text.startswith("Nothing logged:") and "what-if" in out.text


@pytest.mark.parametrize("text", ["the delivery had 3 fuses short", "we're short 5 fuses", "3 fuses are missing"])
def test_a_shortage_is_not_logged_and_a_count_is_asked_for(box, text):
    out = nothing_written(box, text)
    assert out.text == "Nothing logged: a shortage is not a movement; please count them: say 'counted N fuses'."


def test_what_should_be_there_is_no_count(box):
    out = nothing_written(box, "there should be 40 fuses in bin 30")
    assert out.text == "Nothing written: what should be there is not a count; please count them: say 'counted N fuses'."


@pytest.mark.parametrize("text, sku, delta", [
    ("we used 3 fuses", "FUS-5A", -3), ("we received 200 washers", "WSH-M8", 200),
    ("got 200 washers in", "WSH-M8", 200), ("could you log 3 fuses used", "FUS-5A", -3),
    ("can you log 3 fuses used", "FUS-5A", -3), ("I need to log 3 fuses used", "FUS-5A", -3),
])
def test_the_contrast_sentences_still_log(box, text, sku, delta):
    say_to_store(box, text)
    assert [(r.sku, r.delta) for r in box.records()] == [(sku, delta)]


def test_a_count_still_counts(box):
    say_to_store(box, "counted 40 fuses in bin 30")
    assert box.get("FUS-5A").quantity == 40


@pytest.mark.parametrize("text", ["我们需要200个垫圈", "订200个垫圈", "要买50个保险丝"])
def test_a_mandarin_order_is_not_received(text):
    assert guard_zh(text).refusal == "future"


def test_a_mandarin_use_is_still_no_refusal():
    assert guard_zh("用了3个保险丝").refusal is None


def test_do_not_at_the_start_is_an_instruction_not_a_question():
    assert not asks_yes_no("do not add 50 washers to bin 204")


def test_the_fitter_needs_3_fuses_is_an_order_but_a_need_for_a_job_is_a_handout(box):
    assert nothing_written(box, "the fitter needs 3 fuses").text == ORDER
    assert guard("dave needs 3 fuses for the doors").refusal is None


@pytest.mark.parametrize("text", ["Did a stocktake on the goggles, there's 7.", "did a recount of bin 30, we've got 40",
                                  "If we receive 50 fuses tomorrow, what will we have?",
                                  "Pretend I used 5 fuses, what would the balance be?"])
def test_a_statement_with_did_or_a_what_question_is_no_yes_no_question(text):
    assert not asks_yes_no(text)
