"""The LLM never sees the whole inventory (its prompt lists a shortlist), and a stock question that
reaches it is answered by the store, never by a number the model made up."""
import json
import re

import pytest

from edge.stages.dialog import act as dialog_act
from edge.stages.nlu.llm_intent import (
    SHORTLIST_MAX,
    LlmIntentParser,
    asks_about_stock,
    build_system_prompt,
    counts_question,
)
from edge.stages.nlu.schema import generation_schema
from edge.stock.store import Store
from tests.big_inventory import big_inventory, write_csv
from tests.nlu_helpers import SMOLLM2, ReplayEngine, sample_items

ITEMS = sample_items()
BIG = big_inventory(2000)


def js(**kw) -> str:
    obj = {"intent": "other", "sku": None, "quantity": None, "direction": None, "location": None, "answer": None}
    obj.update(kw)
    return json.dumps(obj)


def item_lines(prompt: str) -> list[str]:
    return prompt.split("sku is one of these or null:\n", 1)[1].splitlines()


@pytest.fixture
def big_store(tmp_path):
    s = Store(tmp_path / "big.db")
    s.import_csv(write_csv(tmp_path / "big.csv", BIG))
    yield s
    s.close()


# -- the prompt -------------------------------------------------------------------------------------
def test_prompt_lists_the_given_shortlist_only():
    shortlist = [it for it in BIG if it.sku in ("FUS-5A", "GF-5A", "BF-5A")]
    parser = LlmIntentParser(ReplayEngine([]), BIG)
    messages = parser.messages("how many five amp fuses are there", shortlist)
    lines = item_lines(messages[0]["content"])
    assert [ln.split(":")[0] for ln in lines] == [it.sku for it in shortlist]
    assert parser.skus == [it.sku for it in shortlist]
    assert parser.schema == generation_schema(parser.skus)
    assert "HB-M8-30" not in messages[0]["content"]


def test_default_shortlist_is_capped_and_holds_the_named_item():
    parser = LlmIntentParser(ReplayEngine([]), BIG)
    got = parser.default_shortlist("we took four M8 bolts from bin 12")
    assert len(got) == SHORTLIST_MAX and got[0].sku == "BLT-M8-30"
    # a longer list given by the caller is cut to the cap
    parser.messages("anything", BIG[:50])
    assert len(parser.skus) == SHORTLIST_MAX


def test_the_prompt_before_the_items_is_the_same_for_every_sentence():
    # the engine's KV prefix cache keeps the task, intents and examples across sentences
    parser = LlmIntentParser(ReplayEngine([]), BIG)
    a = parser.messages("how many fuses are there")[0]["content"]
    b = parser.messages("what is in drawer 9")[0]["content"]
    head = "Items the sentence may name"
    assert a.split(head)[0] == b.split(head)[0] and a != b


def test_an_empty_shortlist_says_so():
    assert item_lines(build_system_prompt([]))[0] == "(none: sku is null)"


# -- stock questions --------------------------------------------------------------------------------
@pytest.mark.parametrize("text,stock", [
    ("could you tell me how many fuses we still have", True),
    ("do we have any hammers", True),
    ("is there any white paint left", True),
    ("how many legs does a spider have", False),
    ("where are the safety goggles", True),
    ("what is the torque for M8 bolts", False),
    ("what's the capital of France", False),
    ("tell me a joke", False),
])
def test_asks_about_stock(text, stock):
    named = LlmIntentParser(ReplayEngine([]), ITEMS).grammar.resolve_item(text)
    assert asks_about_stock(text, named.sku is not None or bool(named.candidates)) is stock


def test_how_many_never_logs():
    assert counts_question("how many fuses did we use")
    assert not counts_question("we used three fuses")


