"""Item resolution (fuzzy over names and aliases), ambiguous/unknown items, the ask-back helpers
and the transcript confidence (issue 3 items 4 and 5, understanding side)."""
import pytest

from edge.stages.nlu import followup
from edge.stages.nlu.grammar import Grammar
from edge.stages.nlu.spoken_size import spoken_size as said_size
from edge.stages.nlu.understand import LOW_CONFIDENCE, Understanding
from edge.stock.store import Item
from tests.nlu_helpers import sample_items

BOLT = Item("BLT-M8-30", "M8 bolt", "bin 12", 140, "pcs", ("m8 bolts", "M8螺栓"))
WASHER = Item("WSH-M8", "M8 washer", "bin 13", 500, "pcs", ("M8垫圈",))
NUT = Item("NUT-M8", "M8 nut", "bin 14", 80, "pcs", ())


@pytest.fixture(scope="module")
def m8():
    """An inventory where "M8" alone fits two items."""
    items = [i for i in sample_items() if i.sku not in ("BLT-M8-30", "WSH-M8")] + [BOLT, WASHER]
    return Grammar(items)


@pytest.mark.parametrize("text, intent, quantity", [
    ("how many M8 are there", "query_stock", None),
    ("How many M8s do we have?", "query_stock", None),
    ("we used 3 m8", "log_record", 3),
])
def test_ambiguous_item_gives_candidates(m8, text, intent, quantity):
    got = m8.parse(text)
    assert (got.intent, got.sku, got.quantity) == (intent, None, quantity)
    assert got.extra["candidates"] == ["BLT-M8-30", "WSH-M8"]


@pytest.mark.parametrize("text, sku", [("how many M8 bolts are there", "BLT-M8-30"),
                                       ("used two m8 washers", "WSH-M8"), ("any M8 boltz left", "BLT-M8-30")])
def test_full_name_is_not_ambiguous(m8, text, sku):
    got = m8.parse(text)
    assert got.sku == sku and "candidates" not in got.extra


@pytest.mark.parametrize("text, intent, words", [
    ("how many sprockets do we have", "query_stock", "sprockets"),
    ("we used three sprockets", "log_record", "sprockets"),
    ("do we have any hex keys in stock", "query_stock", "hex keys"),
])
def test_unknown_item_carries_the_spoken_words(text, intent, words):
    got = Grammar(sample_items()).parse(text)
    assert (got.intent, got.sku) == (intent, None)
    assert got.extra == {"unknown_item": words}


@pytest.mark.parametrize("text", ["how many legs does a spider have", "what's the time", "put the kettle on"])
def test_no_stock_cue_is_not_an_unknown_item(text):
    assert Grammar(sample_items()).parse(text) is None


@pytest.mark.parametrize("answer, sku", [
    ("the bolts", "BLT-M8-30"), ("washers", "WSH-M8"), ("Washers, please.", "WSH-M8"), ("M8 washer", "WSH-M8"),
    ("the first one", "BLT-M8-30"), ("the second one", "WSH-M8"), ("number two", "WSH-M8"),
    ("the last one", "WSH-M8"), ("the one in bin thirteen", "WSH-M8"), ("bolts", "BLT-M8-30"),
    ("螺栓", "BLT-M8-30"), ("第二个", "WSH-M8"), ("垫圈", "WSH-M8"),
])
def test_resolve_choice(answer, sku):
    assert followup.resolve_choice(answer, [BOLT, WASHER]) == sku


@pytest.mark.parametrize("answer", ["M8", "yes", "both of them", "", "the nuts"])
def test_resolve_choice_refuses_what_does_not_decide(answer):
    assert followup.resolve_choice(answer, [BOLT, WASHER]) is None


def test_resolve_choice_three_way():
    assert followup.resolve_choice("the nuts", [BOLT, WASHER, NUT]) == "NUT-M8"
    assert followup.resolve_choice("third", [BOLT, WASHER, NUT]) == "NUT-M8"


@pytest.mark.parametrize("text, language, expected", [
    ("yes", "en", True), ("Yeah.", "en", True), ("correct", "en", True), ("yep", "en", True),
    ("That's right.", "en", True), ("yes please", "en", True), ("sure, go ahead", "en", True),
    ("no", "en", False), ("Nope.", "en", False), ("cancel", "en", False), ("No, cancel it.", "en", False),
    ("that's not right", "en", False), ("wrong", "en", False),
    ("maybe", "en", None), ("yes no", "en", None), ("", "en", None), ("how many bolts", "en", None),
    ("是", "zh", True), ("是的", "zh", True), ("对", "zh", True), ("好的", "zh", True), ("没错", "zh", True),
    ("不是", "zh", False), ("不", "zh", False), ("不对", "zh", False), ("取消", "zh", False), ("算了", "zh", False),
    ("螺栓", "zh", None), ("yes", "zh", True),
])
def test_yes_no(text, language, expected):
    assert followup.yes_no(text, language) is expected


