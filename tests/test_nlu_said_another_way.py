"""Commands of a stock room said the way people say them, on a generated stock room of 2,000 items
(edge.stages.nlu through the template path): self-corrections of a place, a size or the count; vague
counts; negations and "already logged" said other ways; hesitations inside a command; sizes said
another way (the 125 discs, one-twenty-five, ten by eighty, six and a half mil); the place that
singles out a variant; moves and counts said as logs or questions; "a pair of" gloves; a word no
item has beside a name. Each either resolves to the one right record or asks/refuses: never a
wrong write."""
from __future__ import annotations

import pytest

from edge.stages.nlu.corrections import resolve_corrections
from edge.stages.nlu.grammar import Grammar
from edge.stages.nlu.lexicon import normalize_text
from edge.stages.nlu.numbers import normalize_numbers
from edge.stages.nlu.slots import quantity
from edge.stock.store import Item
from tests.stockroom import stockroom


@pytest.fixture(scope="module")
def g() -> Grammar:
    return Grammar(stockroom(2000))


@pytest.mark.parametrize("text, sku, quantity, location", [
    ("we used three fuses from bin 12, no, from bin 30", "FUS-5A", 3, "bin 30"),
    ("took 2 M8 hex bolts x 40, no, M10 hex bolts x 40", "HXB-M10-40", 2, None),
    ("we used five large nitrile work gloves, no, small, from shelf H", "GLV-NTR-S", 5, "shelf H"),
    ("used six cutting discs 230 mm, correction, four", "CDS-230", 4, None),          # the count, not the size
    ("we used 2 cutting discs 115, I mean 125 mm", "CDS-125", 2, None),
    ("we used nine, actually make that ten, fuses", "FUS-5A", 10, None),
    ("we used six cutting discs 230 mm, scratch that, four", "CDS-230", 4, None),
    ("took 8 fuses, strike that, 5 fuses from bin 12", "FUS-5A", 5, "bin 12"),
])
def test_a_self_correction_replaces_what_it_corrects(g, text, sku, quantity, location):
    got = g.parse(text)
    assert (got.intent, got.sku, got.quantity, got.location, got.refusal) == ("log_record", sku, quantity, location,
                                                                               None)


def test_a_correction_of_the_destination_of_a_move(g):
    got = g.parse("move 4 fuses from bin 30 to bin 31, no, to bin 32")
    assert (got.intent, got.sku, got.location, got.to_location) == ("transfer", "FUS-5A", "bin 30", "bin 32")


@pytest.mark.parametrize("text", ["take out five, no, hmm, of the fuses", "we used two, no, the goggles"])
def test_a_correction_that_fits_nothing_is_refused(g, text):
    got = g.parse(text)
    assert got.intent == "log_record" and got.refusal == "correction"


def test_a_bare_number_after_a_place_and_a_count_is_asked(g):
    """"to bin 31, no, 7" with a count said: the place or the count? Refused (asked), never guessed."""
    got = g.parse("move 4 fuses from bin 30 to bin 31, no, 7")
    assert got.intent == "transfer" and got.refusal == "correction"
    assert resolve_corrections("fuses from drawer 4 no 5", "fuses from drawer 4, no, 5")[0] == "fuses from drawer 5"


def test_a_bare_no_corrects_only_when_set_off_by_a_comma():
    assert resolve_corrections("we used 3 fuses no 4", "we used 3 fuses no 4")[2] is False
    assert resolve_corrections("we used 3 fuses no 4", "we used 3 fuses no 4")[0] == "we used 3 fuses no 4"
    assert resolve_corrections("we used 3 fuses no 4", "we used 3 fuses, no, 4")[0] == "we used 4 fuses"


@pytest.mark.parametrize("text", ["we used about 20 fuses", "took 20 or so fuses", "used maybe ten fuses",
                                  "we used a few fuses", "we used some cable ties"])
def test_a_vague_count_asks_for_the_number(g, text):
    got = g.parse(text)
    assert got.intent == "log_record" and got.refusal == "range" and got.sku is not None


