"""The Mandarin grammar path (language zh), on text, with Chinese aliases added to the sample
inventory built in the test (issue 3 item 7)."""
import pytest

from edge.config import ConfigError, load_settings
from edge.stages.nlu.grammar import Grammar
from edge.stages.nlu.understand import Understanding
from tests.helpers import INVENTORY
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


@pytest.mark.parametrize("text, location", [("货架B上有什么", "shelf B"), ("十二号箱里有什么", "bin 12"),
                                            ("4号抽屉都放了什么", "drawer 4")])
def test_place_contents(zh, text, location):
    """A place without an item asks what is stored there (the zh template, resolved by the zh rules)."""
    intent = zh.parse(text)
    assert (intent.intent, intent.sku, intent.location, intent.source) == ("place_contents", None, location, "template")


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
    from edge.stock.store import Item
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


@pytest.fixture
def zh_box(tmp_path):
    """A config with language zh (grammar path only) and a store holding the sample inventory
    with its Chinese aliases, loaded through 'edge inventory import'."""
    import csv

    from edge.cli import main

    inv = tmp_path / "inventory.csv"
    with inv.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["sku", "item", "location", "quantity", "unit", "aliases"])
        for it in sample_items(ZH_ALIASES):
            w.writerow([it.sku, it.item, it.location, it.quantity, it.unit, ";".join(it.aliases)])
    cfg = tmp_path / "zh.yaml"
    cfg.write_text(f"board: x86-dev\nlanguage: zh\nstore: {{path: {tmp_path / 'edge.db'}}}\nllm: {{engine: none}}\n")
    assert main(["inventory", "import", str(inv), "--config", str(cfg)]) == 0
    return cfg


