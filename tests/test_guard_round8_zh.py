"""Round 8 of "never a wrong record", in Mandarin: a written negation (未收到), a past day (昨晚, 两天前,
周一), a count for each (每台机器), a question without ？ (是否, 怎么, …不), what is still there after a
change (还有五十七个), another party's receipt (客户收到), a log that says no direction (登记五个钻头), a
count in cases or lots (两箱手套, 五批钻头), another kind of the item (三盒乳胶手套) and a change heard from
a named person (老王说) — each with the correct neighbours that must still log in one turn. Real SQLite
store, real understanding (grammar, no LLM), real dialog."""
from __future__ import annotations

import pytest

from edge.stages.nlu.guards_zh import guard_zh
from edge.stages.nlu.leftovers import kind_not_had_zh, not_ours_zh
from edge.stages.nlu.numbers_zh import normalize_numbers_zh
from tests.helpers import csv_store
from tests.test_guard_round5 import ZH_CSV, run

#: the Mandarin inventory of round 5, with drill bits, washers, cable ties and M8 bolts
CSV = ZH_CSV + """DRL-BIT-6,drill bit,drawer 4,25,pcs,drill bits;钻头
WSH-M8,washer,bin 2023,500,pcs,washers;垫圈
TIE-CBL-200,cable ties,drawer 7,300,pcs,cable tie;扎带
BLT-M8-30,M8 bolt,bin 12,140,pcs,M8螺栓;M8螺丝
"""


def _said(tmp_path, text, *answers):
    with csv_store(tmp_path, CSV) as store:
        return run(store, text, *answers, language="zh")


def _refused(tmp_path, text, words) -> list[str]:
    """The replies to ``text``, asserted to write nothing, ask nothing and say ``words``."""
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is None and said[0].startswith("没有记录") and words in said[0], said
    return said


# -- 1. a written negation ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, words", [
    ("未收到五个钻头", "没有收到5个钻头"), ("并未收到五个钻头", "没有收到5个钻头"), ("尚未收到五个钻头", "没有收到5个钻头"),
    ("还未收到五个钻头", "没有收到5个钻头"), ("暂未收到五个钻头", "没有收到5个钻头"), ("未用三个保险丝", "没有用3个保险丝")])
def test_a_written_negation_writes_nothing(tmp_path, text, words):
    _refused(tmp_path, text, words)


def test_wei_is_read_as_a_negation_by_the_guards():
    assert guard_zh("并未收到五个钻头").refusal == "negated" and guard_zh("收到五个钻头").refusal is None


# -- 2. a past day --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, words", [
    ("昨晚用了三个保险丝", "昨晚"), ("上个礼拜收到五个钻头", "上个礼拜"), ("上个星期用了三个保险丝", "上个星期"),
    ("前两天用了三个保险丝", "前两天"), ("两天前用了三个保险丝", "两天前"), ("一周前收到五个钻头", "一周前"),
    ("礼拜一收到五个钻头", "礼拜一"), ("周一用了三个保险丝", "周一"), ("那天用了三个保险丝", "那天"),
    ("上回收到五个钻头", "上回"), ("半个月前收到五个钻头", "半个月前"), ("周末用了三个保险丝", "周末"),
    ("这两天用了三个保险丝", "这两天")])
def test_a_past_day_writes_nothing_and_says_the_day(tmp_path, text, words):
    _refused(tmp_path, text, f"“{words}”")


@pytest.mark.parametrize("text", ["今天用了三个保险丝", "上午用了三个保险丝", "今早用了三个保险丝", "刚才用了三个保险丝"])
def test_today_still_logs(tmp_path, text):
    said, written, out = _said(tmp_path, text)
    assert written == [("FUS-5A", -3)] and out.pending is None, said


# -- 3. a count for each, a question without ？ ---------------------------------------------------------------

@pytest.mark.parametrize("text, words", [
    ("每个用了三个保险丝", "每个"), ("每台机器用了三个保险丝", "每台"), ("每箱用了三个保险丝", "每箱"),
    ("每个工位用了三个保险丝", "每个"), ("每辆车用了三个保险丝", "每辆")])
def test_a_count_for_each_is_no_count_of_the_change(tmp_path, text, words):
    _refused(tmp_path, text, f"“{words}”")