@pytest.mark.parametrize("text, refusal", [
    ("nobody took the 4 fuses", "negated"),
    ("no one used the goggles", "negated"),
    ("we didn't take any fuses", "negated"),
    ("no need to log the goggles", "negated"),
    ("those 6 fuses in bin 30 were logged yesterday", "already_done"),
    ("the 2 goggles from shelf B are already logged", "already_done"),
])
def test_a_command_said_as_not_done_or_done_before_is_refused(g, text, refusal):
    got = g.parse(text)
    assert (got.intent, got.refusal) == ("log_record", refusal)


def test_a_negated_sentence_about_no_item_is_not_a_log(g):
    assert g.parse("sorry, didn't mean to wake you") is None


def test_hesitations_inside_a_command_are_dropped(g):
    got = g.parse("move, uh, three, um, fuses from bin thirty to, er, bin thirty one")
    assert (got.intent, got.quantity, got.location, got.to_location) == ("transfer", 3, "bin 30", "bin 31")


@pytest.mark.parametrize("text, sku, quantity", [
    ("we used two one-twenty-five cutting discs", "CDS-125", 2),
    ("took 3 of the 230 cutting discs", "CDS-230", 3),
    ("grabbed four eight by thirty hex bolts", "HXB-M8-30", 4),
    ("used one HSS drill bit six mil", "DRB-6", 1),
    ("we used a pair of extra large nitrile work gloves", "GLV-NTR-XL", 1),   # gloves come in pairs
    ("used a litre and a half of paint", "PNT-WHT", 1.5),
])
def test_a_size_or_count_said_another_way(g, text, sku, quantity):
    got = g.parse(text)
    assert (got.intent, got.sku, got.quantity) == ("log_record", sku, quantity)


def test_a_bare_number_before_a_name_is_a_size_only_when_such_a_variant_exists(g):
    assert g.parse("how many of the 125 cutting discs are there").sku == "CDS-125"
    got = g.parse("we used 20 cutting discs")  # the count: no 20 mm disc
    assert (got.quantity, got.sku, got.variant_missing) == (20, None, "millimetre")


def test_the_place_said_singles_out_the_variant_kept_there(g):
    got = g.parse("we used 3 M8 hex bolts from bin 88")
    assert (got.sku, got.quantity, got.location) == ("HXB-M8-80", 3, "bin 88")
    got = g.parse("we used 3 M8 hex bolts")
    assert got.sku is None and got.variant_missing == "millimetre"


@pytest.mark.parametrize("text, intent, quantity", [
    ("take 5 fuses out of bin 30 and put them in bin 31", "transfer", 5),
    ("can you book 2 fuses over from bin 30 to bin 31", "transfer", 2),
    ("count 9 goggles on shelf B", "stock_count", 9),
    ("recount: 11 fuses in bin 30", "stock_count", 11),
    ("set the fuses in bin 30 to 40", "stock_count", 40),
    ("twelve fuses gone from bin 30", "log_record", 12),
])
def test_moves_and_counts_said_other_ways(g, text, intent, quantity):
    got = g.parse(text)
    assert (got.intent, got.sku, got.quantity) == (intent, "FUS-5A" if "fuse" in text else "GOG-SAF", quantity)


def test_count_without_a_number_is_still_a_question(g):
    assert g.parse("count the fuses in bin 30").intent == "query_stock"


@pytest.mark.parametrize("text", ["took one pair of welding goggles", "we used 3 titanium fuses"])
def test_a_word_no_item_has_before_a_name_asks(g, text):
    got = g.parse(text)
    assert got.sku is None and got.heard_variant is not None


def test_a_word_of_names_beside_an_unknown_word_is_an_unknown_item(g):
    got = g.parse("we used 3 hammer drills")
    assert got.sku is None and not got.candidates and got.unknown


def test_parts_are_cut_before_each_count_and_keep_their_own_place(g):
    got = g.parse("we took four fuses, two goggles and three drill bits")
    assert [(p.sku, p.quantity) for p in got.parts] == [("FUS-5A", 4), ("GOG-SAF", 2), ("DRL-BIT-6", 3)]
    got = g.parse("we used 2 goggles from shelf B and 3 fuses")
    assert [(p.sku, p.location) for p in got.parts] == [("GOG-SAF", "shelf B"), ("FUS-5A", None)]


