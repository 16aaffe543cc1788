"""The phrasings as data (edge.stages.nlu.templates): the package's hassil templates, a site's own
template files, the everyday phrasings of every intent, ``explain`` and ``edge ask --explain``, the
Mandarin templates (hassil with ``ignore_whitespace``) and ``fill_slots`` for an intent picked elsewhere."""
from __future__ import annotations

import json

import pytest
import yaml

from edge.cli import main
from edge.stages.nlu.grammar import Grammar
from edge.stages.nlu.templates import PACKAGE_DIR, TemplateError, Templates
from edge.stages.nlu.types import INTENTS
from edge.stages.nlu.understand import Understanding
from edge.stock.store import Store
from tests.nlu_helpers import ZH_ALIASES, sample_items, write_inventory

SITE = """language: en
intents:
  log_record:
    data:
      - sentences:
          - "[<pre>] [<who>] (nicked|pinched|borrowed) {item}"
        slots:
          direction: out
"""


@pytest.fixture(scope="module")
def g() -> Grammar:
    return Grammar(sample_items())


@pytest.mark.parametrize("language", ["en", "zh"])
def test_package_templates_load_and_name_only_known_intents(language):
    data = yaml.safe_load((PACKAGE_DIR / f"{language}.yaml").read_text(encoding="utf-8"))
    assert data["language"] == language and set(data["intents"]) <= set(INTENTS)
    assert Templates(language).intents.intents


@pytest.mark.parametrize("text", ["cancel", "never mind", "Never mind.", "forget it", "nevermind", "forget about it"])
def test_cancel(g, text):
    assert g.parse(text).intent == "cancel"


@pytest.mark.parametrize("text", ["scratch that", "that was wrong", "take that back", "undo the last one",
                                  "delete that entry", "That's wrong.", "undo my last entry", "cancel that",
                                  "I made a mistake", "remove the last entry", "take it back"])
def test_undo_in_everyday_phrasings(g, text):
    assert g.parse(text).intent == "undo"


@pytest.mark.parametrize("text, sku", [
    ("have we got any M8 bolts", "BLT-M8-30"), ("are there drill bits left", "DRL-BIT-6"),
    ("what's the count on goggles", "GOG-SAF"), ("Are there any fuses left?", "FUS-5A"),
    ("where are the cable ties", "TIE-CBL-200"), ("how are we on copy paper", "PPR-A4"),
    ("got any washers", "WSH-M8"),
])
def test_stock_questions_in_everyday_phrasings(g, text, sku):
    got = g.parse(text)
    assert (got.intent, got.sku, got.source) == ("query_stock", sku, "template")


@pytest.mark.parametrize("text, location", [("what's in bin 12", "bin 12"), ("What is on shelf B?", "shelf B"),
                                            ("what do we have in drawer four", "drawer 4"),
                                            ("what's left in drawer 4", "drawer 4")])
def test_place_contents(g, text, location):
    got = g.parse(text)
    assert (got.intent, got.location, got.sku) == ("place_contents", location, None)


@pytest.mark.parametrize("text, sku, quantity, src, dst", [
    ("move 5 drill bits from drawer 4 to shelf B", "DRL-BIT-6", 5, "drawer 4", "shelf B"),
    ("transfer twenty washers from bin 2023 to bin twelve", "WSH-M8", 20, "bin 2023", "bin 12"),
    ("we moved three fuses to drawer 7 from bin 30", "FUS-5A", 3, "bin 30", "drawer 7"),
])
def test_transfer(g, text, sku, quantity, src, dst):
    got = g.parse(text)
    assert (got.intent, got.sku, got.quantity, got.location, got.to_location) == ("transfer", sku, quantity, src, dst)


@pytest.mark.parametrize("text, sku, quantity, location", [
    ("counted forty washers in bin three", "WSH-M8", 40, "bin 3"),
    ("we counted 12 fuses", "FUS-5A", 12, None),
    ("there are exactly 7 spanners on shelf E", "SPN-10", 7, "shelf E"),
    ("there are 12 fuses in bin 30", "FUS-5A", 12, "bin 30"),
    ("set the count of fuses to 55", "FUS-5A", 55, None),
])
def test_stock_count(g, text, sku, quantity, location):
    got = g.parse(text)
    assert (got.intent, got.sku, got.quantity, got.location) == ("stock_count", sku, quantity, location)


@pytest.mark.parametrize("text", ["which items need reordering", "what's running low", "what are we running low on",
                                  "what needs reordering", "anything running low?", "what should we reorder"])
def test_low_stock(g, text):
    assert g.parse(text).intent == "low_stock"


def test_explain_names_the_template_file_and_slots(g):
    got = g.parse("we used three drill bits from drawer four")
    assert got.explain["path"] == "template" and got.explain["file"].endswith("templates/en.yaml")
    assert "{item}" in got.explain["template"] and got.explain["slots"]["item"] == "3 drill bits from drawer 4"
    assert got.explain["item_via"] == "name"