@pytest.mark.parametrize("text, words", [
    ("是否用了三个保险丝", "是否"), ("难道收到五个钻头了", "难道"), ("怎么用了三个保险丝", "怎么"), ("咋用了三个保险丝", "咋"),
    ("哪里用了三个保险丝", "哪里"), ("何时用了三个保险丝", "何时"), ("干嘛用了三个保险丝", "干嘛"), ("用了三个保险丝不", "“不”"),
    ("收到五个钻头否", "“否”"), ("用了三个保险丝？", "“用了三个保险丝？”")])
def test_a_question_said_without_a_question_mark_writes_nothing(tmp_path, text, words):
    said = _refused(tmp_path, text, words)
    assert "“”" not in said[0] and "提问" in said[0], said


# -- 4. what is still there, another party's receipt ------------------------------------------------------------

@pytest.mark.parametrize("text", ["用了三个保险丝，还有三个保险丝", "用了三个保险丝，还有五十七个保险丝", "收到五个钻头还有五个钻头"])
def test_what_is_still_there_after_a_change_is_never_added_to_it(tmp_path, text):
    _refused(tmp_path, text, "现在有多少")


@pytest.mark.parametrize("text, records", [
    ("用了三个保险丝还有两个垫圈", [("FUS-5A", -3), ("WSH-M8", -2)]), ("用了三个保险丝和两个保险丝", [("FUS-5A", -5)])])
def test_another_item_after_haiyou_or_the_same_item_after_he_still_logs(tmp_path, text, records):
    said, written, out = _said(tmp_path, text)
    assert written == records and out.pending is None, said


@pytest.mark.parametrize("text", ["客户收到五个钻头", "供应商收到三个保险丝", "隔壁收到了五个钻头", "他们那边收到了五个钻头",
                                  "对方收到五个钻头"])
def test_another_partys_receipt_writes_nothing(tmp_path, text):
    _refused(tmp_path, text, "别人的库存")


def test_a_receipt_is_anothers_only_when_said_by_them_not_from_them():
    assert not_ours_zh("客户收到5个钻头") == ("someones", "客户收到")
    assert not_ours_zh("从老王那收到3个保险丝") is None and not_ours_zh("我们那边收到5个钻头") is None


@pytest.mark.parametrize("text, record", [("从老王那收到三个保险丝", ("FUS-5A", 3)), ("我们那边收到五个钻头", ("DRL-BIT-6", 5)),
                                          ("老王收到五个钻头", ("DRL-BIT-6", 5))])
def test_a_receipt_from_someone_or_on_our_side_still_logs(tmp_path, text, record):
    said, written, out = _said(tmp_path, text)
    assert written == [record] and out.pending is None, said


# -- 5. a log without a direction; a count in cases or lots ---------------------------------------------------

@pytest.mark.parametrize("text, answer, record", [("登记五个钻头", "收到", ("DRL-BIT-6", 5)),
                                                  ("记录三个保险丝", "用了", ("FUS-5A", -3)),
                                                  ("记一下五个钻头", "收到", ("DRL-BIT-6", 5))])
def test_a_log_that_says_no_direction_is_asked_used_or_received(tmp_path, text, answer, record):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is not None and "用了还是收到" in said[0], said
    (tmp_path / "answered").mkdir()
    said, written, _ = _said(tmp_path / "answered", text, answer)
    assert written == [record], said


@pytest.mark.parametrize("text, record", [("登记用了三个保险丝", ("FUS-5A", -3)), ("记录收到五个钻头", ("DRL-BIT-6", 5)),
                                          ("帮我记一下，用了三个保险丝", ("FUS-5A", -3))])
def test_a_log_with_its_direction_still_logs_in_one_turn(tmp_path, text, record):
    said, written, out = _said(tmp_path, text)
    assert written == [record] and out.pending is None, said


@pytest.mark.parametrize("text, question", [
    ("用了两箱手套", "按“盒”计数"), ("收到三箱手套", "按“盒”计数"), ("手套用了两箱", "按“盒”计数"),
    ("收到五批钻头", "按“个”计数"), ("收到三捆扎带", "按“个”计数"), ("收到三串扎带", "按“个”计数")])
def test_a_count_in_cases_or_lots_is_asked_in_the_items_unit(tmp_path, text, question):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is not None and question in said[0], said