@pytest.mark.parametrize("text, norm", [
    ("one oh oh rivets", "100 rivets"), ("bin two nine oh", "bin 290"), ("six oh-rings", "6 orings"),
    ("four oh wait five", "4 oh wait 5"), ("three-eighty", "380"), ("six and a half", "6.5"),
    ("bin one eighteen", "bin 118"), ("bin two fifty", "bin 250"), ("bin sixty two", "bin 62"),
])
def test_spoken_numbers(text, norm):
    assert normalize_text(text) == norm


def test_a_pair_of_is_one_pair_of_gloves_but_two_of_anything_else():
    assert normalize_numbers("a pair of gloves") == "1 gloves"
    assert normalize_numbers("a pair of fuses") == "2 fuses"


def test_a_move_that_names_only_where_to_leaves_where_from_to_the_dialog(g):
    got = g.parse("move 4 fuses to bin 31")
    assert (got.intent, got.sku, got.quantity, got.location, got.to_location) == ("transfer", "FUS-5A", 4, None, "bin 31")
    got = g.parse("move 4 fuses to bin 31 from bin 30")  # a slot holding two places: the words decide
    assert (got.location, got.to_location) == ("bin 30", "bin 31")


def test_a_name_said_without_its_accents_picks_the_one_it_fits():
    clips = Grammar([Item("CLIP-AE", "hyllclips Älva", "drawer 40", 30, "pcs", ()),
                     Item("CLIP-OE", "hyllclips Ölva", "drawer 40", 22, "pcs", ())])
    assert clips.parse("how many hyllclips Alva are there").sku == "CLIP-AE"
    assert clips.parse("how many hyllclips Olva are there").sku == "CLIP-OE"
    assert clips.parse("how many hyllclips are there").candidates == ("CLIP-AE", "CLIP-OE")


@pytest.mark.parametrize("text", ["wrong button, ignore me", "false alarm", "sorry, not talking to you"])
def test_a_wake_by_mistake_is_a_cancel(g, text):
    assert g.parse(text).intent == "cancel"


def test_a_move_from_a_lettered_shelf_keeps_where_from(g):
    got = g.parse("transfer 3 goggles from shelf A to shelf C")
    assert (got.intent, got.sku, got.location, got.to_location) == ("transfer", "GOG-SAF", "shelf A", "shelf C")


def test_a_low_stock_question_about_a_family_carries_its_items(g):
    got = g.parse("are we running low on cutting discs")
    assert (got.intent, got.candidates) == ("low_stock", ("CDS-115", "CDS-125", "CDS-230"))
    assert g.parse("are we short on anything").candidates == ()


@pytest.fixture(scope="module")
def shop() -> Grammar:
    return Grammar([Item("LUB-1", "lubricant spray 400", "shelf F", 9, "can", ()),
                    Item("ACT", "acetone", "bin 5", 30, "l", ()),
                    Item("RAG", "cotton rags", "shelf G", 12, "bag", ())])


@pytest.mark.parametrize("text, parts", [
    ("used a can of lubricant spray 400, three litres of acetone and a bag of cotton rags",
     [("LUB-1", 1), ("ACT", 3), ("RAG", 1)]),
    ("took three litres of acetone, a bag of cotton rags", [("ACT", 3), ("RAG", 1)]),
])
def test_each_amount_stays_with_its_own_item(shop, text, parts):
    got = shop.parse(text)
    assert [(p.sku, p.quantity) for p in got.parts] == parts


def test_an_amount_of_an_unknown_item_is_not_given_to_the_one_before(shop):
    got = shop.parse("used a bag of cotton rags, two litres of blinker fluid")
    assert [(p.sku, p.quantity) for p in got.parts] == [("RAG", 1), (None, 2)]



def test_a_before_the_name_and_a_later_number_is_no_count():
    """"a bag of cotton rags on line 2": one bag, or two? No count (asked), never 2."""
    toks = "used a bag of cotton rag on line 2".split()
    assert quantity(toks, set(), frozenset({4, 5}), True) is None
    assert quantity("used a bag of cotton rag".split(), set(), frozenset({4, 5}), True) == 1
    assert quantity("used 2 bag of cotton rag".split(), set(), frozenset({4, 5}), True) == 2
