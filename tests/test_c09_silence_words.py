"""C09 silence words: digital silence and mains hum give no intent and no record; a lone filler
word is dropped; a command after 2 s of silence, or after a leading filler, still works."""
from __future__ import annotations

import numpy as np
import pytest

from drivers.audio import SAMPLE_RATE
from tests.helpers import heard, of_type, run_session
from tests.synth import session

HUM_DBFS = -50.0


def hum(seconds: float, hz: float = 50.0) -> np.ndarray:
    """A 50 Hz sine at -50 dBFS (peak), int16 at 16 kHz."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return np.round(32767 * 10 ** (HUM_DBFS / 20) * np.sin(2 * np.pi * hz * t)).astype(np.int16)


@pytest.fixture
def run(rig_llm, inventory_store, tmp_path):
    settings, stages = rig_llm
    stages.store = inventory_store

    def go(*parts):
        wav = session(tmp_path / "in.wav", *parts)
        return run_session(stages, settings, wav, tmp_path), inventory_store

    return go


def _nothing_done(events, store):
    assert of_type(events, "intent") == [] and of_type(events, "reply") == []
    assert store.records() == []


def test_thirty_seconds_of_digital_silence(run):
    events, store = run(30.0)
    assert events == []
    events, store = run(0.5, "<wake>", 30.0)
    assert [e.type for e in events] == ["wake", "no_speech", "turn_end"]
    _nothing_done(events, store)


def test_thirty_seconds_of_hum_at_minus_50_dbfs(run):
    events, store = run(hum(30.0))
    assert events == []
    events, store = run(0.5, "<wake>", hum(30.0))
    assert of_type(events, "wake") and of_type(events, "no_speech")
    _nothing_done(events, store)


@pytest.mark.parametrize("filler", ["the", "um", "thank you"])
def test_a_lone_filler_word_is_dropped(run, filler):
    events, store = run(0.5, "<wake>", 0.4, filler, 2.0)
    assert of_type(events, "wake")
    _nothing_done(events, store)


def test_a_command_after_two_seconds_of_silence(run):
    events, store = run(0.5, "<wake>", 2.0, "how many fuses do we have", 1.5)
    (intent,) = of_type(events, "intent")
    assert (intent.intent, intent.slots["sku"]) == ("query_stock", "FUS-5A"), heard(events)


def test_a_leading_filler_does_not_break_the_command(run):
    events, store = run(0.5, "<wake>", 0.4, "um, we used two fuses", 1.5)
    (intent,) = of_type(events, "intent")
    assert (intent.intent, intent.slots["sku"], intent.slots["quantity"], intent.slots["direction"]) == \
        ("log_record", "FUS-5A", 2, "out"), heard(events)
    # logged, or (whisper often writes "we use": present tense may be a habit) read back before it is
    (reply,) = of_type(events, "reply")
    assert store.get("FUS-5A").quantity == 58 or (store.get("FUS-5A").quantity == 60 and reply.text.startswith(
        "Did you say 2 fuses used?")), (heard(events), reply.text)
