"""The guards against a wrong record (edge.stages.nlu.guards through the template path): negation,
"already logged", self-corrections, ranges, several parts, fractions, minus, and "oh" as zero only
inside a digit string — on the shared sample inventory plus a generated stock room."""
from __future__ import annotations

import pytest

from edge.stages.nlu.grammar import Grammar
from edge.stages.nlu.guards import fractions, guard
from edge.stages.nlu.lexicon import normalize_text, written_fractions
from edge.stages.nlu.numbers import normalize_numbers
from tests.stockroom import stockroom


@pytest.fixture(scope="module")
def g() -> Grammar:
    return Grammar(stockroom(2000))


@pytest.mark.parametrize("text, sku, quantity, refusal", [
    ("we did not use 3 drill bits", "DRL-BIT-6", 3, "negated"),
    ("We didn't use three drill bits.", "DRL-BIT-6", 3, "negated"),
    ("don't log 3 drill bits", "DRL-BIT-6", 3, "negated"),
    ("we never took two fuses", "FUS-5A", 2, "negated"),
    ("we used 3 drill bits, already logged", "DRL-BIT-6", 3, "already_done"),
    ("I already logged three fuses", "FUS-5A", 3, "already_done"),
    ("we used two fuses, that's already been recorded", "FUS-5A", 2, "already_done"),
    ("we used minus 3 fuses", "FUS-5A", -3, "negative"),
    ("log -3 fuses", "FUS-5A", -3, "negative"),
    ("we used two hundred thousand fuses", "FUS-5A", 200000, "implausible"),
])
def test_a_command_that_must_not_be_written_says_why(g, text, sku, quantity, refusal):
    got = g.parse(text)
    assert (got.intent, got.sku, got.quantity, got.refusal, got.source) == ("log_record", sku, quantity, refusal,
                                                                          "template")


@pytest.mark.parametrize("text, quantity", [
    ("we used 3, no wait, 4 drill bits", 4),
    ("we used three, no, two drill bits", 2),
    ("we used three drill bits, sorry, five", 5),
    ("we used 3 drill bits I mean 4", 4),
    ("add ten, make that twelve, fuses", 12),
])
def test_a_self_correction_takes_the_later_number(g, text, quantity):
    got = g.parse(text)
    assert got.intent == "log_record" and got.quantity == quantity and got.refusal is None
    assert any(n.startswith("correction") for n in got.explain["guards"])


def test_an_unresolved_correction_is_refused(g):
    got = g.parse("we used 3 drill bits, no wait, I mean the fuses")
    assert got.intent == "log_record" and got.refusal == "correction"


@pytest.mark.parametrize("text, low, high", [("we used three or four fuses", 3, 4), ("took 2 to 3 drill bits", 2, 3),
                                             ("we used between five and six fuses", 5, 6)])
def test_a_range_is_no_count(g, text, low, high):
    got = g.parse(text)
    assert (got.intent, got.quantity, got.refusal, got.extra["range"]) == ("log_record", None, "range", [low, high])


def test_a_transfer_between_numbered_places_is_no_range(g):
    got = g.parse("move 5 drill bits from bin 3 to bin 4")
    assert (got.intent, got.quantity, got.location, got.to_location, got.refusal) == ("transfer", 5, "bin 3", "bin 4", None)


@pytest.mark.parametrize("text, parts", [
    ("we used 3 drill bits and 2 fuses", [("DRL-BIT-6", 3), ("FUS-5A", 2)]),
    ("took two fuses and a drill bit", [("FUS-5A", 2), ("DRL-BIT-6", 1)]),
    ("add 10 washers and 5 fuses and 2 cable ties", [("WSH-M8", 10), ("FUS-5A", 5), ("TIE-CBL-200", 2)]),
])
def test_several_items_in_one_sentence_are_all_kept(g, text, parts):
    got = g.parse(text)
    assert got.intent == "log_record" and got.sku is None
    assert [(p.sku, p.quantity) for p in got.parts] == parts
    assert all(p.direction == got.direction for p in got.parts)


def test_a_place_said_once_is_every_parts(g):
    got = g.parse("we used 3 drill bits and 2 fuses from drawer 4")
    assert [p.location for p in got.parts] == ["drawer 4", "drawer 4"]


def test_one_hundred_and_five_is_one_number_not_two_parts(g):
    got = g.parse("add one hundred and five washers")
    assert (got.sku, got.quantity, got.parts) == ("WSH-M8", 105, ())


