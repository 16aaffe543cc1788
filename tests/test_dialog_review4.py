"""A hostile reviewer's wrong records and false replies, closed: cancel words after a completed
log say it stays logged (never "nothing was logged"). Real SQLite store, real understanding
(grammar, no LLM), real dialog; English and Mandarin."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from edge.stages import dialog
from edge.stages.nlu.understand import Understanding
from edge.stock.store import Store
from tests.helpers import csv_store

CSV = """sku,item,location,quantity,unit,aliases,reorder_level
FUS-5A,fuse,bin 30,60,pcs,fuses,10
DRL-BIT-6,drill bit,drawer 4,25,pcs,drill bits,5
GLV-NIT-L,nitrile gloves,shelf A,12,box,gloves,5
"""
ZH_CSV = """sku,item,location,quantity,unit,aliases,reorder_level
FUS-5A,保险丝,30号料箱,60,个,,10
DRL-BIT-6,钻头,4号抽屉,25,个,,5
"""


def turns(store: Store, language: str, *texts: str) -> list[str]:
    nlu = Understanding(store.items(), language=language)
    return [dialog.act(nlu.understand(t), store, t, f"t{k}", language=language).text for k, t in enumerate(texts)]


@pytest.mark.parametrize("words", ["forget it", "never mind", "cancel", "oh never mind", "forget about it", "nevermind"])
def test_cancel_words_after_a_log_say_it_stays_logged(tmp_path, words):
    with csv_store(tmp_path, CSV) as store:
        said = turns(store, "en", "we used 3 fuses", words)
        assert [(r.sku, r.delta) for r in store.records()] == [("FUS-5A", -3)]
        assert "nothing was logged" not in said[1].lower() and "cancelled" not in said[1].lower()
        assert said[1] == 'That was already logged: 3 fuses used. It stays logged; say "undo that" to take it back.'


def test_cancel_words_after_a_receipt_name_the_receipt(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        said = turns(store, "en", "we received 2 drill bits", "forget it")
        assert said[1].startswith("That was already logged: 2 drill bits received.")


def test_cancel_words_with_nothing_before_say_nothing_was_logged_now(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        assert turns(store, "en", "forget it") == ["OK, nothing was logged just now."]
        assert store.records() == []


def test_cancel_words_after_an_undo_claim_nothing_stays(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        said = turns(store, "en", "we used 3 fuses", "undo that", "never mind")
        assert said[2] == "OK, nothing was logged just now." and store.get("FUS-5A").quantity == 60


def test_an_old_record_is_not_taken_for_the_command_before(tmp_path):
    now = [datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)]
    (tmp_path / "inv.csv").write_text(CSV, encoding="utf-8")
    with Store(tmp_path / "e.db", clock=lambda: now[0]) as store:
        store.import_csv(tmp_path / "inv.csv")
        turns(store, "en", "we used 3 fuses")
        now[0] += timedelta(hours=2)
        assert turns(store, "en", "forget it") == ["OK, nothing was logged just now."]


@pytest.mark.parametrize("words", ["算了", "那算了吧", "算了吧"])
def test_mandarin_cancel_words_after_a_log_say_it_stays_logged(tmp_path, words):
    with csv_store(tmp_path, ZH_CSV) as store:
        said = turns(store, "zh", "用了三个保险丝", words)
        assert [(r.sku, r.delta) for r in store.records()] == [("FUS-5A", -3)]
        assert said[1] == "上一条已经记录了：用了3个保险丝。要撤回的话，请说“撤销”。"
        assert "没有记录" not in said[1]


def test_mandarin_cancel_with_nothing_before(tmp_path):
    with csv_store(tmp_path, ZH_CSV) as store:
        assert turns(store, "zh", "算了") == ["好的，这次没有记录。"]


@pytest.mark.parametrize("text", ["用了三个保险丝，算了", "用了三个保险丝，开玩笑的", "用了三个保险丝 算了吧", "收到五个钻头，当我没说",
                                  "拿了两个钻头，开个玩笑", "用了三个保险丝。骗你的"])
def test_mandarin_words_taking_the_change_back_write_nothing(tmp_path, text):
    with csv_store(tmp_path, ZH_CSV) as store:
        assert turns(store, "zh", text) == ["好的，你收回了，没有记录。"]
        assert store.records() == []


@pytest.mark.parametrize("text", ["we used 3 fuses, nah forget it", "we used 3 fuses, just kidding",
                                  "we received 2 drill bits, scratch that"])
def test_english_words_taking_the_change_back_say_so_not_an_earlier_record(tmp_path, text):
    with csv_store(tmp_path, CSV) as store:
        said = turns(store, "en", "we used 3 fuses", text)
        assert said[1] == "OK, taken back. Nothing was logged." and len(store.records()) == 1


@pytest.mark.parametrize("text", ["we used three fuses three fuses", "we used 3 fuses, 3 fuses", "we used 3 fuses and 3 fuses",
                                  "we received 3 fuses 3 fuses", "we used 2 drill bits, 2 drill bits"])
def test_an_identical_count_said_twice_is_asked_not_added(tmp_path, text):
    with csv_store(tmp_path, CSV) as store:
        nlu = Understanding(store.items())
        out = dialog.act(nlu.understand(text), store, text, "t1")
        assert out.text == "Please say one number: how many?" and store.records() == []
        done = dialog.follow_up(out.pending, "three", store, "t2")
        assert [abs(r.delta) for r in store.records()] == [3] and done.record is not None


@pytest.mark.parametrize("text, delta", [("we used 3 fuses and 3 more fuses", -6), ("we used 3 fuses and another 3 fuses", -6),
                                         ("we used 2 fuses and 3 fuses", -5)])
def test_another_lot_of_the_same_count_is_still_added(tmp_path, text, delta):
    with csv_store(tmp_path, CSV) as store:
        turns(store, "en", text)
        assert [r.delta for r in store.records()] == [delta]


@pytest.mark.parametrize("text", ["用了三三个保险丝", "用了两两个钻头", "用了三个保险丝和三个保险丝", "收到五五个保险丝"])
def test_a_mandarin_numeral_or_count_said_twice_is_asked(tmp_path, text):
    with csv_store(tmp_path, ZH_CSV) as store:
        nlu = Understanding(store.items(), language="zh")
        out = dialog.act(nlu.understand(text), store, text, "t1", language="zh")
        assert out.text == "请只说一个数：多少？" and store.records() == []
        dialog.follow_up(out.pending, "两个", store, "t2", "zh")
        assert [abs(r.delta) for r in store.records()] == [2]


def test_thirty_three_in_mandarin_is_still_33(tmp_path):
    with csv_store(tmp_path, ZH_CSV) as store:
        turns(store, "zh", "用了三十三个保险丝")
        assert [r.delta for r in store.records()] == [-33]


@pytest.mark.parametrize("text, words", [
    ("we returned 3 fuses to the supplier", "returned 3 fuses to the supplier"),
    ("we returned 3 fuses back to the vendor", "returned 3 fuses back to the vendor"),
])
def test_stock_returned_to_a_supplier_is_never_a_receipt(tmp_path, text, words):
    with csv_store(tmp_path, CSV) as store:
        said = turns(store, "en", text)
        assert store.records() == [] and said[0].startswith(f"Nothing logged: \u201c{words}\u201d takes stock out")


@pytest.mark.parametrize("text", ["the delivery of 10 fuses is late", "the shipment of 10 fuses hasn't arrived",
                                  "we used to use 3 fuses", "we used to take 2 drill bits",
                                  "we received 10 fuses, the delivery is late"])
def test_a_change_not_said_as_done_writes_nothing_and_says_why(tmp_path, text):
    with csv_store(tmp_path, CSV) as store:
        said = turns(store, "en", text)
        assert store.records() == [] and "does not say a change that happened" in said[0]


@pytest.mark.parametrize("text, delta", [("we used 3 fuses", -3), ("use 3 fuses", -3), ("we returned 3 fuses", 3),
                                         ("the delivery of 10 fuses arrived", 10), ("we received 10 fuses", 10)])
def test_neighbours_of_the_not_done_phrases_still_log(tmp_path, text, delta):
    with csv_store(tmp_path, CSV) as store:
        turns(store, "en", text)
        assert [r.delta for r in store.records()] == [delta]


def test_we_use_heard_logs_and_typed_is_read_back(tmp_path):
    # recognition drops the "d" of "we used" (tests/data/sessions_site): heard, it logs; typed, a habit
    # or a change? read back (tests/test_guard_round5.py)
    with csv_store(tmp_path, CSV) as store:
        nlu = Understanding(store.items())
        out = dialog.act(nlu.understand("We use 3 fuses"), store, "We use 3 fuses", "t0")
        assert store.records() == [] and out.text == "Did you say 3 fuses used? Say yes to log it."
        dialog.act(nlu.understand("We use 3 fuses", confidence=0.9), store, "We use 3 fuses", "t1")
        assert [r.delta for r in store.records()] == [-3]


@pytest.mark.parametrize("text", ["退回三个保险丝给供应商", "退回两个钻头", "从小王那拿了三个保险丝", "从老李那里领了两个钻头"])
def test_mandarin_returned_or_taken_from_a_person_is_asked_not_written(tmp_path, text):
    with csv_store(tmp_path, ZH_CSV) as store:
        said = turns(store, "zh", text)
        assert store.records() == [] and said[0].startswith("没有记录：") and "说不清是出库还是入库" in said[0]


@pytest.mark.parametrize("text, language", [
    ("we sent back 2 drill bits to the manufacturer", "en"), ("the order of 10 fuses is delayed", "en"),
    ("we normally use 3 fuses", "en"), ("we often take 3 fuses", "en"), ("we usually use 3 fuses", "en"),
    ("I always use 3 fuses", "en"), ("they often use 2 drill bits", "en"), ("I wish we had used 3 fuses", "en"), ("I doubt we used 3 fuses", "en"),
    ("tell me whether we used 3 fuses", "en"), ("let's use 3 fuses", "en"), ("退还两个钻头给厂家", "zh"),
    ("把三个保险丝退给供应商", "zh")])
def test_other_wordings_of_those_write_nothing(tmp_path, text, language):
    with csv_store(tmp_path, ZH_CSV if language == "zh" else CSV) as store:
        said = turns(store, language, text)
        assert store.records() == [] and not said[0].startswith(("Logged", "已记录")), said


@pytest.mark.parametrize("answer", ["yes from bin 12", "yes, bin 12", "yeah from bin 12 please"])
def test_a_yes_naming_another_place_than_the_one_offered_writes_nothing(tmp_path, answer):
    with csv_store(tmp_path, CSV) as store:
        nlu = Understanding(store.items())
        out = dialog.act(nlu.understand("we used 3 fuses from bin 12"), store, "we used 3 fuses from bin 12", "t1")
        assert out.text.endswith("Bin 30, then? Say yes or no.")
        done = dialog.follow_up(out.pending, answer, store, "t2")
        assert store.records() == [] and "nothing was logged" in done.text


@pytest.mark.parametrize("answer", ["yes", "yes bin 30", "yes, from bin 30"])
def test_a_yes_naming_the_place_offered_still_logs(tmp_path, answer):
    with csv_store(tmp_path, CSV) as store:
        nlu = Understanding(store.items())
        out = dialog.act(nlu.understand("we used 3 fuses from bin 12"), store, "we used 3 fuses from bin 12", "t1")
        dialog.follow_up(out.pending, answer, store, "t2")
        assert [(r.sku, r.delta, r.location) for r in store.records()] == [("FUS-5A", -3, "bin 30")]


@pytest.mark.parametrize("text", ["we moved 3 fuses and 2 drill bits to shelf A", "moved 5 fuses from bin 30 to drawer 4 and used 2",
                                  "move 3 fuses and 4 drill bits to shelf B"])
def test_a_move_saying_two_counts_writes_nothing_even_after_yes(tmp_path, text):
    with csv_store(tmp_path, CSV) as store:
        said = turns(store, "en", text, "yes")
        assert store.records() == [] and said[0] == "Nothing logged: I heard 2 counts in one change. Please say each change on its own."


def test_a_move_of_one_count_still_asks_for_the_new_place(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        nlu = Understanding(store.items())
        out = dialog.act(nlu.understand("move 3 fuses to shelf A"), store, "move 3 fuses to shelf A", "t1")
        dialog.follow_up(out.pending, "yes", store, "t2")
        assert [(r.sku, r.delta) for r in store.records()] == [("FUS-5A", -3), ("FUS-5A", 3)]


def zh_answer(tmp_path, command: str, answer: str):
    csv = ZH_CSV + "GLV-NIT-L,丁腈手套,A号货架,12,box,手套,5\n"
    with csv_store(tmp_path, csv) as store:
        nlu = Understanding(store.items(), language="zh")
        out = dialog.act(nlu.understand(command), store, command, "t1", language="zh")
        assert out.pending is not None, out.text
        done = dialog.follow_up(out.pending, answer, store, "t2", "zh")
        return done.text, [(r.sku, r.delta) for r in store.records()]


@pytest.mark.parametrize("command, answer", [
    ("用了三四个保险丝", "三个钻头"), ("用了三四个保险丝", "大概四个"), ("用了三四个保险丝", "十几个"),
    ("用了三四个保险丝", "四个左右"), ("用了三四个保险丝", "四盒"), ("用了三四个保险丝", "二十来个"),
    ("从十二号箱拿了三个保险丝", "是，四个"), ("从十二号箱拿了三个保险丝", "对，五个"), ("用了三双手套", "一盒半"),
    ("用了三四个保险丝", "可能四个")])
def test_a_mandarin_answer_saying_more_than_asked_writes_nothing(tmp_path, command, answer):
    text, written = zh_answer(tmp_path, command, answer)
    assert written == [] and text == "这个回答超出了我的问题，所以没有记录。请把整条命令再说一遍。"


@pytest.mark.parametrize("command, answer, written", [
    ("用了三四个保险丝", "四个", [("FUS-5A", -4)]), ("用了三四个保险丝", "四", [("FUS-5A", -4)]),
    ("从十二号箱拿了三个保险丝", "是", [("FUS-5A", -3)]), ("从十二号箱拿了三个保险丝", "是，三个", [("FUS-5A", -3)]),
    ("用了三双手套", "三盒", [("GLV-NIT-L", -3)]), ("用了三四个保险丝", "四个保险丝", [("FUS-5A", -4)])])
def test_a_plain_mandarin_answer_still_logs(tmp_path, command, answer, written):
    assert zh_answer(tmp_path, command, answer)[1] == written


@pytest.mark.parametrize("text, start", [
    ("we used 3 fuses instead of drill bits", "Nothing logged: you corrected yourself (\u201cinstead of\u201d)"),
    ("we used 3 drill bits rather than fuses", "Nothing logged: you corrected yourself (\u201crather than\u201d)"),
    ("we used almost 3 fuses", "Nothing logged: you said \u201calmost\u201d"),
    ("we used nearly 3 fuses", "Nothing logged: you said \u201cnearly\u201d"),
    ("we used the last 3 fuses", "Nothing logged: \u201cthe last 3\u201d would leave none"),
    ("we used 3 fuses today in total", "Nothing logged: \u201cin total\u201d may include changes already logged"),
    ("we used 3 fuses so far", "Nothing logged: \u201cso far\u201d may include changes already logged"),
    ("we used fuses and drill bits, 3 each", "Nothing logged: \u201ceach\u201d is not how many"),
    ("we used a third of the fuses", "Nothing logged: \u201ca 3 of\u201d is not how many"),
    ("we used two thirds of the fuses", "Nothing logged: \u201c2 thirds of\u201d is not how many"),
])
def test_a_number_that_is_no_plain_count_writes_nothing(tmp_path, text, start):
    with csv_store(tmp_path, CSV) as store:
        said = turns(store, "en", text)
        assert store.records() == [] and said[0].startswith(start), said


@pytest.mark.parametrize("text", ["we used 3 fuses for the pump", "we used 3 fuses on the last job", "we used 3 fuses from bin 30"])
def test_neighbours_of_the_not_plain_words_still_log(tmp_path, text):
    with csv_store(tmp_path, CSV) as store:
        turns(store, "en", text)
        assert [r.delta for r in store.records()] == [-3]


@pytest.mark.parametrize("text", ["用了三分之一的垫圈", "我们三个人用了三个保险丝", "每人用了三个保险丝", "用了二十来个保险丝",
                                  "今天总共用了三个保险丝", "保险丝和钻头各用了三个", "一共收到五个钻头"])
def test_a_mandarin_number_that_is_no_plain_count_writes_nothing(tmp_path, text):
    with csv_store(tmp_path, ZH_CSV) as store:
        said = turns(store, "zh", text)
        assert store.records() == [] and said[0].startswith("没有记录"), said


THREAD_CSV = """sku,item,location,quantity,unit,aliases,reorder_level
BLT-M8-30,M8 bolt,bin 12,140,pcs,m8 bolts;M8螺栓;螺栓,10
WSH-M8,washer,bin 2023,500,pcs,washers;垫圈,10
"""


@pytest.mark.parametrize("text, language", [("用了三个M10螺栓", "zh"), ("用了三个m10螺栓", "zh"), ("收到两个M6垫圈", "zh"),
                                            ("we used 2 M6 washers", "en"), ("we received 4 M10 washers", "en")])
def test_a_thread_the_one_item_does_not_have_is_asked(tmp_path, text, language):
    with csv_store(tmp_path, THREAD_CSV) as store:
        said = turns(store, language, text)
        assert store.records() == [] and said[0].startswith(("没有记录", "Nothing logged", "I don't have")), said


@pytest.mark.parametrize("text, language, sku", [("用了三个M8螺栓", "zh", "BLT-M8-30"), ("用了三个垫圈", "zh", "WSH-M8"),
                                                 ("we used 3 M8 washers", "en", "WSH-M8"), ("we used 3 washers", "en", "WSH-M8")])
def test_the_thread_the_item_has_still_logs(tmp_path, text, language, sku):
    with csv_store(tmp_path, THREAD_CSV) as store:
        turns(store, language, text)
        assert [(r.sku, r.delta) for r in store.records()] == [(sku, -3)]


VARIANT_CSV = """sku,item,location,quantity,unit,aliases,reorder_level
BLT-M8-30,M8 bolt,bin 12,140,pcs,m8 bolts,10
GLV-NIT-L,nitrile gloves,shelf A,12,box,gloves,5
GLV-XL,nitrile gloves extra large,shelf B,12,box,,5
"""


@pytest.mark.parametrize("text", ["we used 3 M8 x 40 bolts", "we used 3 M8x40 bolts", "we used small gloves, 2 boxes",
                                  "we used 2 boxes of medium gloves"])
def test_a_length_or_garment_size_the_item_does_not_have_writes_nothing(tmp_path, text):
    with csv_store(tmp_path, VARIANT_CSV) as store:
        said = turns(store, "en", text)
        assert store.records() == [] and not said[0].startswith("Logged"), said


@pytest.mark.parametrize("text, sku", [("we used 3 M8 x 30 bolts", "BLT-M8-30"), ("we used 3 M8 bolts", "BLT-M8-30"),
                                       ("we used 3 boxes of large gloves", "GLV-NIT-L"),
                                       ("we used 3 boxes of extra large gloves", "GLV-XL")])
def test_the_length_or_garment_size_the_item_has_still_logs(tmp_path, text, sku):
    with csv_store(tmp_path, VARIANT_CSV) as store:
        turns(store, "en", text)
        assert [(r.sku, r.delta) for r in store.records()] == [(sku, -3)]
