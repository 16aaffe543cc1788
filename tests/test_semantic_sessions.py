"""Semantic endpointing on real recordings (the real wake word, Silero VAD, whisper, grammar):
every shared session gives the same intents as the fixed tail; a command with a 0.9 s pause in
the middle is not cut; whisper's partials arrive while the command is said."""
from __future__ import annotations

import pytest

from tests.helpers import EXPECTED, SESSIONS, heard, of_type, run_session
from tests.synth import session

SESSION_NAMES = sorted(k for k in EXPECTED if not k.startswith("_"))


def with_mode(settings, mode: str):
    return settings.model_copy(update={"endpoint": settings.endpoint.model_copy(update={"mode": mode})})


@pytest.fixture
def run(rig_grammar, tmp_path_factory):
    """``run(wav, mode)`` → the events, each run from a fresh store."""
    from edge.stock.store import Store
    from tests.helpers import INVENTORY

    settings, stages = rig_grammar

    def go(wav, mode):
        d = tmp_path_factory.mktemp(mode)
        stages.store = Store(d / "edge.db")
        stages.store.import_csv(INVENTORY)
        try:
            return run_session(stages, with_mode(settings, mode), wav, d)
        finally:
            stages.store.close()

    return go


def intents(events) -> list[tuple]:
    return [(i.intent, i.slots["sku"], i.slots["quantity"], i.slots["direction"]) for i in of_type(events, "intent")]


@pytest.mark.parametrize("name", SESSION_NAMES)
def test_semantic_endpointing_gives_the_fixed_tails_intents(run, name):
    wav = SESSIONS / f"{name}.wav"
    fixed, semantic = run(wav, "fixed"), run(wav, "semantic")
    assert intents(semantic) == intents(fixed), (heard(fixed), heard(semantic))
    # the same words (whisper may capitalise "M8" differently on a window cut elsewhere)
    assert [t.text.casefold() for t in of_type(semantic, "transcript")] == \
        [t.text.casefold() for t in of_type(fixed, "transcript")]
    if of_type(fixed, "transcript"):
        assert {e.reason for e in of_type(fixed, "endpoint")} == {"vad_tail"}
    for e in of_type(semantic, "endpoint"):
        assert e.reason in ("complete", "incomplete", "vad_tail"), e
    if EXPECTED[name].get("intent") in ("query_stock", "log_record", "undo"):
        ends = of_type(semantic, "endpoint")
        assert ends and ends[0].reason == "complete", ends  # a grammar command ends at the short silence


def test_a_pause_of_900_ms_inside_a_command_does_not_cut_it(run, tmp_path):
    wav = session(tmp_path / "pause.wav", 0.5, "<wake>", 0.4, "we used three drill bits from", 0.9,
                  "drawer four", 1.5)
    events = run(wav, "semantic")
    assert len(of_type(events, "transcript")) == 1, heard(events)
    assert intents(events) == [("log_record", "DRL-BIT-6", 3, "out")], heard(events)
    assert "drawer" in of_type(events, "transcript")[0].text.lower(), heard(events)
    (end,) = of_type(events, "endpoint")
    assert end.reason == "complete"


def test_whisper_partials_arrive_while_the_command_is_said(run):
    events = run(SESSIONS / "log_washers_numbers.wav", "semantic")
    partials, (end,) = of_type(events, "partial"), of_type(events, "endpoint")
    wake = of_type(events, "wake")[0]
    assert partials and all(p.text.strip() and p.engine == "whisper" for p in partials)
    assert all(wake.t_ms < p.t_ms < end.t_ms for p in partials)


def test_a_partial_budget_holds_for_one_utterance_only(run, rig_grammar):
    """Another user of the loop's recognizer (the Wyoming service) gets no partial re-decodes."""
    from drivers.audio import wav_frames

    run(SESSIONS / "log_washers_numbers.wav", "semantic")
    asr = rig_grammar[1].asr
    before = asr.partials
    asr.start()
    for f in wav_frames(SESSIONS / "log_washers_numbers.wav"):
        assert asr.accept(f) is None
    assert "105" in asr.finish().text and asr.partials == before