def test_a_site_file_adds_a_phrasing_without_code(tmp_path):
    assert Grammar(sample_items()).parse("someone nicked two fuses") is None
    (tmp_path / "intents").mkdir()
    (tmp_path / "intents" / "workshop.yaml").write_text(SITE, encoding="utf-8")
    (tmp_path / "intents" / "chinese.yaml").write_text("language: zh\nintents:\n  cancel:\n    data:\n"
                                                       "      - sentences: ['算了算了']\n", encoding="utf-8")
    g = Grammar(sample_items(), site_dir=tmp_path / "intents")
    got = g.parse("someone nicked two fuses")
    assert (got.intent, got.sku, got.quantity, got.direction) == ("log_record", "FUS-5A", 2, "out")
    assert got.explain["file"].endswith("workshop.yaml")
    assert g.parse("we used three drill bits").sku == "DRL-BIT-6"  # the package's phrasings stay
    und = Understanding(sample_items(), None, site_dir=tmp_path / "intents")
    assert und.understand("they borrowed a fuse").quantity == 1


def test_a_site_file_with_an_unknown_intent_names_the_file(tmp_path):
    (tmp_path / "bad.yaml").write_text("language: en\nintents:\n  make_coffee:\n    data:\n"
                                       "      - sentences: ['make coffee']\n", encoding="utf-8")
    with pytest.raises(TemplateError, match="bad.yaml.*make_coffee"):
        Templates("en", tmp_path)


def test_hassil_matches_mandarin_without_spaces():
    """With ``ignore_whitespace`` hassil compares CJK text character by character: no word breaks needed."""
    m = Templates("zh").match("把5个钻头从4号抽屉移到B号架")
    assert (m.intent, m.slots["item"], m.slots["location"], m.slots["to_location"]) == ("transfer", "5个钻头", "4号抽屉",
                                                                                      "B号架")
    assert Templates("zh").match("今天天气怎么样") is None


@pytest.mark.parametrize("text, intent, slots", [
    ("把5个钻头从4号抽屉移到B号架", "transfer", ("DRL-BIT-6", 5, "drawer 4", "shelf B")),
    ("12号箱盘点有40个M8螺栓", "stock_count", ("BLT-M8-30", 40, "bin 12", None)),
    ("哪些东西需要补货", "low_stock", (None, None, None, None)),
    ("算了", "cancel", (None, None, None, None)),
])
def test_mandarin_templates_for_the_new_intents(text, intent, slots):
    got = Grammar(sample_items(ZH_ALIASES), language="zh").parse(text)
    assert (got.intent, (got.sku, got.quantity, got.location, got.to_location), got.source) == (intent, slots,
                                                                                               "template")


def test_a_mandarin_log_said_negated_is_refused():
    got = Grammar(sample_items(ZH_ALIASES), language="zh").parse("我们没有用三个钻头")
    assert (got.intent, got.sku, got.refusal) == ("log_record", "DRL-BIT-6", "negated")


def test_fill_slots_resolves_an_intent_picked_elsewhere(g):
    got = g.fill_slots("log_record", "we consumed three fuses", direction="out")
    assert (got.intent, got.sku, got.quantity, got.direction, got.explain["path"]) == ("log_record", "FUS-5A", 3, "out",
                                                                                     "fill_slots")
    got = g.fill_slots("log_record", "we did not consume three fuses", direction="out")
    assert got.refusal == "negated"
    got = g.fill_slots("transfer", "shift 5 drill bits over from drawer 4 to shelf B")
    assert (got.sku, got.quantity, got.location, got.to_location) == ("DRL-BIT-6", 5, "drawer 4", "shelf B")
    got = g.fill_slots("query_stock", "stock situation regarding the goggles")
    assert got.sku == "GOG-SAF"
    got = g.fill_slots("log_record", "we consumed some fuses")  # no count: nothing to write, the count is asked
    assert (got.quantity, got.refusal) == (None, "range")
    assert g.fill_slots("log_record", "we consumed the fuses") is None  # no count, nothing vague: not a log
    assert Understanding(sample_items(), None).fill_slots("undo", "revert the previous booking").intent == "undo"


def test_edge_ask_explain_prints_the_template_and_slots(tmp_path, capsys):
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\nstore: {{path: {tmp_path / 'edge.db'}}}\nllm: {{engine: none}}\n")
    (tmp_path / "intents").mkdir()
    (tmp_path / "intents" / "site.yaml").write_text(SITE, encoding="utf-8")
    assert main(["inventory", "import", str(write_inventory(tmp_path / "inv.csv", sample_items())),
                 "--config", str(cfg)]) == 0
    capsys.readouterr()
    assert main(["ask", "--explain", "--json", "someone nicked two fuses", "--config", str(cfg)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    explain = lines[0]["explain"]
    assert explain["file"].endswith("site.yaml") and explain["template"].startswith("[<pre>] [<who>] (nicked")
    assert explain["slots"] == {"item": "2 fuses", "direction": "out"}
    assert explain["resolved"] == {"sku": "FUS-5A", "quantity": 2, "direction": "out", "location": None}
    assert lines[1]["type"] == "intent" and lines[1]["source"] == "template"
    assert lines[2]["type"] == "reply" and "2 fuses" in lines[2]["text"], lines[2]
    with Store(tmp_path / "edge.db") as store:  # --explain is a dry run: the store is as imported
        assert store.records() == []
