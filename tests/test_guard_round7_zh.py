"""Round 7 of "never a wrong record", in Mandarin: a count said as a bound or an approximation is
asked, never written as the number; what almost happened, all but the count, the item's name glued
to another noun, someone else's or borrowed stock, an open list and a move write nothing and say
why; ordinary fillers (等等，…, 对了, 帮我记一下) still log in one turn. Each class with the correct
neighbours. Real SQLite store, real understanding (grammar, no LLM), real dialog."""
from __future__ import annotations

import pytest

from edge.stages.nlu.guards_zh import bound_zh, guard_zh
from edge.stages.nlu.leftovers import not_ours_zh, other_thing_zh
from edge.stages.nlu.numbers_zh import normalize_numbers_zh
from tests.helpers import csv_store
from tests.test_guard_round5 import ZH_CSV, run

#: the Mandarin inventory of round 5, with drill bits, washers and a second bin for the moves
CSV = ZH_CSV + """DRL-BIT-6,drill bit,drawer 4,25,pcs,drill bits;钻头
WSH-M8,washer,bin 2023,500,pcs,washers;垫圈
HEXK-SET,hex key set,bin 31,4,set,
"""


def _said(tmp_path, text, *answers):
    with csv_store(tmp_path, CSV) as store:
        return run(store, text, *answers, language="zh")


# -- 1. a bound or an approximation of the count --------------------------------------------------------

@pytest.mark.parametrize("text", [
    "用了将近三个保险丝", "将近用了三个垫圈", "用了不到三个保险丝", "用了三个以上保险丝", "用了三个保险丝以上",
    "至少用了三个保险丝", "用了至少两个钻头", "最多用了五个垫圈", "用了超过三个保险丝", "用了不止三个保险丝",
    "用了少于四个钻头", "收到不少于五个垫圈", "用了三个左右保险丝", "用了三个保险丝左右", "用了大约三个保险丝",
    "用了快三个保险丝", "几乎用了三个保险丝", "起码收到十个钻头", "用了接近三个保险丝", "用了顶多三个保险丝",
    "用了一两个保险丝", "用了三五个垫圈", "拿了三两个钻头"])
def test_a_bound_or_an_approximation_is_asked_never_written_as_the_number(tmp_path, text):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is not None and said == ["请只说一个数：多少？"], said


def test_one_point_five_is_read_as_a_decimal_never_as_five(tmp_path):
    assert normalize_numbers_zh("收到一点五个保险丝") == "收到1点5个保险丝"
    assert normalize_numbers_zh("差一点用了") == "差一点用了" and normalize_numbers_zh("一点钟") == "一点钟"
    said, written, out = _said(tmp_path, "收到一点五个保险丝")
    assert written == [] and out.pending is not None, said


def test_numerals_side_by_side_are_a_range_and_a_number_said_whole_is_not():
    assert guard_zh("用了一两个保险丝").range == (1.0, 2.0) and guard_zh("用了三五个垫圈").range == (3.0, 5.0)
    assert guard_zh("用了三十三个保险丝").range is None and guard_zh("用了十二个垫圈").range is None
    assert guard_zh("用了三个保险丝以上").text == "用了3个保险丝"  # the bound dropped, the name kept


@pytest.mark.parametrize("answer, record", [("三个", [("FUS-5A", -3)]), ("至少三个", []), ("一两个", []),
                                            ("三个左右", []), ("不止三个", [])])
def test_the_count_asked_after_a_bound_logs_only_when_it_is_one_number(tmp_path, answer, record):
    said, written, _ = _said(tmp_path, "用了将近三个保险丝", answer)
    assert written == record, said


@pytest.mark.parametrize("text", ["差点用了三个保险丝", "差一点用了两个钻头", "险些用了三个保险丝", "差点儿拿了五个垫圈"])
def test_what_almost_happened_writes_nothing_and_says_so(tmp_path, text):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is None and "不是真的发生的变动" in said[0], said


@pytest.mark.parametrize("text", ["最近用了三个保险丝", "差点儿忘了记，用了三个保险丝", "用了三十三个保险丝"])
def test_words_near_a_bound_still_log(tmp_path, text):
    said, written, out = _said(tmp_path, text)
    assert written == [("FUS-5A", -33 if "三十三" in text else -3)] and out.pending is None, said
    assert bound_zh(text) is None


# -- 2. all but the count, or what is left ---------------------------------------------------------------

@pytest.mark.parametrize("text", ["除了三个保险丝都用了", "保险丝除了三个以外全用了", "用了除三个以外的保险丝",
                                  "垫圈除了五个之外都用了", "用了保险丝，只剩三个", "钻头用了，就剩两个", "除了三个都用了",
                                  "其余的都用了，留了三个保险丝"])
