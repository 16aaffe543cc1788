"""Case C09: a lone filler word (Whisper's output for silence or hum) gives no intent, and a
leading filler does not break the command after it."""
import pytest

from edge.stages.nlu.filler import is_filler, strip_leading_fillers
from edge.stages.nlu.understand import Understanding
from tests.nlu_helpers import ReplayEngine, sample_items

FILLERS = ["the", "The.", "uh", "Um.", "um, uh", "you", "You", "thank you", "Thank you.", "Thank you. Thank you.",
           "thanks for watching", "Thanks for watching!", "Thank you for watching.", "[BLANK_AUDIO]", "(music)",
           "♪", "", "   ", "...", "?", "嗯", "谢谢观看", "Hmm..."]


@pytest.mark.parametrize("text", FILLERS)
def test_filler_is_filler(text):
    assert is_filler(text)


@pytest.mark.parametrize("text", ["how many", "undo", "thank you for the bolts", "the bolts", "you used three fuses",
                                  "tell me a joke", "M8螺栓还有多少", "撤销", "five"])
def test_words_that_say_something_are_not_filler(text):
    assert not is_filler(text)


@pytest.mark.parametrize("text", FILLERS)
def test_understand_returns_none_for_filler_and_never_asks_the_llm(text):
    engine = ReplayEngine([])  # any LLM call fails the test
    und = Understanding(sample_items(), engine)
    assert und.understand(text) is None
    assert engine.requests == []


@pytest.mark.parametrize("text, intent, slots", [
    ("um, how many M8 bolts are in bin twelve", "query_stock",
     {"sku": "BLT-M8-30", "quantity": None, "direction": None, "location": "bin 12"}),
    ("the how many M8 bolts are in bin twelve", "query_stock",
     {"sku": "BLT-M8-30", "quantity": None, "direction": None, "location": "bin 12"}),
    ("Uh, uh... we used three drill bits from drawer four.", "log_record",
     {"sku": "DRL-BIT-6", "quantity": 3, "direction": "out", "location": "drawer 4"}),
    ("Hmm, undo that.", "undo", {"sku": None, "quantity": None, "direction": None, "location": None}),
    ("So, add a dozen fuses.", "log_record", {"sku": "FUS-5A", "quantity": 12, "direction": "in", "location": None}),
])
def test_leading_filler_does_not_break_the_command(text, intent, slots):
    got = Understanding(sample_items(), None).understand(text)
    assert (got.intent, got.slots(), got.source, got.text) == (intent, slots, "template", text)


def test_strip_leading_fillers_keeps_the_rest():
    assert strip_leading_fillers("Um, How many M8 bolts?") == "How many M8 bolts?"
    assert strip_leading_fillers("umbrella stand") == "umbrella stand"
    assert strip_leading_fillers("there are five") == "there are five"
    assert strip_leading_fillers("uh") == "uh"  # nothing would be left: unchanged