@pytest.mark.parametrize("text, record", [("用了两盒手套", ("GLV-NIT-L", -2)), ("用了三根扎带", ("TIE-CBL-200", -3)),
                                          ("收到一打保险丝", ("FUS-5A", 12))])
def test_a_count_in_the_items_unit_or_a_piece_classifier_still_logs(tmp_path, text, record):
    said, written, out = _said(tmp_path, text)
    assert written == [record] and out.pending is None, said


# -- 6. another kind of the item; a change heard from someone ------------------------------------------------

@pytest.mark.parametrize("text, words", [("用了三盒乳胶手套", "乳胶手套"), ("用了三个弹簧垫圈", "弹簧垫圈"),
                                         ("用了三盒M号手套", "M号手套"), ("用了三个不锈钢垫圈", "不锈钢垫圈"),
                                         ("用了三盒棉手套", "棉手套")])
def test_another_kind_of_the_item_writes_nothing(tmp_path, text, words):
    _refused(tmp_path, text, f"“{words}”")


def test_another_kind_asked_a_count_for_a_range_is_still_never_written(tmp_path):
    said, written, _ = _said(tmp_path, "用了三四盒乳胶手套", "三盒")
    assert written == [] and "乳胶手套" in said[-1], said


@pytest.mark.parametrize("text, record", [("用了三个新钻头", ("DRL-BIT-6", -3)), ("用了三个这种钻头", ("DRL-BIT-6", -3)),
                                          ("用了三个坏掉的钻头", ("DRL-BIT-6", -3)), ("收到五个新到的钻头", ("DRL-BIT-6", 5)),
                                          ("用了三个30号箱的保险丝", ("FUS-5A", -3)), ("用了三个m8的螺栓", ("BLT-M8-30", -3)),
                                          ("用了三个M8螺栓", ("BLT-M8-30", -3))])
def test_a_word_that_leaves_the_item_the_same_still_logs(tmp_path, text, record):
    said, written, out = _said(tmp_path, text)
    assert written == [record] and out.pending is None, said


def test_the_kind_is_judged_between_the_count_and_the_name_only():
    names = ["nitrile gloves", "手套"]
    assert kind_not_had_zh("用了3盒乳胶手套", names) == "乳胶手套"
    assert kind_not_had_zh("用了30个左右的手套", names) is None  # a bound: the guards ask
    assert kind_not_had_zh("用了3个不到的手套", names) is None
    assert kind_not_had_zh("乳胶的不要，用了3盒手套", names) is None


@pytest.mark.parametrize("text", ["老王说用了三个保险丝", "听老王说用了三个保险丝", "老王告诉我用了三个保险丝", "夜班的说用了三个保险丝",
                                  "据老王讲用了三个保险丝", "用了三个保险丝，老王说的"])
def test_a_change_heard_from_a_named_person_is_read_back_first(tmp_path, text):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is not None and "听别人说" in said[0], said
    (tmp_path / "yes").mkdir()
    said, written, _ = _said(tmp_path / "yes", text, "是")
    assert written == [("FUS-5A", -3)], said


@pytest.mark.parametrize("text", ["老王用了三个保险丝", "老实说，用了三个保险丝", "怎么说呢，用了三个保险丝"])
def test_a_change_said_of_a_colleague_or_honestly_still_logs(tmp_path, text):
    said, written, out = _said(tmp_path, text)
    assert written == [("FUS-5A", -3)] and out.pending is None, said


# -- found by trying: needless refusals --------------------------------------------------------------------------

@pytest.mark.parametrize("text, record", [("用了俩保险丝", ("FUS-5A", -2)), ("收到仨垫圈", ("WSH-M8", 3)),
                                          ("用完了三个钻头", ("DRL-BIT-6", -3)), ("三个钻头用完了", ("DRL-BIT-6", -3)),
                                          ("用坏了两个钻头", ("DRL-BIT-6", -2))])
def test_liang_ge_san_ge_and_used_up_log_in_one_turn(tmp_path, text, record):
    said, written, out = _said(tmp_path, text)
    assert written == [record] and out.pending is None, said


def test_the_two_or_three_of_us_is_no_count():
    assert normalize_numbers_zh("我们俩用了三个保险丝") == "我们俩用了3个保险丝"
    assert normalize_numbers_zh("咱仨收到五个钻头") == "咱仨收到5个钻头"