@pytest.mark.parametrize("text, quantity, refusal", [
    ("we used two and a half boxes of nitrile gloves", 2.5, "fraction"),   # boxes are counted whole
    ("we used half a box of nitrile gloves", 0.5, "fraction"),
    ("we used 2.5 metres of copper cable", 2.5, None),                     # unit m allows decimals
    ("we used two and a half metres of copper cable", 2.5, None),
    ("we used one point five metres of copper cable", 1.5, None),
    ("we used two point seven five metres of copper cable", 2.75, None),    # every digit after "point"
    ("we used nought point six five metres of copper cable", 0.65, None),
])
def test_a_fraction_is_never_rounded(g, text, quantity, refusal):
    got = g.parse(text)
    assert (got.quantity, got.refusal) == (quantity, refusal)


def test_half_a_dozen_is_still_six(g):
    assert g.parse("put half a dozen fuses in bin thirty").quantity == 6


@pytest.mark.parametrize("text, expected", [
    ("bin two oh four", "bin 204"), ("four o-rings", "4 orings"), ("four o rings", "4 orings"),
    ("two oh two three", "2023"),
])
def test_oh_is_zero_only_inside_a_digit_string(text, expected):
    assert normalize_text(text) == expected


def test_a_trailing_oh_ends_the_digit_string():
    assert normalize_numbers("four o") == "4 o"


def test_o_rings_are_counted_not_read_as_forty(g):
    got = g.parse("we used four o-ring 30 mm")
    assert (got.sku, got.quantity) == ("ORG-30", 4)
    got = g.parse("we used four o-rings")
    assert got.quantity == 4 and got.sku is None and got.variant_missing == "millimetre"
    assert got.candidates == ("ORG-10", "ORG-20", "ORG-30", "ORG-40")


def test_guard_and_fraction_functions_on_their_own():
    assert fractions("2 and a half boxes") == "2.5 boxes"
    assert fractions("half a dozen") == "half a dozen"
    assert guard("we used 3 no wait 4 fuses").text == "we used 4 fuses"
    assert guard("we did not use 3 fuses").refusal == "negated"
    assert guard("we used 3 fuses").refusal is None


def test_a_query_is_not_refused(g):
    got = g.parse("how many drill bits are not in use")
    assert got.intent == "query_stock" and got.refusal is None


@pytest.fixture(scope="module")
def zh() -> Grammar:
    from edge.stock.store import Item
    from tests.nlu_helpers import ZH_ALIASES, sample_items

    return Grammar(sample_items(ZH_ALIASES) + [Item("CBL-CU", "copper cable", "rack 3", 100, "m", ("电缆",))],
                   language="zh")


@pytest.mark.parametrize("text, sku, quantity, refusal", [
    ("用了三四个钻头", "DRL-BIT-6", None, "range"),        # "three or four", never 34
    ("用了两三个钻头", "DRL-BIT-6", None, "range"),        # never 23
    ("用了三到四个钻头", "DRL-BIT-6", None, "range"),
    ("用了三个，不对，四个钻头", "DRL-BIT-6", 4, None),
    ("用了三个钻头，说错了", "DRL-BIT-6", 3, "correction"),
    ("用了两个半钻头", "DRL-BIT-6", 2.5, "fraction"),       # never 2
    ("用了二点五米电缆", "CBL-CU", 2.5, None),              # metres may be decimals
    ("用了两米半电缆", "CBL-CU", 2.5, None),
    ("别记三个钻头", "DRL-BIT-6", 3, "negated"),
    ("我们没有用三个钻头", "DRL-BIT-6", 3, "negated"),
    ("已经登记过了用了三个钻头", "DRL-BIT-6", 3, "already_done"),
    ("用了负三个钻头", "DRL-BIT-6", -3, "negative"),
])
def test_mandarin_guards(zh, text, sku, quantity, refusal):
    got = zh.parse(text)
    assert (got.intent, got.sku, got.quantity, got.refusal, got.text) == ("log_record", sku, quantity, refusal, text)


def test_mandarin_parts_are_all_kept(zh):
    got = zh.parse("用了三个钻头和两个保险丝")
    assert got.sku is None and [(p.sku, p.quantity, p.direction) for p in got.parts] == [
        ("DRL-BIT-6", 3, "out"), ("FUS-5A", 2, "out")]


