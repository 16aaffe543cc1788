"""The Mandarin grammar path (language zh), on text, with Chinese aliases added to the sample
inventory built in the test (issue 3 item 7)."""
import pytest

from edge.config import ConfigError, load_settings
from edge.nlu.grammar import Grammar
from edge.nlu.understand import Understanding
from tests.nlu_helpers import ZH_ALIASES, sample_items


@pytest.fixture(scope="module")
def zh():
    return Grammar(sample_items(ZH_ALIASES), language="zh")


@pytest.mark.parametrize("text, sku, location", [
    ("十二号箱有多少个M8螺栓", "BLT-M8-30", "bin 12"),
    ("M8螺栓还有多少", "BLT-M8-30", None),
    ("M8螺栓还有多少？", "BLT-M8-30", None),
    ("Ｍ８螺栓还有多少", "BLT-M8-30", None),            # full-width, as some recognizers write
    ("嗯，M8螺栓还有多少", "BLT-M8-30", None),          # a leading hesitation
    ("B号架有多少护目镜", "GOG-SAF", "shelf B"),
    ("货架B上有多少安全眼镜", "GOG-SAF", "shelf B"),
    ("货架B上有什么", "GOG-SAF", "shelf B"),             # no item: the only one stocked there
    ("护目镜还剩几个", "GOG-SAF", None),
    ("二零二三号箱有多少垫圈", "WSH-M8", "bin 2023"),
    ("扎带有没有", "TIE-CBL-200", None),
    ("7号抽屉里还有多少扎带", "TIE-CBL-200", "drawer 7"),
])
def test_query(zh, text, sku, location):
    intent = zh.parse(text)
    assert intent is not None
    assert (intent.intent, intent.sku, intent.location, intent.source, intent.text) == (
        "query_stock", sku, location, "grammar", text)


@pytest.mark.parametrize("text, sku, quantity, direction, location", [
    ("用了三个钻头", "DRL-BIT-6", 3, "out", None),
    ("收到二十盒丁腈手套", "GLV-NIT-L", 20, "in", None),
    ("收到20盒丁腈手套。", "GLV-NIT-L", 20, "in", None),
    ("从四号抽屉拿了两个钻头", "DRL-BIT-6", 2, "out", "drawer 4"),
    ("往十二号箱放了五十个M8螺栓", "BLT-M8-30", 50, "in", "bin 12"),
    ("领用了一打扎带", "TIE-CBL-200", 12, "out", None),
    ("入库一百零五个垫圈", "WSH-M8", 105, "in", None),
    ("收到五个丁晴手套", "GLV-NIT-L", 5, "in", None),        # homophone slip: fuzzy match
])
def test_log(zh, text, sku, quantity, direction, location):
    intent = zh.parse(text)
    assert intent is not None and intent.intent == "log_record"
    assert intent.slots() == {"sku": sku, "quantity": quantity, "direction": direction, "location": location}


@pytest.mark.parametrize("text", ["撤销", "撤销上一条", "撤销。", "请撤销一下", "撤回刚才那条", "取消上一条记录"])
def test_undo(zh, text):
    intent = zh.parse(text)
    assert intent is not None and intent.intent == "undo"


@pytest.mark.parametrize("text", ["今天天气怎么样", "讲个笑话", "用了钻头", "撤销螺栓", "你好"])
def test_not_a_command(zh, text):
    assert zh.parse(text) is None


def test_unknown_item_is_asked_not_guessed(zh):
    intent = zh.parse("用了三个链轮")
    assert (intent.intent, intent.sku, intent.quantity) == ("log_record", None, 3)
    assert intent.extra["unknown_item"] == "链轮"


def test_shared_head_word_gives_candidates():
    items = sample_items({"BLT-M8-30": ("M8螺栓",)})
    from edge.store import Item
    items.append(Item("BLT-M10", "M10 bolt", "bin 14", 5, "pcs", ("M10螺栓",)))
    g = Grammar(items, language="zh")
    intent = g.parse("螺栓还有多少")
    assert intent.sku is None and intent.extra["candidates"] == ["BLT-M10", "BLT-M8-30"]
    assert g.parse("M10螺栓还有多少").sku == "BLT-M10"


def test_english_text_still_parses_in_zh_mode(zh):
    intent = zh.parse("how many M8 bolts are in bin twelve")
    assert (intent.intent, intent.sku, intent.location) == ("query_stock", "BLT-M8-30", "bin 12")


def test_language_setting_selects_the_rules(tmp_path):
    settings = load_settings(overrides={"language": "zh", "store": {"path": str(tmp_path / "s.db")}})
    und = Understanding(sample_items(ZH_ALIASES), None, language=settings.language)
    assert und.understand("十二号箱有多少个M8螺栓").sku == "BLT-M8-30"
    assert Understanding(sample_items(ZH_ALIASES), None, language="en").understand("十二号箱有多少个M8螺栓").intent == "other"
    with pytest.raises(ConfigError, match="language"):
        load_settings(overrides={"language": "fr", "store": {"path": str(tmp_path / "s.db")}})
    with pytest.raises(ValueError, match="language 'fr'"):
        Grammar(sample_items(), language="fr")
