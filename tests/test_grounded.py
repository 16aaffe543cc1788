"""edge.stages.grounded: the grounding guard, the tools on a real store, out-of-scope sentences, and the
turn run on a scripted engine (a neighbour of the unit: the guard and the tool runner are under test)
and, for the plumbing, on the real SmolLM2."""
from __future__ import annotations

import json

import pytest
from nlu_helpers import SMOLLM2, ReplayEngine

from edge.config import load_settings
from edge.llm.loader import build_llm
from edge.loop.build import attach_grounded, build_understanding
from edge.stages import reply
from edge.stages.dialog import act
from edge.stages.grounded import scope
from edge.stages.grounded.answer import GroundedAnswerer, calls_schema
from edge.stages.grounded.check import claims_action, grounded_or_plain, ungrounded_numbers
from edge.stages.grounded.tools import Toolbox, ToolResult, calculate
from edge.stages.nlu.asides import several_items

FIELDS = ("tool", "item", "place", "kind", "what", "period", "expression", "topic")


def calls(*cs: dict) -> str:
    return json.dumps({"calls": [{k: c.get(k) for k in FIELDS} for c in cs]})


def answerer(store, outputs, skus=None):
    """The answerer over ``store`` with a scripted engine; the shortlist is the first five items (or ``skus``)."""
    engine = ReplayEngine(outputs)
    items = {it.sku: it for it in store.items()}
    shortlist = [items[s] for s in skus] if skus else list(items.values())[:5]
    return GroundedAnswerer(engine, Toolbox(store), lambda text: shortlist), engine


# -------------------------------------------------------------------------------- the guard


def test_a_number_no_tool_returned_is_replaced_by_the_tools_sentence():
    stock = ToolResult.of("stock", {"item": "BLT-M8-30"}, "There are 140 M8 bolts in bin 12.")
    said, check = grounded_or_plain("12 x 8 = 96 M8 bolts.", [stock], "how many M8 bolts are in bin 12")
    assert said == "There are 140 M8 bolts in bin 12."
    assert check == {"ungrounded": [8.0, 96.0], "claimed_action": False, "replaced": True}  # "8" alone is no name


def test_a_grounded_answer_is_kept_and_number_words_count():
    results = [ToolResult.of("stock", {}, "There are 12 boxes of nitrile gloves on shelf A."),
               ToolResult.of("stock", {}, "There are 8 safety goggles on shelf B.")]
    said, check = grounded_or_plain("We have more gloves: twelve boxes against 8 goggles.", results, "more gloves or goggles")
    assert said.startswith("We have more gloves") and not check["replaced"]
    assert ungrounded_numbers("about fifteen goggles", results, "") == [15.0]


def test_a_claimed_action_is_replaced():
    results = [ToolResult.of("stock", {}, "There are 60 fuses in bin 30.")]
    said, check = grounded_or_plain("I've ordered 60 fuses for you.", results, "fuses")
    assert check["claimed_action"] and said == "There are 60 fuses in bin 30."
    assert claims_action("The air compressor is now off.") and not claims_action("There are 60 fuses in bin 30.")


def test_calculator_takes_arithmetic_only():
    assert calculate("140 / 5") == 28 and calculate("(12 + 8) * 2") == 40
    for bad in ("__import__('os')", "2 ** 100", "1/0", ""):
        with pytest.raises(ValueError):
            calculate(bad)


# -------------------------------------------------------------------------------- tools and turns


def test_tools_read_the_store_and_a_calculation_needs_known_numbers(inventory_store):
    box = Toolbox(inventory_store)
    assert box.run({"tool": "stock", "item": "FUS-5A"}, "fuses?", set()).text == "There are 60 fuses in bin 30."
    assert not box.run({"tool": "stock", "item": None}, "hammers?", set()).ok
    assert "fuse" in box.run({"tool": "place", "place": "bin 30"}, "what's in bin thirty", set()).text
    assert not box.run({"tool": "place", "place": "bin 30"}, "what's in the van", set()).ok  # a place nobody said
    assert box.run({"tool": "stock", "item": "FUS-5A"}, "how many hammers", set()).text == reply.UNKNOWN_ITEM
    assert box.run({"tool": "stock", "item": "FUS-5A", "place": "drawer 7"}, "fuses?", set()).text == \
        "There are 60 fuses in bin 30."  # the model's guessed place is not used
    assert "white paint" in box.run({"tool": "low_stock"}, "", set()).text
    refused = box.run({"tool": "calculate", "expression": "12 * 8"}, "", {12.0})
    assert not refused.ok and "8" in refused.text
    assert box.run({"tool": "calculate", "expression": "60 / 5"}, "", {60.0, 5.0}).text == "60 / 5 = 12."