def test_an_invented_number_is_dropped_for_the_store(inventory_store):
    engine = ReplayEngine([js(answer="We have 250 fuses in stock.")])
    parser = LlmIntentParser(engine, inventory_store.items())
    spoken = []
    text = "could you tell me how many fuses we still have"
    intent = parser.parse(text, on_answer=spoken.append)
    assert spoken == []  # nothing of the model's answer was spoken while it was generated
    assert (intent.intent, intent.sku, intent.answer) == ("query_stock", "FUS-5A", None)
    assert intent.extra["llm_answer_dropped"] == "We have 250 fuses in stock."
    reply = dialog_act(intent, inventory_store, text, "t-1").text
    assert "250" not in reply and str(inventory_store.get("FUS-5A").quantity) in reply


def test_a_how_many_question_the_model_logs_is_a_query(inventory_store):
    engine = ReplayEngine([js(intent="log_record", sku="FUS-5A", quantity=1, direction="out")])
    parser = LlmIntentParser(engine, inventory_store.items())
    text = "how many fuses did the electricians use"
    intent = parser.parse(text)
    assert intent.intent == "query_stock" and intent.extra["llm_intent"] == "log_record"
    dialog_act(intent, inventory_store, text, "t-1")
    assert inventory_store.records() == []


def test_an_unknown_item_is_not_given_a_number(inventory_store):
    engine = ReplayEngine([js(answer="There are 12 hammers on shelf B.")])
    intent = LlmIntentParser(engine, inventory_store.items()).parse("do we have any hammers")
    assert intent.intent == "query_stock" and intent.sku is None and intent.unknown
    reply = dialog_act(intent, inventory_store, "do we have any hammers", "t-1").text
    assert "12" not in reply


def test_a_free_question_keeps_its_answer(inventory_store):
    engine = ReplayEngine([js(answer="A spider has eight legs.")])
    intent = LlmIntentParser(engine, inventory_store.items()).parse("how many legs does a spider have")
    assert (intent.intent, intent.answer) == ("other", "A spider has eight legs.")


def test_a_stock_question_that_fails_validation_is_still_asked_of_the_store(inventory_store):
    bad = js(quantity=1234567890)
    intent = LlmIntentParser(ReplayEngine([bad, bad]), inventory_store.items()).parse("how many fuses are left")
    assert (intent.intent, intent.sku) == ("query_stock", "FUS-5A") and intent.extra["llm_errors"]


# -- the real model ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def smollm2():
    from edge.llm.llamacpp import LlamaCppEngine

    engine = LlamaCppEngine(SMOLLM2, n_ctx=2048, threads=1, seed=7)
    yield engine
    engine.close()


def test_prompt_size_does_not_grow_with_the_inventory(smollm2):
    question = "the supplier dropped off ten boxes of nitrile gloves"
    sizes = {}
    for n in (10, 200, 2000):
        parser = LlmIntentParser(smollm2, BIG[:n])
        sizes[n] = len(smollm2.prompt_tokens(parser.messages(question)))
    assert max(sizes.values()) <= 1.1 * min(sizes.values()), sizes
    assert max(sizes.values()) + parser.max_tokens < smollm2.n_ctx


STOCK_QUESTIONS = [  # items the model could make up a number for; the grammar path takes neither
    "could you tell me the number of fuses we still have",
    "what does our stock of nitrile gloves look like",
]


def test_real_model_stock_questions_are_answered_by_the_store(smollm2, big_store):
    parser = LlmIntentParser(smollm2, big_store.items(), answer_max_tokens=24)
    for text in STOCK_QUESTIONS:
        assert parser.grammar.parse(text) is None  # really the LLM's turn
        intent = parser.parse(text)
        assert intent.intent == "query_stock" and intent.answer is None, (text, intent, parser.attempts)
        reply = dialog_act(intent, big_store, text, "t-1").text
        said = set(re.findall(r"\d+", reply))
        if intent.sku:  # every number said is the store's (the quantity, the place)
            item = big_store.get(intent.sku)
            assert said <= set(re.findall(r"\d+", f"{item.quantity} {item.location} {item.item}")), reply
        else:
            assert not said - set(re.findall(r"\d+", text)), reply