def test_all_but_the_count_is_never_written_as_the_count(tmp_path, text):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is None and said[0].startswith("没有记录"), said


def test_all_of_the_count_used_still_logs(tmp_path):
    said, written, _ = _said(tmp_path, "三个保险丝都用了")
    assert written == [("FUS-5A", -3)], said


# -- 3. the item's name glued to another noun --------------------------------------------------------------

@pytest.mark.parametrize("text, words", [
    ("用了三个保险丝盒", "保险丝盒"), ("用了三个保险丝盒子", "保险丝盒"), ("收到两个钻头盒", "钻头盒"),
    ("用了四个护目镜盒", "护目镜盒"), ("保险丝盒用了三个", "保险丝盒"), ("用了三个保险丝盒里的保险丝", "保险丝盒"),
    ("用了一个钻头套", "钻头套"), ("用了三四个保险丝盒", "保险丝盒")])
def test_a_name_glued_to_another_noun_is_another_thing(tmp_path, text, words):
    said, written, out = _said(tmp_path, text, "四个")
    assert written == [] and said[0].startswith("没有记录") and f"“{words}”" in said[0], said


def test_the_name_said_on_its_own_beside_the_other_thing_is_the_item(tmp_path):
    assert other_thing_zh("用了保险丝盒里的3个保险丝", ["fuse", "保险丝"]) is None
    assert other_thing_zh("用了3个保险丝盒里的保险丝", ["fuse", "保险丝"]) == "保险丝盒"
    said, written, _ = _said(tmp_path, "用了保险丝盒里的三个保险丝")
    assert written == [("FUS-5A", -3)], said


# -- 4. someone else's stock, borrowed or lent -------------------------------------------------------------

@pytest.mark.parametrize("text, kind", [
    ("用了老李的三个保险丝", "别人的库存"), ("用了小王的两个钻头", "别人的库存"), ("老李的保险丝用了三个", "别人的库存"),
    ("用了别人的三个垫圈", "别人的库存"), ("用了隔壁车间的三个保险丝", "别人的库存"), ("用了二号站的三个保险丝", "别人的库存"),
    ("用了三个老李的保险丝", "别人的库存"), ("借了三个保险丝", "借进或借出"), ("借给二号站三个保险丝", "借进或借出"),
    ("借给老李两个钻头", "借进或借出"), ("向老李借了三个保险丝", "借进或借出"), ("借用了三个保险丝", "借进或借出")])
def test_someone_elses_or_borrowed_stock_writes_nothing_and_says_why(tmp_path, text, kind):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is None and kind in said[0], said


@pytest.mark.parametrize("text, record", [
    ("给老李的车用了三个保险丝", ("FUS-5A", -3)), ("收到老李送来的三个保险丝", ("FUS-5A", 3)),
    ("收到供应商的五个垫圈", ("WSH-M8", 5)), ("用了仓库的三个保险丝", ("FUS-5A", -3)),
    ("用了30号箱的三个保险丝", ("FUS-5A", -3)), ("借助梯子用了三个保险丝", ("FUS-5A", -3))])
def test_whom_it_was_for_or_from_still_logs(tmp_path, text, record):
    said, written, out = _said(tmp_path, text)
    assert written == [record] and out.pending is None, said


def test_an_owner_counts_only_before_the_count_or_the_name():
    assert not_ours_zh("用了老李的3个保险丝") == ("someones", "老李的")
    assert not_ours_zh("给老李的车用了3个保险丝", ["保险丝"]) is None
    assert not_ours_zh("用了3个老李的保险丝", ["保险丝"]) == ("someones", "老李的")


# -- 5. fillers: a hesitation logs, an open list or a "wait" between counts does not ------------------------

@pytest.mark.parametrize("text, record", [
    ("等等，用了三个保险丝", ("FUS-5A", -3)), ("等一下，收到五个钻头", ("DRL-BIT-6", 5)), ("稍等，拿了两个垫圈", ("WSH-M8", -2)),
    ("对了，用了三个保险丝", ("FUS-5A", -3)), ("帮我记一下，用了三个保险丝", ("FUS-5A", -3)),
    ("用了三个保险丝，谢谢", ("FUS-5A", -3)), ("嗯，那个，用了三个保险丝", ("FUS-5A", -3)),
    ("麻烦记一下，收到十个垫圈", ("WSH-M8", 10))])
def test_a_command_after_an_ordinary_filler_logs_in_one_turn(tmp_path, text, record):
    said, written, out = _said(tmp_path, text)
    assert written == [record] and out.pending is None, said


@pytest.mark.parametrize("text, words", [
    ("用了三个保险丝、垫圈等等", "还有别的东西"), ("用了三个保险丝等等", "还有别的东西"), ("收到五个钻头、垫圈等等", "还有别的东西"),
    ("用了三个，等等，四个保险丝", "改了口"), ("用了三个保险丝，等一下", "不是真的发生"), ("点了三个保险丝", "点了"),
    ("等一下再记三个保险丝", "没听懂")])
