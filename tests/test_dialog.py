"""Ask-back and read-back: the box asks, and takes the answer without a new wake word."""
from __future__ import annotations

import dataclasses

import pytest

from edge.stages import dialog
from edge.stages.nlu.types import Intent
from tests.helpers import heard, of_type, run_session
from tests.synth import session


@pytest.fixture
def store(inventory_store):
    return inventory_store


def test_ambiguous_item_is_asked_back_and_the_answer_completes_the_log(store):
    intent = Intent("log_record", quantity=5, direction="in", text="add five M8", extra={"candidates": ["BLT-M8-30", "WSH-M8"]})
    out = dialog.act(intent, store, intent.text, "t1")
    assert out.pending and out.pending.kind == "choose_item" and out.record is None
    assert out.text == "M8 bolts or washers?"  # edge.stages.nlu.followup.ask_back_text
    assert store.records() == []
    done = dialog.follow_up(out.pending, "the washers", store, "t1")
    assert done.record is not None and done.record.sku == "WSH-M8" and done.record.delta == 5
    assert store.get("WSH-M8").quantity == 505
    assert "Logged 5 washers received" in done.text


def test_an_answer_naming_no_candidate_logs_nothing(store):
    intent = Intent("log_record", quantity=5, direction="in", extra={"candidates": ["BLT-M8-30", "WSH-M8"]})
    out = dialog.act(intent, store, "add five M8", "t1")
    done = dialog.follow_up(out.pending, "the purple elephants", store, "t1")
    assert done.record is None and done.pending is None and store.records() == []


def test_unknown_item_asks_which_and_takes_any_inventory_item(store):
    intent = Intent("query_stock", extra={"unknown_item": "sprockets"})
    out = dialog.act(intent, store, "how many sprockets", "t1")
    assert out.text == "Which item?" and out.pending.candidates == ()
    done = dialog.follow_up(out.pending, "zip ties", store, "t1")
    assert done.text == "There are 300 cable ties in drawer 7."


@pytest.mark.parametrize("answer,logged", [("yes", True), ("no", False), ("what", False)])
def test_log_below_zero_is_read_back_and_needs_yes(store, answer, logged):
    intent = Intent("log_record", sku="PNT-WHT", quantity=2, direction="out", text="we used two cans of white paint")
    out = dialog.act(intent, store, intent.text, "t1")
    assert out.pending.kind == "confirm" and "below zero" in out.text and store.records() == []
    done = dialog.follow_up(out.pending, answer, store, "t1")
    assert (done.record is not None) == logged
    assert store.get("PNT-WHT").quantity == (-2 if logged else 0)
    assert len(store.records()) == (1 if logged else 0)


def test_low_confidence_quantity_is_read_back(store):
    intent = Intent("log_record", sku="DRL-BIT-6", quantity=3, direction="out", extra={"low_confidence_quantity": True})
    out = dialog.act(intent, store, "we used three drill bits", "t1")
    assert out.text == "Did you say 3 drill bits used? Say yes to log it."
    confident = dataclasses.replace(intent, extra={})
    assert dialog.act(confident, store, "we used three drill bits", "t2").record is not None


@pytest.fixture(scope="module")
def loaded(rig_llm):
    return rig_llm


@pytest.mark.parametrize("answer,stock", [("yes", -2), ("no", 0)])
def test_read_back_answer_is_taken_without_a_wake_word(loaded, store, tmp_path, answer, stock):
    """Audio: wake word, "we used two cans of white paint" (stock is 0), a pause, then the answer
    with no wake word in between."""
    settings, stages = loaded
    stages.store = store
    wav = session(tmp_path / "s.wav", 0.5, "<wake>", 0.4, "we used two cans of white paint", 1.5, answer, 1.5)
    events = run_session(stages, settings, wav, tmp_path)
    assert len(of_type(events, "wake")) == 1
    assert [e.type for e in events if e.type in ("transcript", "reply")] == ["transcript", "reply", "transcript", "reply"], heard(events)
    question, final = of_type(events, "reply")
    assert "below zero" in question.text
    assert store.get("PNT-WHT").quantity == stock
    assert ("Logged 2 cans of white paint used" in final.text) == (answer == "yes")
    assert of_type(events, "turn_end")[-1].turn_id == question.turn_id  # one turn


def test_no_answer_within_the_window_logs_nothing(loaded, store, tmp_path):
    settings, stages = loaded
    stages.store = store
    wav = session(tmp_path / "s.wav", 0.5, "<wake>", 0.4, "we used two cans of white paint", 7.0)
    events = run_session(stages, settings, wav, tmp_path)
    assert [e.type for e in events][-2:] == ["no_speech", "turn_end"]
    assert store.records() == [] and store.get("PNT-WHT").quantity == 0


def test_an_absurd_quantity_is_refused_not_crashed(store):
    intent = Intent("log_record", sku="WSH-M8", quantity=10**23, direction="in")
    out = dialog.act(intent, store, "add a hundred sextillion washers", "t1")
    assert "nothing was logged" in out.text and store.records() == []
