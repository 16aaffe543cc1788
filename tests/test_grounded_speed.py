"""What keeps a grounded turn fast, on the real SmolLM2 (the plumbing; the default model's figures are
bench/llm_path_latency.py's): the system prompt's KV state is reused from one question to the next,
a turn runs at most two model rounds, and a composed sentence is handed on while the model still
generates."""
from __future__ import annotations

import pytest
from nlu_helpers import SMOLLM2

from edge.config import load_settings
from edge.llm.loader import build_llm
from edge.loop.build import attach_grounded, build_understanding
from edge.stages.grounded.answer import MAX_ROUNDS, GroundedAnswerer
from edge.stages.grounded.tools import Toolbox


@pytest.fixture()
def grounded(inventory_store, tmp_path):
    """The understanding with its grounded answers over SmolLM2, as the loop builds them."""
    settings = load_settings(overrides={"store": {"path": str(tmp_path / "unused.db")}, "output_dir": str(tmp_path)})
    assert settings.llm.model == SMOLLM2
    und = build_understanding(settings, inventory_store, build_llm(settings, lazy=True))
    attach_grounded(settings, und, inventory_store)
    assert isinstance(und.grounded, GroundedAnswerer)
    yield und
    und.llm.close()


def test_the_system_prompts_kv_state_is_reused_by_the_next_question(grounded):
    a = grounded.grounded
    first = a.answer("could you give me a rundown on the drill bit situation")
    assert first.rounds >= 1 and first.cache[0] in ("saved", "reused")
    a.answer("hello there")  # another system prompt in between evicts the KV cache's prefix
    second = a.answer("is the fuse bin looking healthy")
    third = a.answer("what's the story with the safety goggles")
    assert second.cache[0] in ("reused", "restored") and third.cache[0] == "reused"
    assert second.explain()["cache"] == second.cache


def test_a_turn_runs_at_most_two_model_rounds(grounded):
    for text in ("if we use 5 fuses a day how many days will they last", "suppose we take 30 washers, how many remain",
                 "how many fuses are left and how many did we use today"):
        g = grounded.grounded.answer(text)
        assert 1 <= g.rounds <= MAX_ROUNDS and len(g.cache) <= MAX_ROUNDS, (text, g)


def test_a_sentence_is_handed_on_while_the_model_still_generates(grounded):
    a = grounded.grounded
    engine = grounded.llm
    a.answer("who are you")  # the model loaded; its figures of that generation published
    before = engine.last_stats
    seen = []

    def on_sentence(sentence):  # an engine publishes a generation's figures only when the generation has ended
        seen.append((sentence, engine.last_stats is before))

    g = a.answer("hello there", on_sentence)  # SmolLM2: "Hello there! Welcome to my shop. …"
    assert g.path == "small_talk" and g.streamed == len(seen) >= 1, g
    sentence, still_generating = seen[0]
    assert still_generating and g.text.startswith(sentence) and engine.last_stats is not before


def test_the_understanding_speaks_a_streamed_answer_once(grounded):
    said = []
    intent = grounded.understand("hello there", on_sentence=said.append)
    assert said and " ".join(said) == intent.answer


def test_a_question_the_tools_answer_whole_is_handed_on_at_once(inventory_store):
    """No engine: the fixed sentences, and no model round."""
    a = GroundedAnswerer(None, Toolbox(inventory_store), lambda text: [])
    said = []
    g = a.answer("turn off the air compressor", said.append)
    assert g.rounds == 0 and not g.cache and not said  # the understanding hands a whole answer on itself