def test_two_results_composed_with_an_invented_number_fall_back(inventory_store):
    a, engine = answerer(inventory_store, [calls({"tool": "stock", "item": "FUS-5A"},
                                                 {"tool": "records", "item": "FUS-5A", "kind": "total", "what": "used",
                                                  "period": "today"}),
                                           "We used 80 fuses today and have 60 left."])
    got = a.answer("how many fuses are left and how many did we use today")
    assert got.path == "plain" and got.check["ungrounded"] == [80.0]
    assert got.text.startswith("There are 60 fuses in bin 30.") and "80" not in got.text
    assert len(engine.requests) == 2
    assert engine.requests[0].json_schema == calls_schema([it.sku for it in inventory_store.items()][:5])


def test_a_what_if_runs_one_calculation_round_and_the_box_says_it(inventory_store):
    a, engine = answerer(inventory_store, [calls({"tool": "stock", "item": "FUS-5A"}), '{"expression": "60 / 5"}'])
    got = a.answer("if we use 5 fuses a day how many days will they last")  # a third model call fails the test
    assert got.text == "There are 60 fuses in bin 30. 60 divided by 5 is 12." and got.path == "calculated"
    assert got.rounds == 2 and len(engine.requests) == 2


@pytest.mark.parametrize("text,topic", [("turn off the air compressor", "machines"), ("set a timer for ten minutes", "timer"),
                                        ("what's the weather like tomorrow", "weather"),
                                        ("order 50 more fuses from the supplier", "order")])
def test_what_the_box_cannot_do_is_said_without_the_model(inventory_store, text, topic):
    a, engine = answerer(inventory_store, [])  # any model call fails the test
    got = a.answer(text)
    assert got.text == scope.CANNOT[topic] and got.path == "cannot" and not engine.requests


def test_how_to_questions_are_not_taken_as_commands():
    assert scope.topic("how do I reset the air compressor after an overload") is None
    assert scope.topic("who logged the gloves yesterday") is None
    assert scope.topic("can you switch on the lights in bay two") == "machines"


def test_a_cannot_call_gets_the_fixed_sentence_and_a_record_of_an_item_not_named_is_not_said(inventory_store):
    a, _engine = answerer(inventory_store, [calls({"tool": "cannot", "topic": "machines"})])
    assert a.answer("what is the capital of France").text == scope.CANNOT["other"]  # the words name no topic
    a, _engine = answerer(inventory_store, [calls({"tool": "records", "item": "FUS-5A", "kind": "total", "what": "used"})])
    assert a.answer("how do I reset the compressor after an overload").text == scope.CANNOT["other"]
    a, _engine = answerer(inventory_store, [calls({"tool": "records", "kind": "top", "what": "used", "period": "this year"})])
    assert a.answer("what year was this building built").text == scope.CANNOT["other"]


# -------------------------------------------------------------------------------- plumbing on SmolLM2


def test_smollm2_turns_write_nothing_and_say_only_what_tools_returned(inventory_store, tmp_path):
    settings = load_settings(overrides={"store": {"path": str(tmp_path / "unused.db")}, "output_dir": str(tmp_path)})
    assert settings.llm.model == SMOLLM2
    und = build_understanding(settings, inventory_store, build_llm(settings, lazy=True))
    attach_grounded(settings, und, inventory_store)
    before = len(inventory_store.records(last=1000))
    for k, text in enumerate(("could you give me a rundown on the drill bit situation", "who won the football last night",
                              "what's the nicest colour for a van")):
        intent = und.understand(text)
        reply = act(intent, inventory_store, text, f"t{k}").text
        assert reply
        if str(intent.explain.get("path", "")).startswith("grounded"):  # fixed sentences or what the tools said
            tools = [ToolResult.of(t["tool"], t["args"], t["text"]) for t in intent.explain.get("tools") or []]
            assert ungrounded_numbers(reply, tools, text) == []
    assert len(inventory_store.records(last=1000)) == before


def test_a_comparison_gets_a_stock_call_for_every_item_it_names_and_is_said_by_the_box(inventory_store):
    a, engine = answerer(inventory_store, [calls({"tool": "stock", "item": "FUS-5A"})])  # the drill bits left out
    got = a.answer("are there more fuses than drill bits")
    assert [r.args["item"] for r in got.results] == ["FUS-5A", "DRL-BIT-6"] and len(engine.requests) == 1
    assert got.text == ("There are 60 fuses in bin 30. There are 25 drill bits in drawer 4. "
                        "So there are more fuses than drill bits.")
    a, _engine = answerer(inventory_store, [calls({"tool": "stock", "item": "FUS-5A"}, {"tool": "stock", "item": "DRL-BIT-6"})])
    assert a.answer("fuses and drill bits combined").text.endswith("Together that is 85.")
    a, _engine = answerer(inventory_store, [calls({"tool": "stock", "item": "GLV-NIT-L"}, {"tool": "stock", "item": "GOG-SAF"})])
    assert a.answer("more gloves or goggles").text.endswith("They are counted in different units.")