def test_ask_back_text():
    assert followup.ask_back_text([BOLT, WASHER]) == "M8 bolts or M8 washers?"
    assert followup.ask_back_text([BOLT, WASHER, NUT]) == "M8 bolts, M8 washers or M8 nuts?"
    assert followup.ask_back_text([BOLT, WASHER], "zh") == "M8螺栓还是M8垫圈？"
    assert followup.ask_back_text([BOLT, WASHER, NUT], "zh") == "M8螺栓、M8垫圈还是M8 nut？"
    paint = Item("PNT-WHT", "white paint", "shelf C", 0, "can", ())
    assert followup.ask_back_text([paint, Item("BAT-AA", "battery", "x", 1, "pcs", ())]) == "white paint or batteries?"
    with pytest.raises(ValueError, match="language"):
        followup.ask_back_text([BOLT], "fr")


def test_confidence_passes_through_and_flags_a_low_confidence_quantity():
    und = Understanding(sample_items(), None)
    low = und.understand("we used three drill bits", confidence=LOW_CONFIDENCE - 0.01)
    assert low.extra["confidence"] == LOW_CONFIDENCE - 0.01 and low.extra["low_confidence_quantity"] is True
    high = und.understand("we used three drill bits", confidence=0.93)
    assert high.extra == {"confidence": 0.93}
    query = und.understand("how many drill bits are left", confidence=0.2)  # no quantity: nothing to read back
    assert query.extra == {"confidence": 0.2}
    assert und.understand("we used three drill bits").extra == {}


def _fuses():
    return [Item(f"FUS-{a}A", f"fuse {a} A", f"bin {a}", 20, "pcs", ()) for a in (3, 5, 13)]


@pytest.mark.parametrize("text, sku", [("we took two 13 amp fuses", "FUS-13A"), ("used one 3A fuse", "FUS-3A"),
                                       ("how many five amp fuses are there", "FUS-5A")])
def test_an_amp_rating_picks_its_fuse(text, sku):
    assert Understanding(_fuses()).understand(text).sku == sku


@pytest.mark.parametrize("text", ["we took two 7 amp fuses", "have we got 30 amp fuses"])
def test_an_amp_rating_no_fuse_has_is_heard_not_replaced(text):
    intent = Understanding(_fuses()).understand(text)
    assert intent.sku is None and intent.heard_variant is not None


def test_a_bare_a_after_a_number_is_no_amp():
    assert said_size("we used 0.75 a litre of oil".split(), set()).amp is None
    assert said_size("two 13a fuses".split(), set()).amp == 13.0


@pytest.fixture(scope="module")
def few() -> Grammar:
    """A small stock room where a word said beside a name may belong to no item or to another."""
    return Grammar([Item("HOSE-GRN", "green hose", "shelf A", 20, "m", ("hose",)),
                    Item("TAPE-INS", "insulating tape", "bin 3", 30, "pcs", ("tape",)),
                    Item("TAPE-BLU", "blue masking tape", "bin 4", 10, "pcs", ()),
                    Item("VLV-BALL", "ball valve", "bin 5", 8, "pcs", ("valves",))])


@pytest.mark.parametrize("text, unknown", [
    ("we used 4 hose clamps", "hose clamps"),      # "clamp" is in no item: not 4 m of green hose
    ("took 2 valve handles", "valve handles"),
])
def test_a_word_no_item_has_makes_the_item_unknown(few, text, unknown):
    got = few.parse(text)
    assert (got.intent, got.sku, got.candidates, got.unknown) == ("log_record", None, (), unknown)


def test_a_word_another_item_has_picks_that_item_or_asks(few):
    got = few.parse("we received 6 yellow valves")  # another kind of valve: asked, never the ball valve
    assert (got.sku, got.candidates, got.heard_variant) == (None, ("VLV-BALL",), "yellow valve")
    assert few.parse("we used 2 rolls of blue tape").sku == "TAPE-BLU"
    got = few.parse("we used 3 blue hoses")  # "blue" is the masking tape's, "hose" the green hose's: no item has both
    assert (got.sku, got.candidates, got.unknown) == (None, (), "blue hoses")
    assert few.parse("we used 3 m of green hose yesterday for the pump").sku == "HOSE-GRN"