def test_mandarin_codes_and_places_are_no_range(zh):
    got = zh.parse("二零二三号箱有多少垫圈")
    assert (got.intent, got.sku, got.location) == ("query_stock", "WSH-M8", "bin 2023")
    assert zh.parse("用了十二个钻头").quantity == 12


def test_a_mandarin_transfer_said_negated_is_refused(zh):
    got = zh.parse("别把5个钻头从4号抽屉移到B号架")
    assert (got.intent, got.sku, got.quantity, got.location, got.to_location, got.refusal) == (
        "transfer", "DRL-BIT-6", 5, "drawer 4", "shelf B", "negated")


@pytest.mark.parametrize("text", [
    "we took 5 drill bits on monday and 2 this morning",
    "we used 6 fuses, or was it 7",
    "took 4 boxes of nitrile gloves, or 5",
    "we used 5-6 washers",
    "we used roughly 8 washers",
    "took 10 fuses give or take",
])
def test_two_counts_or_a_vague_one_write_no_number(g, text):
    got = g.parse(text)
    assert (got.intent, got.quantity, got.refusal) == ("log_record", None, "range"), got.explain


def test_a_size_alternative_and_a_code_with_a_hyphen_are_no_two_counts(g):
    assert g.parse("we used 3 M8-30 bolts").refusal is None
    assert g.parse("move 3 fuses from bin 3-4 to bin 5").refusal is None


@pytest.mark.parametrize("text", ["log 6 washers", "record 2 drill bits", "book 4 fuses, no, make it 5"])
def test_log_alone_says_no_direction(g, text):
    got = g.parse(text)
    assert (got.intent, got.direction) == ("log_record", None)


@pytest.mark.parametrize("text, quantity", [
    ("took 1/2 box of nitrile gloves", 0.5),
    ("we used 3 1/2 boxes of nitrile gloves", 3.5),
    ("we used 1/4 box of nitrile gloves", 0.25),
    ("took 4½ boxes of nitrile gloves", 4.5),
    ("took ¾ box of nitrile gloves", 0.75),
])
def test_a_written_fraction_is_its_value_never_the_numerator(g, text, quantity):
    got = g.parse(text)
    assert (got.sku, got.quantity, got.refusal) == ("GLV-NIT-L", quantity, "fraction")


def test_written_fractions_on_their_own():
    assert written_fractions("2 3/4 m and 5/8 inch, open 24/7") == "2.75 m and 0.625 inch, open 24/7"


@pytest.mark.parametrize("text, quantity", [("took 6 washers not 5", 6), ("we used 4 not 3 drill bits", 4)])
def test_the_count_and_the_one_it_is_not_is_a_correction_not_a_negation(g, text, quantity):
    got = g.parse(text)
    assert (got.intent, got.quantity, got.refusal) == ("log_record", quantity, None)
    assert g.parse("we did not take 6 washers").refusal == "negated"


def _guarded(text: str):
    return guard(fractions(normalize_text(text)), text)


@pytest.mark.parametrize("text, refusal", [
    ("the supplier will send 40 fuses on friday", "future"),
    ("we're expecting 12 boxes of nitrile gloves tomorrow", "future"),
    ("I'll take 3 drill bits later today", "future"),
    ("20 washers are on order", "future"),
    ("we are going to use 4 fuses next week", "future"),
    ("suppose we took 6 fuses", "hypothetical"),
    ("say we used 7 washers", "hypothetical"),
    ("we might need 2 drill bits", "hypothetical"),
    ("the day shift says they used 5 fuses", "hearsay"),
    ("apparently someone took 2 drill bits", "hearsay"),
    ("I think somebody grabbed 3 washers", "hearsay"),
    ("Karen reckoned the fitters went through 6 fuses", "hearsay"),
])
def test_a_change_not_seen_to_happen_is_no_plain_log(g, text, refusal):
    """Planned, supposed or reported changes: refused (future, what-if) or read back (hearsay),
    on the template path and on the paraphrase path's slot filling alike."""
    assert _guarded(text).refusal == refusal
    got = g.fill_slots("log_record", text)
    assert got is not None and got.intent == "log_record" and got.refusal == refusal, got and got.explain