def test_when_the_tools_picked_find_nothing_the_one_item_named_is_looked_up(inventory_store):
    a, _engine = answerer(inventory_store, [calls({"tool": "documents"})])  # no documents on this box
    got = a.answer("whats the story with the safety goggles")
    assert got.text == "There are 8 safety goggles on shelf B." and got.path == "tools"


def test_small_talk_is_the_models_only_when_it_states_no_fact(inventory_store):
    a, _engine = answerer(inventory_store, ["Morning! Hope the day treats you well."])
    assert a.answer("good morning").text == "Morning! Hope the day treats you well."
    a, _engine = answerer(inventory_store, ["Sure: 3 fuses walked into a bar and I logged them."])
    got = a.answer("tell me a joke")
    assert got.text == scope.SMALL_TALK["joke"] and got.check["replaced"]


def test_a_what_if_is_worked_out_over_the_stock_not_a_record(inventory_store):
    inventory_store.log("WSH-M8", 200, "we received 200 washers", "seed")
    a, engine = answerer(inventory_store, [calls({"tool": "records", "item": "WSH-M8", "kind": "last", "what": "received"}),
                                           '{"expression": "700 - 30"}'],
                          skus=["WSH-M8", "FUS-5A"])
    got = a.answer("suppose we take 30 washers, how many remain")
    assert [r.tool for r in got.results] == ["records", "stock", "calculate"]
    assert "200" not in engine.requests[1].messages[1]["content"]  # the calculation sees the stock only
    assert got.text == "There are 700 washers in bin 2023. 700 minus 30 is 670."  # no third round


def test_a_how_to_question_gets_the_documents_answer_or_decline_never_the_stock(inventory_store):
    a, _engine = answerer(inventory_store, [calls({"tool": "documents"}, {"tool": "stock", "item": "DRL-BIT-6"})])
    got = a.answer("what's the best way to sharpen a drill bit")
    assert got.text == reply.text("no_docs") and "25" not in got.text


def test_records_the_question_does_not_ask_for_give_way_to_the_stock_of_the_items_named(inventory_store):
    a, _engine = answerer(inventory_store, [calls({"tool": "records", "item": "FUS-5A", "kind": "total"},
                                                  {"tool": "records", "item": "DRL-BIT-6", "kind": "total"})])
    assert a.answer("what's the fuses and drill bits combined").text.endswith("Together that is 85.")


def test_one_items_total_stays_the_templates_and_two_items_go_to_the_tools(inventory_store):
    from edge.stages.nlu.understand import Understanding

    engine = ReplayEngine([calls({"tool": "stock", "item": "FUS-5A"}, {"tool": "stock", "item": "DRL-BIT-6"})])
    und = Understanding(inventory_store.items(), llm=engine)
    und.grounded = GroundedAnswerer(engine, Toolbox(inventory_store), und.llm_shortlist)
    one = und.understand("how many fuses do we have in total")
    assert one.source == "template" and not engine.requests
    two = und.understand("are there more fuses than drill bits")
    assert two.explain["path"] == "grounded:compared" and two.answer.endswith("So there are more fuses than drill bits.")


def test_a_stock_question_that_names_another_item_without_and_or_goes_to_the_tools(inventory_store):
    """The recognizer's "more" for "or": one item's stock alone would leave the other item out."""
    from edge.models.embed import Encoder
    from edge.stages.nlu.paraphrase import Paraphraser
    from edge.stages.nlu.understand import Understanding

    engine = ReplayEngine([calls({"tool": "stock", "item": "WSH-M8"}, {"tool": "stock", "item": "TIE-CBL-200"})])
    items = inventory_store.items()
    und = Understanding(items, llm=engine, paraphraser=Paraphraser(Encoder.load(), items))
    und.grounded = GroundedAnswerer(engine, Toolbox(inventory_store), und.llm_shortlist)
    for plain in ("how many cable ties are in drawer 7", "how many M8 bolts are in bin 12", "how many washers do we have"):
        got = und.understand(plain)
        assert got.source != "llm" and not got.explain.get("path", "").startswith("grounded"), plain
    assert not engine.requests
    two = und.understand("which do we have more on, washer more cable ties")
    assert two.explain["path"] == "grounded:compared", two.explain
    assert "500 washers" in two.answer and "300 cable ties" in two.answer


def test_a_records_call_takes_the_kind_of_record_the_question_names(inventory_store):
    inventory_store.log("FUS-5A", -3, "we used 3 fuses", "seed")
    a, _engine = answerer(inventory_store, [calls({"tool": "records", "item": "FUS-5A", "kind": "last", "what": "moved"})])
    got = a.answer("when were fuses last taken out")
    assert got.results[0].args["what"] == "used" and "moved" not in got.text and "3" in got.text


def test_a_sums_own_words_are_no_part_of_an_items_name(inventory_store):
    from edge.stages.nlu.understand import Understanding

    und = Understanding(inventory_store.items())
    assert several_items("what's the fuses and drill bits combined", und.grammar.resolve_item)
    assert not several_items("how many fuses do we have in total", und.grammar.resolve_item)
