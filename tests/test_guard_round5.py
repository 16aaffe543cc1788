"""Round 5 of "never a wrong record": each class closed, with the correct neighbours that still log
in one turn. A bare count of an item counted in lots ("3 gloves" of boxes) is asked; what is there
("there are 40 fuses") is never a receipt, on any path (the model's output too); a change typed in
the present tense is read back while heard speech logs; "no wait", 等一下 and a grudging 好吧 keep
the read-back open and write nothing; and replies that came out garbled. Real SQLite store, real
understanding (grammar, no LLM, unless a test gives the model's output through the replay engine),
real dialog."""
from __future__ import annotations

import json

import pytest

from edge.stages import dialog
from edge.stages.nlu.followup import holds, yes_no
from edge.stages.nlu.said_counts import other_unit, other_unit_zh
from edge.stages.nlu.understand import Understanding
from edge.stock.store import Store
from tests.helpers import csv_store
from tests.nlu_helpers import ReplayEngine

CSV = """sku,item,location,quantity,unit,aliases
FUS-5A,fuse,bin 30,60,pcs,fuses
WSH-M8,washer,bin 2023,500,pcs,washers
DRL-BIT-6,drill bit,drawer 4,25,pcs,drill bits
GLV-NIT-L,nitrile gloves,shelf A,12,box,nitrile glove;gloves
GLV-LTH-M,leather gloves M,bin 221,29,pair,leather glove M
GOG-SAF,safety goggles,shelf B,8,pcs,goggles
PNT-WHT,white paint,shelf C,4,can,paint
PPR-A4,copy paper,shelf D,10,pallet,paper
HEXK-SET,hex key set,drawer 31,4,set,
OR-10,o-ring 10 mm,bin 2,34,pcs,o-rings 10 mm
"""
ZH_CSV = """sku,item,location,quantity,unit,aliases
FUS-5A,fuse,bin 30,60,pcs,fuses;保险丝
GLV-NIT-L,nitrile gloves,shelf A,12,box,gloves;手套
GOG-SAF,safety goggles,shelf B,8,pcs,goggles;护目镜
"""


def run(store: Store, text: str, *answers: str, language: str = "en", confidence=None, engine=None):
    """One turn and its answers, as the voice loop runs them: the replies and the records written."""
    und = Understanding(store.items(), engine, language=language)
    out = dialog.act(und.understand(text, confidence=confidence), store, text, "t0", language=language)
    said = [out.text]
    for k, a in enumerate(answers):
        if out.pending is None:
            break
        out = dialog.follow_up(out.pending, a, store, f"t{k + 1}", language=language)
        said.append(out.text)
    return said, [(r.sku, r.delta) for r in store.records()], out


# -- 1. a bare count of an item counted in lots -------------------------------------------------------------

@pytest.mark.parametrize("text, question", [
    ("we used 3 gloves", "Nitrile gloves are counted in boxes: how many boxes?"),
    ("we received 12 nitrile gloves", "Nitrile gloves are counted in boxes: how many boxes?"),
    ("we used a glove", "Nitrile gloves are counted in boxes: how many boxes?"),
    ("we used 5 leather gloves M", "Leather gloves, medium are counted in pairs: how many pairs?"),
    ("we used 3 paints", "White paint is counted in cans: how many cans?"),
    ("we used 3 papers", "Copy paper is counted in pallets: how many pallets?"),
    ("we used 2 hex keys", "Hex key set is counted in sets: how many sets?"),
    ("we used 3 fuses and 2 gloves", "Nitrile gloves are counted in boxes: how many boxes?"),
    ("we used 3 gloves and 2 boxes of gloves", "Nitrile gloves are counted in boxes: how many boxes?"),
])
def test_a_bare_count_of_an_item_counted_in_lots_is_asked_in_its_unit(tmp_path, text, question):
    with csv_store(tmp_path, CSV) as store:
        said, written, out = run(store, text)
        assert written == [] and said == [question] and out.pending is not None