@pytest.mark.parametrize("said, unsaid, refusal", [
    ("I'll log 3 drill bits used", "I'll take 3 drill bits", "future"),
    ("would you log 2 fuses used", "2 fuses would be used", "hypothetical"),
    ("if you could log 3 fuses used please", "if we used 3 fuses", "hypothetical"),
    ("we took 5 drill bits yesterday", "we take 5 drill bits tomorrow", "future"),
    ("as I said, we used 3 fuses", "as Tom said, we used 3 fuses", "hearsay"),
    ("like I said we used 3 fuses", "he said we used 3 fuses", "hearsay"),
])
def test_a_request_or_a_past_change_is_no_plan_nor_hearsay(said, unsaid, refusal):
    """A log verb after "'ll", a polite "would you"/"if you could", the speaker's own "I said":
    a command; the same words of a plan, a what-if or someone else's report are none."""
    assert (_guarded(said).refusal, _guarded(unsaid).refusal) == (None, refusal)


def test_reported_words_are_dropped_for_the_templates(g):
    got = g.parse("the day shift says they used 5 fuses")
    assert (got.intent, got.sku, got.quantity, got.direction, got.refusal, got.source) == (
        "log_record", "FUS-5A", 5, "out", "hearsay", "template")


@pytest.mark.parametrize("text, sku, change", [
    ("what if I used 4 drill bits, how many would be left", "DRL-BIT-6", -4),
    ("if we received 10 washers what would we have", "WSH-M8", 10),
    ("how many fuses would we have if we got 10 more", "FUS-5A", 10),
])
def test_a_what_if_question_is_a_stock_question_with_the_supposed_change(g, text, sku, change):
    got = g.parse(text) or g.fill_slots("log_record", text)
    assert (got.intent, got.sku, got.quantity, got.refusal, got.extra["what_if"]) == ("query_stock", sku, None, None, change)


@pytest.mark.parametrize("text, sku", [("did we already record the drill bits", "DRL-BIT-6"),
                                       ("have I logged the fuses yet", "FUS-5A"),
                                       ("Was the nitrile gloves delivery booked in?", "GLV-NIT-L")])
def test_a_question_about_the_log_is_no_command(g, text, sku):
    got = g.parse(text)
    assert (got.intent, got.sku, got.quantity, got.refusal, got.extra.get("log_question")) == ("other", sku, None, None, True)


@pytest.mark.parametrize("text, refusal", [
    ("明天会收到五十个垫圈", "future"),
    ("下周收到二十盒丁腈手套", "future"),
    ("供应商将要送来两百个垫圈", "future"),
    ("假如用了五个垫圈", "hypothetical"),
    ("要是拿了三个钻头", "hypothetical"),
    ("听说夜班用了四个钻头", "hearsay"),
    ("据说用了两个保险丝", "hearsay"),
])
def test_a_mandarin_change_not_seen_to_happen_is_no_plain_log(zh, text, refusal):
    got = zh.parse(text)
    assert got.intent == "log_record" and got.quantity is not None and got.refusal == refusal, got.explain
    assert zh.parse("等一会儿用了三个钻头").refusal is None  # 一会儿 ("in a moment") says no plan


@pytest.mark.parametrize("text, sku, quantity, direction", [
    ("issued 10 nos fuses", "FUS-5A", 10, "out"),
    ("we used 5 pcs drill bits", "DRL-BIT-6", 5, "out"),
    ("received 20 no. washers", "WSH-M8", 20, "in"),     # "no." after a number: numbers, no correction
    ("took 3 ea fuses", "FUS-5A", 3, "out"),
    ("inward entry of 40 nos washers", "WSH-M8", 40, "in"),
    ("outward 6 nos fuses", "FUS-5A", 6, "out"),
])
def test_a_unit_word_after_the_count_is_no_part_of_the_name(g, text, sku, quantity, direction):
    got = g.fill_slots("log_record", text)
    assert (got.sku, got.quantity, got.direction, got.refusal) == (sku, quantity, direction, None), got.explain
    assert g.fill_slots("log_record", "took 2, no. 3 fuses").quantity == 3  # "no." after a comma still corrects


@pytest.mark.parametrize("text, corrected, refusal", [
    ("used 3 cans of degreaser, sorry, 3 litres of degreaser", "used 3 litres of degreaser", None),
    ("took 2 boxes of gloves, no, 3", "took 3 boxes of gloves", None),
    ("used 3 cans of wd 40, sorry, 4", None, "correction"),     # 3 cans or the 40 of the name? asked
])
def test_a_count_with_its_container_is_corrected_whole_and_a_number_of_a_name_never(text, corrected, refusal):
    got = _guarded(text)
    assert got.refusal == refusal and (corrected is None or got.text == corrected), got.text
