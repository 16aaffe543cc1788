"""Sizes and variants resolved by attribute against the family, on a generated stock room of 2,000
items (hex bolts M6–M12 in seven lengths, drill bits by diameter, cutting discs, o-rings, gloves by
size) plus the shared sample inventory: one SKU only when the words single it out, else the family's
SKUs with what is missing or which variant was heard; never a guessed variant. Also: names compared
Unicode-aware, unknown items, and the bounded shortlist."""
from __future__ import annotations

import pytest

from edge.stages.nlu.grammar import Grammar
from edge.stages.nlu.shortlist import Shortlist
from edge.stock.store import Item
from tests.stockroom import stockroom

M10 = tuple(f"HXB-M10-{n}" for n in (20, 30, 40, 50, 60, 80, 100))


@pytest.fixture(scope="module")
def g() -> Grammar:
    return Grammar(stockroom(2000))


@pytest.mark.parametrize("text, sku, quantity", [
    ("we used 5 M10 bolts eighty millimetre", "HXB-M10-80", 5),
    ("we used five M ten bolts 80 mm", "HXB-M10-80", 5),
    ("took 3 hex bolts M8 x 30 mm", "HXB-M8-30", 3),
    ("we used two HSS drill bits six mil", "DRB-6", 2),
    ("we used 2 HSS drill bits 6mm", "DRB-6", 2),
    ("we used 2 cutting discs 125 mm", "CDS-125", 2),
    ("we used a box of large nitrile work gloves", "GLV-NTR-L", 1),
    ("took 2 boxes of extra large nitrile work gloves", "GLV-NTR-XL", 2),
    ("we used four o-ring 30 mm", "ORG-30", 4),
    ("we used two M8 by 30 hex bolts", "HXB-M8-30", 2),
    ("we've used 4 twelve millimetre drill bits", "DRB-12", 4),   # the unsized sample "drill bit" is not 12 mm
])
def test_a_size_said_picks_the_variant(g, text, sku, quantity):
    got = g.parse(text)
    assert (got.intent, got.sku, got.quantity, got.candidates, got.heard_variant) == ("log_record", sku, quantity, (),
                                                                                      None)


@pytest.mark.parametrize("text, candidates, missing", [
    ("how many M10 bolts do we have", M10, "millimetre"),
    ("we used three M10 bolts", M10, "millimetre"),
    ("how many bolts 80 mm are there", ("HXB-M6-80", "HXB-M8-80", "HXB-M10-80", "HXB-M12-80"), "thread"),
    ("how many nitrile work gloves are left", ("GLV-NTR-S", "GLV-NTR-M", "GLV-NTR-L", "GLV-NTR-XL"), "size"),
    ("how many cutting discs do we have", ("CDS-115", "CDS-125", "CDS-230"), "millimetre"),
])
def test_only_the_variant_missing_asks_for_it(g, text, candidates, missing):
    got = g.parse(text)
    assert (got.sku, got.candidates, got.variant_missing, got.heard_variant) == (None, candidates, missing, None)


@pytest.mark.parametrize("text, heard, candidates", [
    ("we used 3 M10 bolts ninety millimetre", "90 millimetre", M10),
    ("we used 2 cutting discs 5 centimetre", "50 millimetre", ("CDS-115", "CDS-125", "CDS-230")),
    ("how many M14 hex bolts are there", "M14", None),
    ("how many extra small nitrile work gloves are left", "extra small",
     ("GLV-NTR-S", "GLV-NTR-M", "GLV-NTR-L", "GLV-NTR-XL")),
])
def test_a_variant_that_does_not_exist_is_said_never_guessed(g, text, heard, candidates):
    got = g.parse(text)
    assert got.sku is None and got.heard_variant == heard
    if candidates is not None:
        assert got.candidates == candidates
    else:
        assert len(got.candidates) == 27 and all(c.startswith("HXB-") for c in got.candidates)


def test_names_are_compared_unicode_aware(g):
    assert g.parse("how many Schrauben Ä do we have").sku == "SCR-AE"
    assert g.parse("how many Schrauben Ö do we have").sku == "SCR-OE"
    assert g.parse("we used 2 schrauben ö").slots()["sku"] == "SCR-OE"


