"""The paraphrase matcher with the real all-MiniLM-L6-v2 encoder: intent choice, free questions left
to the LLM, masking of slot spans, and the integration with a slot resolver."""
import dataclasses

import pytest

from edge.models.embed import Encoder
from edge.stages.nlu.paraphrase import MATCHABLE, Masker, Paraphraser, load_exemplars, understand_paraphrase
from edge.stages.nlu.types import INTENTS, Intent
from edge.stages.nlu.understand import Understanding
from edge.stock.store import Store

try:
    from helpers import INVENTORY
except ImportError:
    from tests.helpers import INVENTORY


@pytest.fixture(scope="module")
def items(tmp_path_factory):
    s = Store(tmp_path_factory.mktemp("para") / "inv.db")
    s.import_csv(INVENTORY)
    out = s.items()
    s.close()
    return out


@pytest.fixture(scope="module")
def para(items):
    return Paraphraser(Encoder.load(), items)


# Paraphrases not in the exemplars (nor in bench/paraphrase/en.jsonl), one or more per intent.
COMMANDS = [
    ("do we have any drill bits at all", "query_stock"),
    ("how many washers are sitting in the stores", "query_stock"),
    ("I've just taken seven fuses", "log_record"),
    ("twelve boxes of gloves turned up today", "log_record"),
    ("please reverse my last entry", "undo"),
    ("forget that, never mind", "cancel"),
    ("what sits in drawer seven", "place_contents"),
    ("move three spanners from shelf E to drawer 4", "transfer"),
    ("I counted them again, there are 61 fuses", "stock_count"),
    ("which things have to be reordered", "low_stock"),
    ("what do the safety rules say about the goggles", "ask_docs"),
]
FREE = ["what's the weather going to be tomorrow", "tell me a story about dragons", "who painted the Mona Lisa",
        "how many days are in a leap year"]


def test_exemplars_cover_every_intent():
    ex = load_exemplars("en")
    assert set(ex) == set(INTENTS) - {"ask_records"}  # records questions: the grammar's alone (nlu/records.py)
    assert all(len(v) >= 10 for v in ex.values())


@pytest.mark.parametrize("text,intent", COMMANDS)
def test_paraphrase_gets_its_intent(para, text, intent):
    found = para.match(text)
    assert found is not None, para.scores(text)[0]
    assert found[0] == intent, found
    assert found[1] >= para.threshold and found[2] >= para.margin


@pytest.mark.parametrize("text", FREE)
def test_free_question_is_left_to_the_llm(para, text):
    assert para.match(text) is None


def test_empty_or_filler_only_gives_none(para):
    assert para.match("") is None
    assert para.match("   ?! ") is None


def test_masking_replaces_places_numbers_and_item_words(items):
    m = Masker(items)
    assert m.mask("move 5 nitrile gloves from shelf B to bin twelve") == "move five parts from bin three to bin three"
    assert m.mask("how many M8 bolts do we have") == "how many parts do we have"
    # a word of no item name stays, so the command words still decide
    assert m.mask("what is running low") == "what is running low"


def test_a_big_inventory_masks_items_not_common_words():
    from tests.big_inventory import big_inventory

    m = Masker(big_inventory(2000))
    assert "square" in m.vocab  # "1.5 square flex cable" makes it a name word...
    assert m.mask("what's the square root of 81") == "whats the square root of five"  # ...but no item here
    assert m.mask("we used two red electrical tapes") == "we used five parts"


def test_a_new_inventory_changes_only_the_masking(items):
    p = Paraphraser(Encoder.load(), [])
    vectors = p.vectors.copy()
    assert p.prepare("how many fuses are left") == "how many fuses are left"
    p.set_items(items)
    assert p.prepare("how many fuses are left") == "how many parts are left"
    assert (p.vectors == vectors).all()


def test_item_words_do_not_decide_the_intent(para):
    # the same command with items of very different names lands on the same intent
    got = {para.match(f"how many {name} have we got")[0] for name in ("fuses", "safety goggles", "copy paper")}
    assert got == {"query_stock"}


def test_a_stricter_threshold_leaves_more_to_the_llm(items):
    strict = Paraphraser(Encoder.load(), items, threshold=0.95)
    assert strict.match("do we have any drill bits at all") is None
    assert set(MATCHABLE) == set(INTENTS) - {"other", "ask_records"}


def _resolver(calls):
    def fill_slots(name, text):
        calls.append((name, text))
        if name == "query_stock":
            return Intent("query_stock", sku="DRL-BIT-6", source="template", text=text)
        return None
    return fill_slots


def test_understand_paraphrase_fills_slots_and_explains(para):
    calls = []
    text = "do we have any drill bits at all"
    got = understand_paraphrase(text, _resolver(calls), para)
    assert calls == [("query_stock", text)]
    assert got.intent == "query_stock" and got.sku == "DRL-BIT-6"
    assert got.source == "paraphrase" and got.text == text
    assert got.explain["path"] == "paraphrase" and got.explain["score"] >= para.threshold
    assert got.explain["exemplar"] in load_exemplars("en")["query_stock"]
    assert got.explain["slots"]["sku"] == "DRL-BIT-6"


def test_understand_paraphrase_gives_none_without_a_resolved_intent(para):
    calls = []
    # matched (log_record), but the resolver gives nothing: nothing comes back to be written
    assert understand_paraphrase("I've just taken seven fuses", _resolver(calls), para) is None
    assert calls and calls[0][0] == "log_record"
    # a free question never reaches the resolver
    calls.clear()
    assert understand_paraphrase("who painted the Mona Lisa", _resolver(calls), para) is None
    assert calls == []


def test_resolver_answering_another_intent_is_refused(para):
    def wrong(name, text):
        return dataclasses.replace(Intent("undo", text=text))
    assert understand_paraphrase("do we have any drill bits at all", wrong, para) is None


@pytest.mark.parametrize("text", ["seven M8 washers from bin four oh", "nine fuses out of bin three oh",
                                  "six M8 bolts from bin 12", "ten to twelve drill bits from drawer 3"])
def test_a_count_needs_a_counting_word(para, items, text):
    """Words with no counting word are never a stock count (a count replaces the level): a log, or
    not understood."""
    got = Understanding(items, paraphraser=para).understand(text)
    assert got.intent != "stock_count"


def test_a_count_said_stays_a_count(para, items):
    got = Understanding(items, paraphraser=para).understand("we actually have 12 M8 washers")
    assert got.intent == "stock_count" and got.quantity == 12


@pytest.mark.parametrize("text", ["please make an entry for 6 fuses", "kindly make entry, 10 nos M8 washers"])
def test_a_log_request_without_a_direction_is_asked_not_the_exemplars(para, items, text):
    """"Make an entry for 6 fuses" says neither used nor received: the dialog asks; the nearest
    exemplar ("I'm taking {n} {item}") says nothing about it."""
    got = Understanding(items, paraphraser=para).understand(text)
    assert (got.intent, got.source, got.direction) == ("log_record", "paraphrase", None), got.explain


def test_a_what_if_or_a_plan_on_the_paraphrase_path_writes_nothing(para, items):
    nlu = Understanding(items, paraphraser=para)
    got = nlu.understand("pretend we used 5 fuses, what would the balance be")
    assert (got.intent, got.source, got.sku, got.extra["what_if"]) == ("query_stock", "paraphrase", "FUS-5A", -5)
    got = nlu.understand("the supplier says they'll send 40 fuses next week")
    assert (got.intent, got.sku, got.refusal) == ("log_record", "FUS-5A", "future")