def test_the_answer_in_the_items_unit_is_logged(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        said, written, _ = run(store, "we used 3 gloves", "3 boxes")
        assert written == [("GLV-NIT-L", -3)] and said[1].startswith("Logged 3 boxes of nitrile gloves used.")


@pytest.mark.parametrize("text, answer", [("we used 3 gloves", "3 gloves"), ("we used 3 gloves", "3 single gloves"),
                                          ("用了三个手套", "三个"), ("用了三个手套", "三个手套")])
def test_the_pieces_said_again_to_how_many_boxes_write_nothing(tmp_path, text, answer):
    zh = text[0] > "~"
    with csv_store(tmp_path, ZH_CSV if zh else CSV) as store:
        said, written, _ = run(store, text, answer, language="zh" if zh else "en")
        assert written == [], said


def test_a_parts_unit_question_takes_that_parts_unit(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        _, written, _ = run(store, "we used 3 fuses and 2 gloves", "2 boxes")
        assert sorted(written) == [("FUS-5A", -3), ("GLV-NIT-L", -2)]


@pytest.mark.parametrize("text, record", [
    ("we used 2 boxes of gloves", ("GLV-NIT-L", -2)), ("we received a box of gloves", ("GLV-NIT-L", 1)),
    ("we used gloves, 2 boxes", ("GLV-NIT-L", -2)), ("we used 3 pairs of leather gloves M", ("GLV-LTH-M", -3)),
    ("we used a pair of leather gloves M", ("GLV-LTH-M", -1)), ("we used a can of paint", ("PNT-WHT", -1)),
    ("we used 1 hex key set", ("HEXK-SET", -1)), ("we used 3 fuses", ("FUS-5A", -3)),
])
def test_a_count_said_in_the_items_unit_still_logs_in_one_turn(tmp_path, text, record):
    with csv_store(tmp_path, CSV) as store:
        said, written, out = run(store, text)
        assert written == [record] and out.pending is None, said


def test_the_unit_said_back_is_not_doubled():
    assert other_unit("we used 1 hex key set", 1, ["hex key set"], "set") is None
    assert other_unit("we used 3 wd-40", 3, ["WD-40 spray"], "can") == "piece"
    assert other_unit("we used 3 fuses", 3, ["fuse", "fuses"], "pcs") is None


def test_a_set_named_with_its_unit_is_said_once(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        said, _, _ = run(store, "we used 2 hex key sets")
        assert said[0].startswith("Logged 2 hex key sets used.")


@pytest.mark.parametrize("text", ["用了三个手套", "收到两个手套", "用了三只手套", "用了三手套", "用了三个手套和两个保险丝"])
def test_mandarin_a_piece_classifier_of_an_item_counted_in_boxes_is_asked(tmp_path, text):
    with csv_store(tmp_path, ZH_CSV) as store:
        said, written, _ = run(store, text, language="zh")
        assert written == [] and "按“盒”计数" in said[0], said


def test_mandarin_boxes_and_pieces_of_the_right_units_log(tmp_path):
    assert other_unit_zh("用了3盒手套", 3, "box") is None and other_unit_zh("用了3个保险丝", 3, "pcs") is None
    with csv_store(tmp_path, ZH_CSV) as store:
        _, written, _ = run(store, "用了三盒手套和两个保险丝", language="zh")
        assert sorted(written) == [("FUS-5A", -2), ("GLV-NIT-L", -3)]


# -- 2. what is there is never a receipt --------------------------------------------------------------------

@pytest.mark.parametrize("text", ["we've got 40 fuses", "I've got 12 washers", "40 fuses are on the shelf",
                                  "there's 40 fuses", "there were 40 fuses", "we've got 40 fuses in"])
def test_what_is_there_writes_nothing(tmp_path, text):
    with csv_store(tmp_path, CSV) as store:
        said, written, _ = run(store, text)
        assert written == [], said
        assert not said[0].startswith("Logged")


@pytest.mark.parametrize("text, record", [
    ("we got 40 fuses", ("FUS-5A", 40)), ("we have used 3 fuses", ("FUS-5A", -3)), ("we've used 3 fuses", ("FUS-5A", -3)),
    ("we've just received 10 washers", ("WSH-M8", 10)), ("3 fuses are used", ("FUS-5A", -3)),
])
def test_a_change_said_with_have_still_logs(tmp_path, text, record):
    with csv_store(tmp_path, CSV) as store:
        assert run(store, text)[1] == [record]


def test_the_models_receipt_for_what_is_there_is_refused(tmp_path):
    # the model reads "we still have 40 fuses" as a receipt; its output passes the same guard
    said_in = json.dumps({"intent": "log_record", "sku": "FUS-5A", "quantity": 40, "direction": "in",
                          "location": None, "answer": None})
    with csv_store(tmp_path, CSV) as store:
        engine = ReplayEngine([said_in] * 4)
        und = Understanding(store.items(), engine)
        intent = und.understand("we still have 40 fuses")
        assert engine.requests, "the model was asked"
        assert intent.refusal == "unexplained" and intent.extra["unexplained"]["kind"] == "state"
        out = dialog.act(intent, store, "we still have 40 fuses", "t0")
        assert store.records() == [] and out.text.startswith("Nothing logged: that says how many there are")


@pytest.mark.parametrize("text", ["有四十个保险丝", "还有四十个保险丝", "保险丝有四十个"])
def test_mandarin_what_is_there_from_the_model_is_refused(tmp_path, text):
    said_in = json.dumps({"intent": "log_record", "sku": "FUS-5A", "quantity": 40, "direction": "in",
                          "location": None, "answer": None})
    with csv_store(tmp_path, ZH_CSV) as store:
        und = Understanding(store.items(), ReplayEngine([said_in] * 4), language="zh")
        intent = und.understand(text)
        out = dialog.act(intent, store, text, "t0", language="zh")
        assert store.records() == [] and not out.text.startswith("已记录"), out.text


# -- 3. a change typed in the present tense -----------------------------------------------------------------

def test_a_typed_present_tense_is_read_back_and_a_yes_logs(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        said, written, _ = run(store, "we use 3 fuses")
        assert written == [] and said == ["Did you say 3 fuses used? Say yes to log it."]
        said, written, _ = run(store, "we use 3 fuses", "yes")
        assert written == [("FUS-5A", -3)]


def test_several_parts_in_the_present_tense_are_read_back_together(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        said, written, _ = run(store, "we use 3 fuses and 2 washers", "yes")
        assert said[0] == "Log 3 fuses used and log 2 washers used? Say yes or no."
        assert sorted(written) == [("FUS-5A", -3), ("WSH-M8", -2)]


def test_heard_speech_in_the_present_tense_logs(tmp_path):
    # the recognizer drops the "d" of "we used" (the site recordings); a habit word still refuses
    with csv_store(tmp_path, CSV) as store:
        assert run(store, "we use three drill bits from drawer four", confidence=0.9)[1] == [("DRL-BIT-6", -3)]
    (tmp_path / "b").mkdir()
    with csv_store(tmp_path / "b", CSV) as store:
        assert run(store, "we usually use 3 fuses", confidence=0.9)[1] == []
        assert run(store, "we use 3 fuses every day", confidence=0.9)[1] == []


# -- 4. an answer that is neither yes nor no ------------------------------------------------------------------

@pytest.mark.parametrize("answer, kind", [("no wait", "hold"), ("wait", "hold"), ("hang on", "hold"),
                                          ("wait a second", "hold"), ("not yet", "hold"), ("等一下", "hold"),
                                          ("不对，等一下", "hold"), ("稍等", "hold"), ("好吧", "grudging"),
                                          ("行吧", "grudging"), ("随便", "grudging"), ("whatever", "grudging"),
                                          ("fine", "grudging"), ("I guess so", "grudging"),
                                          ("yes I think so", "grudging"), ("yeah probably", "grudging"),
                                          ("应该吧", "grudging")])
def test_holds_and_grudging_answers_are_neither_yes_nor_no(answer, kind):
    assert holds(answer) == kind and yes_no(answer, "zh" if ord(answer[0]) > 255 else "en") is None


@pytest.mark.parametrize("answer, yn", [("yes", True), ("okay", True), ("好", True), ("好的", True), ("是的", True),
                                        ("不对", False), ("no", False), ("好吧，是的", True), ("yes wait", None)])
def test_plain_answers_keep_their_meaning(answer, yn):
    assert yes_no(answer, "zh" if ord(answer[0]) > 255 else "en") is yn


@pytest.mark.parametrize("answers, written", [
    (["no wait"], []), (["hang on", "yes"], [("FUS-5A", 5)]), (["no wait", "no"], []), (["fine"], []),
    (["whatever", "yes"], [("FUS-5A", 5)]), (["yes wait"], []),
])
def test_a_read_back_stays_open_on_a_hold_and_writes_only_on_a_yes(tmp_path, answers, written):
    with csv_store(tmp_path, CSV) as store:
        said, got, _ = run(store, "add 5 to bin 30", *answers)
        assert got == written, said
        if answers == ["no wait"]:
            assert said[1].startswith("OK, I'll wait. Nothing is logged yet")


@pytest.mark.parametrize("answers, written", [
    (["好吧"], []), (["等一下"], []), (["不对"], []), (["等一下", "是"], [("GOG-SAF", -30)]), (["好吧", "是"], [("GOG-SAF", -30)]),
])
def test_mandarin_a_read_back_stays_open_on_a_hold_or_a_grudging_ok(tmp_path, answers, written):
    with csv_store(tmp_path, ZH_CSV) as store:
        said, got, out = run(store, "用了三十个护目镜", *answers, language="zh")
        assert got == written, said
        if answers in (["好吧"], ["等一下"]):
            assert out.pending is not None and "还没有记录" in said[-1]


# -- found by trying the fixes as a hostile user --------------------------------------------------------------

@pytest.mark.parametrize("text", ["took 3 fuses back to bin 30", "we took back 3 fuses from the van",
                                  "grabbed 3 fuses and took them back", "we took 2 goggles back"])
def test_a_taking_verb_with_back_is_asked_never_a_use(tmp_path, text):
    with csv_store(tmp_path, CSV) as store:
        said, written, _ = run(store, text)
        assert written == [] and "may be stock going back in or going out" in said[0], said


@pytest.mark.parametrize("text, record", [("we got 3 fuses back", ("FUS-5A", 3)), ("we put 3 fuses back in bin 30", ("FUS-5A", 3)),
                                          ("we took 3 fuses out of the back of bin 30", ("FUS-5A", -3))])
def test_stock_said_to_come_back_still_logs(tmp_path, text, record):
    with csv_store(tmp_path, CSV) as store:
        assert run(store, text)[1] == [record]


@pytest.mark.parametrize("text", ["刚才拿了三个保险丝回来", "借了三个保险丝", "用了三个保险丝吧", "应该用了三个保险丝", "用了三个多保险丝"])
def test_mandarin_taken_back_borrowed_or_hedged_writes_nothing(tmp_path, text):
    with csv_store(tmp_path, ZH_CSV) as store:
        said, written, _ = run(store, text, language="zh")
        assert written == [] and said[0].startswith("没有记录"), said


@pytest.mark.parametrize("text", ["we used 30 pounds of fuses", "we received 3 lbs of washers", "we used 3 fuses in november",
                                  "we used 3 fuses on december 5", "we used 3 fuses in may"])
def test_an_unknown_unit_or_a_month_writes_nothing(tmp_path, text):
    with csv_store(tmp_path, CSV) as store:
        said, written, _ = run(store, text)
        assert written == [], said


# -- 5. replies that came out garbled ---------------------------------------------------------------------

def test_replies_named_in_the_review_are_whole_sentences(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        assert run(store, "don't undo that")[0] == ["OK, nothing was undone."]
        said = run(store, "how many o-rings 1 mm")[0][0]
        assert "there are 1 millimetre" not in said and "millimetre millimetre" not in said, said
        said = run(store, "how many hex key sets are there")[0][0]
        assert "set of hex key set" not in said and "hex key sets" in said, said