def test_a_chinese_name_in_an_english_sentence(g):
    assert g.parse("how many 活动扳手 do we have").sku == "ZH-SPANNER"
    assert g.parse("we used 2 活动扳手").quantity == 2


@pytest.mark.parametrize("text, unknown", [("we used 3 sprockets", "sprockets"),
                                           ("do we have any flux capacitors", "flux capacitors")])
def test_an_item_not_stocked_is_unknown_with_the_words_heard(g, text, unknown):
    got = g.parse(text)
    assert (got.sku, got.candidates, got.unknown) == (None, (), unknown)


def test_an_unknown_item_at_a_place_with_one_item_is_not_that_item(g):
    got = g.parse("we used 3 sprockets from bin 30")
    assert (got.sku, got.unknown, got.location) == (None, "sprockets", "bin 30")


def test_the_shortlist_finds_a_misheard_name_among_thousands():
    items = stockroom(2000)
    sl = Shortlist(items)
    assert [i.sku for i in sl.shortlist("how many washerz", 3)][0] == "WSH-M8"
    assert "DRL-BIT-6" in [i.sku for i in sl.shortlist("drill bids", 5)]
    got = sl.shortlist("brass hinge gamma 0", 5)
    assert got and got[0].item == "brass hinge gamma 0"
    assert sl.shortlist("the and of", 5) == []


def test_twenty_thousand_items_still_resolve():
    g = Grammar(stockroom(20000))
    assert g.parse("we used 5 M10 bolts eighty millimetre").sku == "HXB-M10-80"
    assert g.parse("how many brass hinge gamma 0 do we have").sku is not None
    assert g.parse("we used two drill bids").sku == "DRL-BIT-6"


def test_places_come_from_per_place_stock_when_items_have_it():
    """An item stocked at several places (``stock``) is found at each of them."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Stocked:
        sku: str
        item: str
        location: str
        quantity: int
        unit: str
        aliases: tuple
        stock: tuple

    items = [Stocked("FUS-5A", "fuse", "bin 30", 60, "pcs", (), (("bin 30", 40), ("drawer 9", 20))),
             Item("WSH-M8", "washer", "bin 2023", 500, "pcs", ())]
    g = Grammar(items)
    assert g.parse("what's in drawer nine").intent == "place_contents"
    assert g.parse("restocked drawer nine with ten").sku == "FUS-5A"


@pytest.fixture(scope="module")
def two() -> Grammar:
    """Families of two lengths, beside the stock room's three cutting discs."""
    return Grammar(stockroom(300) + [
        Item("DWL-200", "dowel 200 mm", "drawer 7", 300, "pcs", ("wooden peg",)),
        Item("DWL-380", "dowel 380 mm", "drawer 7", 120, "pcs", ("wooden peg",)),
        Item("CLP-20", "hose clamp 20 mm", "drawer 9", 80, "pcs", ()),
        Item("CLP-40", "hose clamp 40 mm", "drawer 9", 35, "pcs", ())])


@pytest.mark.parametrize("text, sku, quantity", [
    ("we used 3 cutting discs, the 115 ones", "CDS-115", 3),
    ("took 2 cutting discs, the 230s", "CDS-230", 2),
    ("how many wooden pegs are there, the short ones", "DWL-200", None),
    ("move 50 long dowels from drawer 7 to drawer 9", "DWL-380", 50),
    ("we used 4 of the 40 mil hose clamps, correction, the 20 mil ones", "CLP-20", 4),
])
def test_the_variant_said_after_the_name_picks_it(two, text, sku, quantity):
    """"the 115 ones", "the 230s": a bare number after "the" is the size; "the long/short ones"
    picks between two lengths; a correction to "the 20 mil ones" is the size."""
    got = two.parse(text)
    assert (got.sku, got.quantity, got.candidates, got.heard_variant) == (sku, quantity, (), None), got.explain
    got = two.parse("we used 2 of the long cutting discs")  # long of three lengths: asked, never the longest
    assert (got.sku, got.quantity, got.candidates, got.variant_missing) == (
        None, 2, ("CDS-115", "CDS-125", "CDS-230"), "millimetre")