def ask_zh(cfg, text, capsys) -> str:
    import json

    from edge.cli import main

    capsys.readouterr()
    assert main(["ask", text, "--config", str(cfg), "--json"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return next(e["text"] for e in events if e["type"] == "reply")


def test_replies_are_spoken_in_mandarin(zh_box, capsys):
    """language: zh answers in Chinese: place number before the place word, a measure word for
    the unit, the item's Chinese alias."""
    assert ask_zh(zh_box, "十二号料箱有多少M8螺栓", capsys) == "12号料箱有140个M8螺栓。"
    assert ask_zh(zh_box, "B号货架有多少M8螺栓", capsys) == "B号货架没有M8螺栓；12号料箱有140个M8螺栓。"
    assert ask_zh(zh_box, "收到五盒丁腈手套", capsys) == "已记录：收到5盒丁腈手套。A号货架现在有17盒丁腈手套。"
    assert ask_zh(zh_box, "撤销", capsys) == "已撤销：5盒丁腈手套。A号货架现在有12盒丁腈手套。"
    assert ask_zh(zh_box, "撤销", capsys) == "没有可以撤销的记录。"
    assert ask_zh(zh_box, "你好吗", capsys) == "对不起，我没听懂。"


def test_mandarin_read_back_and_its_answers(tmp_path):
    """Below zero: the read-back is in Chinese, and 不是 / 是 decline / log it (real SQLite store)."""
    from edge.stages import dialog
    from edge.stages.nlu.types import Intent
    from edge.stock.store import Store

    store = Store(tmp_path / "edge.db")
    store.import_csv(INVENTORY)  # no Chinese alias for the paint: its English name is read
    intent = Intent("log_record", sku="PNT-WHT", quantity=2, direction="out", text="用了两罐白漆")
    out = dialog.act(intent, store, intent.text, "t1", language="zh")
    assert out.text == "这样white paint会低于零：C号货架只有0罐white paint。还是记录用了2罐white paint吗？请说是或不是。"
    assert dialog.follow_up(out.pending, "不是", store, "t1", "zh").text == "好的，没有记录。"
    assert store.records() == []
    done = dialog.follow_up(out.pending, "是", store, "t1", "zh")
    assert done.record is not None and done.text == "已记录：用了2罐white paint。C号货架现在有-2罐white paint。"
    store.close()


def test_mandarin_odds_and_ends():
    """A bare 嗯 is a hesitation, not a yes; the out-of-stock reply uses the unit's measure word;
    the hot-level notice is Chinese under language zh when left at its default."""
    from edge.config import load_settings
    from edge.governor.governor import COOLING_NOTICE_ZH, Governor
    from edge.stages.nlu.followup import yes_no
    from edge.stages.reply import query_reply
    from edge.stock.store import Item

    assert yes_no("嗯", "zh") is None and yes_no("嗯，是的", "zh") is True
    paint = Item("PNT-WHT", "white paint", "shelf C", 0, "can", ("白漆",))
    assert query_reply(paint, language="zh") == "白漆用完了，C号货架一罐也没有了。"
    oil = Item("OIL-1", "machine oil", "shelf 2", 3, "bottle", ("机油",))
    assert query_reply(oil, language="zh") == "2号货架有3瓶机油。"
    assert Governor(load_settings(board="x86-dev", overrides={"language": "zh"}))._cooling_notice() == COOLING_NOTICE_ZH
    assert Governor(load_settings(board="x86-dev"))._cooling_notice().startswith("I'm cooling down")


def test_mandarin_stock_questions_said_many_ways_end_to_end(zh_box, capsys):
    """Stock questions go to the cue parser (free word order: place first or last, the item before or
    after 多少, 在哪, 够不够, 还有吗) through 'edge ask' with language zh; an unknown item is said so,
    never the only item of the place said."""
    for text in ("护目镜放在哪", "还有没有护目镜", "B号货架上的护目镜还有几个", "护目镜够不够"):
        assert ask_zh(zh_box, text, capsys) == "B号货架有8个护目镜。"
    for text in ("我们还有多少扎带", "扎带的库存是多少", "7号抽屉里扎带剩下多少"):
        assert ask_zh(zh_box, text, capsys) == "7号抽屉有300个扎带。"
    assert ask_zh(zh_box, "链轮还有多少", capsys) == "库存里没有链轮。"
    assert ask_zh(zh_box, "十二号箱有多少链轮", capsys) == "库存里没有链轮。"  # bin 12 holds only the M8 bolts


def test_a_mandarin_log_whose_item_comes_from_the_place_is_read_back(zh):
    """"往十二号箱放了五个" names no item: bin 12's only item is read back before it is written, as in
    English; with an item word no item has, nothing is taken from the place."""
    got = zh.parse("往十二号箱放了五个")
    assert (got.sku, got.quantity, got.explain["item_via"]) == ("BLT-M8-30", 5, "location")
    got = zh.parse("往十二号箱放了五个链轮")
    assert (got.sku, got.unknown) == (None, "链轮")


@pytest.mark.parametrize("heard, quantity", [
    ("收到、使一个钻头。", 1),            # 十一 heard as 使一: the 1 is read back, not written
    ("王十二后,相放了五十个M8路选。", 50),  # 往十二号箱 heard as 王十二后: 50 (with 个) is the count, read back
])
def test_a_count_the_recognizer_may_have_misheard_is_read_back(zh, heard, quantity, tmp_path):
    from edge.stages import dialog
    from edge.stock.store import Store
    from tests.nlu_helpers import write_inventory

    got = zh.parse(heard)
    assert (got.quantity, got.extra.get("low_confidence_quantity")) == (quantity, True)
    with Store(tmp_path / "e.db") as s:
        s.import_csv(write_inventory(tmp_path / "inv.csv", sample_items(ZH_ALIASES)))
        out = dialog.act(got, s, heard, "t1", language="zh")
        assert out.pending is not None and s.records() == [], out.text


def test_the_count_is_the_number_said_with_a_measure_word(zh):
    assert zh.parse("往十二号箱放了五十个M8螺栓").slots()["quantity"] == 50
    assert "low_confidence_quantity" not in zh.parse("往十二号箱放了五十个M8螺栓").extra
