"""Spoken numbers and places, English and Mandarin (case C15, issue 3 items 2 and 7)."""
import pytest

from edge.stages import dialog
from edge.stages.nlu.grammar import Grammar
from edge.stages.nlu.lexicon import normalize_location
from edge.stages.nlu.numbers import normalize_numbers, words_to_number
from edge.stages.nlu.numbers_zh import normalize_numbers_zh, zh_to_number
from edge.stages.nlu.understand import Understanding
from tests.helpers import csv_store
from tests.nlu_helpers import INVENTORY, ZH_ALIASES, sample_items


# C15: the four inputs of the shared case, as a number and inside a command
@pytest.mark.parametrize("spoken, value", [
    ("one hundred and five", 105), ("two oh two three", 2023), ("a dozen", 12), ("twelve", 12)])
def test_c15_words_to_number(spoken, value):
    assert words_to_number(spoken.split()) == (value, len(spoken.split()))
    assert normalize_numbers(spoken) == str(value)


@pytest.mark.parametrize("text, sku, quantity, location", [
    ("add one hundred and five washers", "WSH-M8", 105, None),
    ("add ten washers to bin two oh two three", "WSH-M8", 10, "bin 2023"),
    ("add a dozen M8 bolts", "BLT-M8-30", 12, None),
    ("add twelve M8 bolts to bin twelve", "BLT-M8-30", 12, "bin 12"),
])
def test_c15_in_a_command(text, sku, quantity, location):
    intent = Grammar(sample_items()).parse(text)
    assert intent.slots() == {"sku": sku, "quantity": quantity, "direction": "in", "location": location}


@pytest.mark.parametrize("text, expected", [
    ("a half dozen fuses", "6 fuses"), ("half dozen fuses", "6 fuses"), ("half a dozen fuses", "6 fuses"),
    ("a couple of washers", "2 washers"), ("couple fuses", "2 fuses"), ("two dozen bolts", "24 bolts"),
    ("bin oh seven", "bin 07"), ("bin twelfth", "bin 12"),          # "oh" as zero; an ordinal slip
    ("three hundred and twenty", "320"), ("fifteen hundred", "1500"),
])
def test_number_forms(text, expected):
    assert normalize_numbers(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("bin twelve", "bin 12"), ("Bin twelfth", "bin 12"), ("shelf bee", "shelf B"), ("drawer oh four", "drawer 4"),
    ("BIN 2,023", "bin 2023"), ("rack two three", "rack 23"),
])
def test_places(text, expected):
    assert normalize_location(text) == expected


# Mandarin numbers (issue 3 item 7)
@pytest.mark.parametrize("text, value", [
    ("十二", 12), ("一百零五", 105), ("两", 2), ("二零二三", 2023), ("一打", 12), ("半打", 6), ("两打", 24),
    ("一百二", 120), ("两千", 2000), ("零", 0), ("１２", 12), ("12", 12),
])
def test_zh_to_number(text, value):
    assert zh_to_number(text) == value


@pytest.mark.parametrize("text", ["", "统一", "万一", "螺栓", "十二号"])
def test_zh_not_a_number(text):
    assert zh_to_number(text) is None


@pytest.mark.parametrize("text, expected", [
    ("十二号箱有多少个M8螺栓", "12号箱有多少个M8螺栓"),
    ("二零二三号箱", "2023号箱"),
    ("收到一打手套", "收到12手套"),
    ("拿了两副护目镜", "拿了2副护目镜"),
    ("用了三个钻头", "用了3个钻头"),
    ("看一下", "看一下"),            # a lone 一 that is not a count stays a word
    ("一共用了五个", "一共用了5个"),
    ("统一", "统一"),
    ("打开", "打开"),
    ("ｍ８螺栓", "m8螺栓"),          # full-width letters and digits (NFKC)
])
def test_normalize_numbers_zh(text, expected):
    assert normalize_numbers_zh(text) == expected


@pytest.mark.parametrize("text, quantity", [("用了十二个钻头", 12), ("收到一百零五个垫圈", 105),
                                            ("拿了两个钻头", 2), ("收到一打扎带", 12)])
def test_zh_numbers_in_a_command(text, quantity):
    intent = Grammar(sample_items(ZH_ALIASES), language="zh").parse(text)
    assert intent is not None and intent.quantity == quantity


def test_a_couple_is_two_read_back_before_the_log_is_written(tmp_path):
    """"a couple of" is 2 (above), said back before a log writes it; a question takes it as said."""
    with csv_store(tmp_path, INVENTORY.read_text(encoding="utf-8")) as store:
        nlu = Understanding(store.items())
        text = "we used a couple of washers"
        out = dialog.act(nlu.understand(text), store, text, "t1")
        assert out.text == "Log 2 washers used? Say yes or no." and store.records() == []
        dialog.follow_up(out.pending, "yes", store, "t1")
        assert [(r.sku, r.delta) for r in store.records()] == [("WSH-M8", -2)]
        asked = dialog.act(nlu.understand("how many washers in a couple of bins"), store, "", "t2")
        assert asked.pending is None and len(store.records()) == 1