def test_an_open_list_a_wait_between_counts_or_a_doubt_writes_nothing(tmp_path, text, words):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is None and words in said[0], said


def test_a_time_of_day_is_no_count():
    # 八点了 ("it is eight") is not 点了 ("counted"): read back for its two numbers, never refused as a count
    from edge.stages.nlu.not_stock import not_stock_zh
    assert not_stock_zh("8点了，用了3个保险丝", "out", "log_record") is None
    assert not_stock_zh("点了3个保险丝", "out", "log_record") == ("count_what", "点了")


# -- 6. taken from one place and put into another -----------------------------------------------------------

def test_a_take_and_put_between_two_known_places_is_a_move_never_a_use(tmp_path):
    said, written, out = _said(tmp_path, "从30号箱拿了三个保险丝放到31号箱")
    assert written == [] and out.pending is not None and "移动" in said[0], said
    (tmp_path / "yes").mkdir()
    said, written, _ = _said(tmp_path / "yes", "从30号箱拿了三个保险丝放到31号箱", "是")
    assert sorted(written) == [("FUS-5A", -3), ("FUS-5A", 3)] and "移到31号料箱" in said[1], said


@pytest.mark.parametrize("text", ["从30号拿了三个保险丝放到31号", "拿了三个保险丝，从30号箱放到31号箱",
                                  "拿了三个保险丝放到4号抽屉"])
def test_a_take_and_put_not_understood_as_a_move_writes_nothing_and_says_it_is_a_move(tmp_path, text):
    said, written, out = _said(tmp_path, text, "是")
    assert written == [] and said[0].startswith("没有记录") and "移到另一个位置" in said[0], said


@pytest.mark.parametrize("text, record", [("从30号箱拿了三个保险丝", ("FUS-5A", -3)),
                                          ("从四号抽屉拿了两个钻头", ("DRL-BIT-6", -2)),
                                          ("在三十号料箱放了三个保险丝", ("FUS-5A", 3))])
def test_a_take_from_its_place_or_a_put_into_it_still_logs(tmp_path, text, record):
    said, written, out = _said(tmp_path, text)
    assert written == [record] and out.pending is None, said


# -- found by trying the fixes as a hostile user ---------------------------------------------------------------

@pytest.mark.parametrize("text", ["用了三个不到的保险丝", "用了保险丝，三个不到", "用了不够三个保险丝", "撑死用了三个保险丝",
                                  "充其量用了三个保险丝", "少说用了三个保险丝", "用了不下三个保险丝", "用了十个出头的垫圈"])
def test_bounds_said_after_the_count_or_in_other_words_are_asked(tmp_path, text):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is not None, said


@pytest.mark.parametrize("text, words", [("保险丝用了，留下三个", "留下3个"), ("用了三个护目镜带", "护目镜带"),
                                         ("用了师傅的三个保险丝", "师傅的"), ("用了一号线的三个保险丝", "1号线的"),
                                         ("用了三个保险丝什么的", "保险丝什么的"), ("用了三个保险丝之类的", "保险丝之类的")])
def test_what_is_kept_a_strap_a_masters_stock_and_and_such_write_nothing(tmp_path, text, words):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is None and f"“{words}”" in said[0], said


@pytest.mark.parametrize("text", ["把三个保险丝从30号箱拿到31号箱", "从30号箱拿了三个保险丝带到4号抽屉"])
def test_a_take_to_another_place_is_read_back_as_a_move(tmp_path, text):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is not None and "要移动到那里吗" in said[0], said


@pytest.mark.parametrize("text", ["等等啊，用了三个保险丝", "稍等一下，用了三个保险丝", "呃，等等，用了三个保险丝"])
def test_a_wait_said_first_after_a_hesitation_still_logs(tmp_path, text):
    said, written, out = _said(tmp_path, text)
    assert written == [("FUS-5A", -3)] and out.pending is None, said


def test_a_time_of_day_is_no_decimal_count(tmp_path):
    # "twenty past three" said before a use of cable counted in metres: never 3.2 m; 二点五米 is 2.5 m
    cable = CSV + "CBL-FLX,flex cable,shelf E,100,m,电缆\n"
    for k, (text, record) in enumerate([("下午三点二十用了五米电缆", None), ("用了二点五米电缆", -2.5),
                                        ("收到一点五米电缆", 1.5)]):  # (never 5 m)
        (tmp_path / str(k)).mkdir()
        with csv_store(tmp_path / str(k), cable) as store:
            said, written, out = run(store, text, language="zh")
        if record is None:
            assert written == [] and out.pending is not None and "5米" in said[0], said
        else:
            assert written == [("CBL-FLX", record)], said
