"""The voice loop (edge.loop.pipeline.Pipeline, the unit under test) over stand-in stages: turn
states and their events, the follow-up window, barge-in, the wake guard after speaking (C03), no
speech, a stage that raises. The stand-ins (tests/standins.py) follow a script of frames instead
of models; the store is a real SQLite file and understanding the real grammar path, so each test
runs in milliseconds."""
from __future__ import annotations

import inspect
import json
import sqlite3
from pathlib import Path

import pytest

from edge.config import EndpointSettings
from edge.governor.governor import Governor
from edge.llm.chain import EngineChain
from edge.loop.build import printer
from edge.loop.pipeline import Pipeline
from edge.loop.stages import (
    Inventory,
    ResourceGovernor,
    Speaker,
    Stages,
    Synthesizer,
    Understander,
    VoiceActivity,
    WakeDetector,
)
from edge.loop.state import TRANSITIONS, TurnState
from edge.service.supervisor import SmokeError, smoke_inference
from edge.stages.asr.base import Recognizer
from edge.stages.asr.vosk import VoskRecognizer
from edge.stages.asr.whisper import WhisperRecognizer
from edge.stages.nlu.understand import Understanding
from edge.stages.tts.engine import WatchdogTts
from edge.stages.tts.speaker import DeviceSpeaker, TimelineSpeaker
from edge.stages.vad import SileroVad
from edge.stages.wake import WakeWord
from edge.stock.store import Store
from tests.helpers import INVENTORY
from tests.standins import (
    BusySpeaker,
    Script,
    ScriptedLlm,
    ScriptedRecognizer,
    ScriptedVad,
    ScriptedWake,
    SilentTts,
    at,
    index,
)

QUERY = "how many cable ties do we have"
PAINT = "we used two cans of white paint"  # white paint is at 0: the box asks before going below zero


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "edge.db")
    s.import_csv(INVENTORY)
    yield s
    s.close()


def command(script: Script, speech_ms: int = 1200) -> Script:
    """A wake word, a short pause, a command."""
    return script.wake().quiet(160).say(speech_ms)


def stages_for(script: Script, store, texts, *, fail_asr=(), tts=None, llm=None, inventory=None,
               speculations=None, rechecks=None) -> Stages:
    return Stages(wake=ScriptedWake(script), vad=ScriptedVad(script),
                  asr=ScriptedRecognizer(texts, fail_asr, speculations, rechecks),
                  understanding=Understanding(store.items(), llm), store=inventory or store, tts=tts or SilentTts())


def run(stages: Stages, script: Script, out, *, speaker=None, echo_cancellation=False, follow_up_ms=5000, bias=True):
    events: list = []
    p = Pipeline(stages, EndpointSettings(), out, events.append, speaker=speaker, guard_ms=1500,
                 echo_cancellation=echo_cancellation)
    p.follow_up_ms = follow_up_ms
    p.vocabulary.bias = bias
    for frame in script.frames():
        p.feed(frame)
    p.finish()
    changes = [(e.previous, e.state) for e in events if e.type == "state"]
    assert all(TurnState(b) in TRANSITIONS[TurnState(a)] for a, b in changes), changes
    assert p.state is TurnState.LISTENING  # every stream ends listening
    return events, p


def of(events, t: str) -> list:
    return [e for e in events if e.type == t]


def kinds(events) -> list[str]:
    return [e.type for e in events if e.type != "state"]


def states(events) -> list[str]:
    return [e.state for e in events if e.type == "state"]


def state_at(events, state: str) -> list[int]:
    return [e.t_ms for e in events if e.type == "state" and e.state == state]


# -- turn state ------------------------------------------------------------------------------------


def test_a_turn_passes_its_states_in_order_each_change_an_event(store, tmp_path, capsys):
    script = command(Script().quiet(400)).quiet(1500)
    events, p = run(stages_for(script, store, [QUERY]), script, tmp_path)
    assert [e.type for e in events] == ["wake", "state", "endpoint", "state", "transcript", "state", "intent",
                                        "state", "reply", "turn_end", "state"]
    assert states(events) == ["awake", "transcribing", "understanding", "speaking", "listening"]
    assert of(events, "intent")[0].slots["sku"] == "TIE-CBL-200" and "300" in of(events, "reply")[0].text
    wake, awake = events[0], events[1]
    assert json.loads(awake.to_json()) == {"type": "state", "t_ms": wake.t_ms, "turn_id": wake.turn_id,
                                           "state": "awake", "previous": "listening"}
    emit = printer(json_lines=True)  # edge run --json
    for e in events:
        emit(e)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(d["type"], d.get("state")) for d in lines if d["type"] == "state"] == [("state", s) for s in states(events)]


def test_speaking_lasts_while_the_speaker_plays(store, tmp_path):
    script = command(Script().quiet(400)).quiet(2500)
    spk = BusySpeaker(960)
    events, _ = run(stages_for(script, store, [QUERY]), script, tmp_path, speaker=spk)
    (reply,) = of(events, "reply")
    assert state_at(events, "speaking") == [reply.t_ms]
    assert state_at(events, "listening") == [reply.t_ms + 960]  # the first frame the speaker is silent
    assert spk.played and spk.played[0][0] == reply.t_ms


def test_no_speech_after_the_wake_word(store, tmp_path):
    script = Script().quiet(400).wake().quiet(6000)
    stages = stages_for(script, store, [QUERY])
    events, _ = run(stages, script, tmp_path)
    assert kinds(events) == ["wake", "no_speech", "turn_end"]
    assert states(events) == ["awake", "listening"]
    assert 5000 <= of(events, "no_speech")[0].waited_ms < 5000 + 80  # endpoint.no_speech_timeout_ms
    assert stages.asr.utterances == 0


def test_an_empty_transcript_is_no_speech(store, tmp_path):
    script = command(Script().quiet(400)).quiet(1500)
    events, _ = run(stages_for(script, store, [""]), script, tmp_path)
    assert kinds(events) == ["wake", "endpoint", "transcript", "no_speech", "turn_end"]
    assert states(events) == ["awake", "transcribing", "listening"]


def test_the_end_of_the_stream_closes_an_open_turn(store, tmp_path):
    script = command(Script().quiet(400), speech_ms=800)  # the stream stops while the command is said
    events, _ = run(stages_for(script, store, [QUERY]), script, tmp_path)
    assert kinds(events) == ["wake", "endpoint", "transcript", "intent", "reply", "turn_end"]
    assert of(events, "endpoint")[0].reason == "stream_end"


# -- follow-up --------------------------------------------------------------------------------------


def test_the_answer_to_a_question_needs_no_wake_word_and_is_heard_after_the_question(store, tmp_path):
    script = command(Script().quiet(400)).quiet(2000).say(400).quiet(1500)
    stages = stages_for(script, store, [PAINT, "yes"])
    events, _ = run(stages, script, tmp_path, speaker=BusySpeaker(800))
    assert kinds(events) == ["wake", "endpoint", "transcript", "intent", "reply", "endpoint", "transcript", "intent",
                             "reply", "turn_end"]
    assert states(events) == ["awake", "transcribing", "understanding", "speaking", "follow_up", "transcribing",
                              "understanding", "speaking", "listening"]
    question, final = of(events, "reply")
    assert "below zero" in question.text and "Logged 2 cans of white paint used" in final.text
    assert store.get("PNT-WHT").quantity == -2
    assert of(events, "turn_end")[0].turn_id == of(events, "wake")[0].turn_id  # one turn
    assert state_at(events, "follow_up") == [question.t_ms + 800]  # once the question was said
    said = range(at(question.t_ms) + 1, at(question.t_ms + 800))
    assert not set(said) & set(stages.vad.scored)  # nothing endpointed while the box asked


def test_an_answer_said_the_moment_the_question_ends_is_heard_from_its_first_frame(store, tmp_path):
    """A follow-up has no wake phrase whose tail the endpointer must let pass."""
    probe = command(Script().quiet(400)).quiet(3000)
    events, _ = run(stages_for(probe, store, [PAINT]), probe, tmp_path / "probe", speaker=BusySpeaker(800))
    opens = at(state_at(events, "follow_up")[0])
    script = command(Script().quiet(400))
    script.quiet(80 * (opens - script.n)).say(400).quiet(1500)
    stages = stages_for(script, store, [PAINT, "yes"])
    events, _ = run(stages, script, tmp_path, speaker=BusySpeaker(800))
    assert at(state_at(events, "follow_up")[0]) == opens
    assert stages.asr.frames[0] == opens  # the utterance starts with its first frame
    assert store.get("PNT-WHT").quantity == -2


def test_a_command_of_its_own_said_as_the_answer_is_a_new_command_not_the_answers_number(store, tmp_path):
    # "how many?" about the washers, then a whole other command with a number in it
    script = command(Script().quiet(400)).quiet(2000).say(400).quiet(1500)
    stages = stages_for(script, store, ["we received some washers", "we used sixteen cable ties"])
    events, _ = run(stages, script, tmp_path, speaker=BusySpeaker(800))
    question = of(events, "reply")[0]
    assert "how many" in question.text.lower(), question.text
    assert [(r.sku, r.delta) for r in store.records()] == [("TIE-CBL-200", -16)]  # never 16 washers


def test_a_wake_word_instead_of_the_answer_starts_a_new_turn(store, tmp_path):
    script = command(Script().quiet(400)).quiet(3500)  # past the question and the guard after it
    command(script).quiet(1500)
    stages = stages_for(script, store, [PAINT, QUERY])
    events, _ = run(stages, script, tmp_path, speaker=BusySpeaker(800))
    first, second = of(events, "wake")
    assert "below zero" in of(events, "reply")[0].text
    assert [e.turn_id for e in of(events, "turn_end")] == [first.turn_id, second.turn_id]
    assert [i.intent for i in of(events, "intent")][-1] == "query_stock"  # the new command, not "no yes heard"
    assert store.get("PNT-WHT").quantity == 0 and store.records() == []


def test_no_answer_within_the_follow_up_window_logs_nothing(store, tmp_path):
    script = command(Script().quiet(400)).quiet(4000)
    events, _ = run(stages_for(script, store, [PAINT]), script, tmp_path, follow_up_ms=2000)
    assert kinds(events)[-3:] == ["reply", "no_speech", "turn_end"]
    assert states(events)[-2:] == ["follow_up", "listening"]
    assert 2000 <= of(events, "no_speech")[0].waited_ms < 2000 + 80
    assert store.records() == [] and store.get("PNT-WHT").quantity == 0


def test_a_question_still_unanswered_when_the_stream_ends_gets_no_speech(store, tmp_path):
    script = command(Script().quiet(400)).quiet(800)
    events, _ = run(stages_for(script, store, [PAINT]), script, tmp_path, speaker=BusySpeaker(5000))
    assert kinds(events)[-3:] == ["reply", "no_speech", "turn_end"]
    assert store.records() == []


# -- the box hearing itself (C03) and barge-in ---------------------------------------------------------


def first_reply_ms(store, tmp_path, busy_ms: int) -> tuple[Script, int]:
    """The command prefix and the audio time its reply starts (learnt from a run)."""
    prefix = command(Script().quiet(400))
    probe = Script().quiet(400).wake().quiet(160).say(1200).quiet(busy_ms + 3000)
    events, _ = run(stages_for(probe, store, [QUERY]), probe, tmp_path / "probe", speaker=BusySpeaker(busy_ms))
    return prefix, of(events, "reply")[0].t_ms


def test_wake_words_while_speaking_and_within_the_guard_after_are_ignored(store, tmp_path):
    prefix, t_reply = first_reply_ms(store, tmp_path, 960)
    guard_end = t_reply + 960 + 1500  # speaking ends, then guard_ms
    real = t_reply + 2880  # a frame after the guard
    script = prefix.quiet(80 * (at(real) - prefix.n))
    command(script).quiet(1500)
    script.wake_at(t_reply + 480).wake_at(t_reply + 2400)  # while speaking; in the guard's last frame
    assert t_reply + 2400 <= guard_end < t_reply + 2480
    stages = stages_for(script, store, [QUERY, QUERY])
    events, p = run(stages, script, tmp_path, speaker=BusySpeaker(960))
    assert p.suppressed == 2
    assert [w.t_ms for w in of(events, "wake")][1:] == [real]
    assert len(of(events, "reply")) == 2


@pytest.mark.parametrize("echo_cancellation", [True, False])
def test_a_wake_word_over_the_reply_is_a_barge_in_only_with_echo_cancellation(store, tmp_path, echo_cancellation):
    prefix, t_reply = first_reply_ms(store, tmp_path, 3000)
    script = prefix.quiet(80 * (at(t_reply + 480) - prefix.n))
    command(script).quiet(1500)
    spk = BusySpeaker(3000)
    events, p = run(stages_for(script, store, [QUERY, "how many fuses do we have"]), script, tmp_path,
                    speaker=spk, echo_cancellation=echo_cancellation)
    wakes = of(events, "wake")
    if echo_cancellation:
        assert len(wakes) == 2 and wakes[1].t_ms == t_reply + 480 and spk.stopped == 1 and p.suppressed == 0
        assert ("speaking", "awake") in [(e.previous, e.state) for e in events if e.type == "state"]
        assert [i.slots["sku"] for i in of(events, "intent")] == ["TIE-CBL-200", "FUS-5A"]
    else:
        assert len(wakes) == 1 and spk.stopped == 0 and p.suppressed == 1


def test_a_barge_in_over_a_question_ends_its_turn(store, tmp_path):
    script = command(Script().quiet(400)).quiet(1200)
    command(script).quiet(1500)
    stages = stages_for(script, store, [PAINT, QUERY])
    events, _ = run(stages, script, tmp_path, speaker=BusySpeaker(5000), echo_cancellation=True)
    first, second = of(events, "wake")
    question = of(events, "reply")[0]
    assert "below zero" in question.text and question.t_ms < second.t_ms < question.t_ms + 5000
    ends = of(events, "turn_end")
    assert [e.turn_id for e in ends] == [first.turn_id, second.turn_id]
    assert store.get("PNT-WHT").quantity == 0  # the question was never answered


# -- a stage that raises ---------------------------------------------------------------------------------


class LockedOnce:
    """The real store, except that its first write fails as a locked SQLite file does."""

    def __init__(self, store):
        self.store, self.writes = store, 0

    def items(self):
        return self.store.items()

    def items_version(self):
        return self.store.items_version()

    def records(self, last=None):
        return self.store.records(last)

    def get(self, sku):
        return self.store.get(sku)

    def log(self, sku, delta, utterance, turn_id, location=None):
        self.writes += 1
        if self.writes == 1:
            raise sqlite3.OperationalError("database is locked")
        return self.store.log(sku, delta, utterance, turn_id, location)

    def undo(self, utterance, turn_id, sku=None):
        return self.store.undo(utterance, turn_id, sku)

    def site_offline(self):
        return self.store.site_offline()


@pytest.mark.parametrize("stage", ["asr", "nlu", "store", "tts"])
def test_the_error_names_the_stage_that_raised_and_the_next_turn_works(store, tmp_path, stage):
    first = {"asr": QUERY, "nlu": "tell me a joke about owls", "store": "we used two drill bits", "tts": QUERY}[stage]
    script = command(Script().quiet(400)).quiet(1500)
    command(script).quiet(1500)
    stages = stages_for(script, store, [first, QUERY], fail_asr=(1,) if stage == "asr" else (),
                        # the first request is the reply prepared during the tail, whose failure only
                        # means it is synthesized again after the endpoint: fail that one too
                        tts=SilentTts(fail=(1, 2)) if stage == "tts" else None,
                        llm=ScriptedLlm(broken=True) if stage == "nlu" else None,
                        inventory=LockedOnce(store) if stage == "store" else None)
    events, _ = run(stages, script, tmp_path)
    (err,) = of(events, "error")
    assert err.stage == stage, err
    assert err.turn_id == of(events, "wake")[0].turn_id
    assert len(of(events, "turn_end")) == 2 and of(events, "turn_end")[0].turn_id == err.turn_id
    assert states(events)[states(events).index("awake", 1) - 1] == "listening"  # back to listening, then turn 2
    assert "300" in of(events, "reply")[-1].text  # the next turn is answered
    if stage == "store":
        assert store.records() == []


def test_a_store_failing_at_the_wake_word_is_reported_and_the_turn_goes_on(store, tmp_path):
    script = command(Script().quiet(400)).quiet(1500)
    stages = stages_for(script, store, [QUERY])

    class Unreadable(LockedOnce):
        def items(self):
            raise sqlite3.OperationalError("disk I/O error")

    stages.store = Unreadable(store)
    events, _ = run(stages, script, tmp_path)
    (err,) = of(events, "error")
    assert err.stage == "store" and "disk I/O error" in err.message
    assert kinds(events) == ["wake", "error", "endpoint", "transcript", "intent", "reply", "turn_end"]


class FailingWake(ScriptedWake):
    """The wake-word stand-in, raising on the frames in ``broken`` (an ONNX runtime error)."""

    def __init__(self, script: Script, broken: range):
        super().__init__(script)
        self.broken = broken

    def process(self, frame):
        if index(frame) in self.broken:
            raise RuntimeError("onnxruntime: invalid input")
        return super().process(frame)


class FailingVad(ScriptedVad):
    """The VAD stand-in, raising on the frames in ``broken``."""

    def __init__(self, script: Script, broken: range):
        super().__init__(script)
        self.broken = broken

    def probability(self, frame):
        if index(frame) in self.broken:
            raise RuntimeError("onnxruntime: invalid input")
        return super().probability(frame)


def test_a_wake_word_failing_while_listening_is_reported_once_and_the_loop_goes_on(store, tmp_path):
    script = Script().quiet(2000)
    command(script).quiet(1500)
    stages = stages_for(script, store, [QUERY])
    stages.wake = FailingWake(script, range(3, 20))  # 17 frames in a row fail, then it recovers
    events, _ = run(stages, script, tmp_path)
    (err,) = of(events, "error")
    assert err.stage == "wake" and "invalid input" in err.message
    assert kinds(events) == ["error", "wake", "endpoint", "transcript", "intent", "reply", "turn_end"]
    assert "300" in of(events, "reply")[0].text


def test_a_vad_failing_in_a_turn_ends_that_turn_with_its_stage_and_the_next_turn_works(store, tmp_path):
    script = command(Script().quiet(400)).quiet(1500)
    first_turn = range(script.n)
    command(script).quiet(1500)
    stages = stages_for(script, store, [QUERY])
    stages.vad = FailingVad(script, range(first_turn.stop - 20, first_turn.stop - 19))
    events, _ = run(stages, script, tmp_path)
    (err,) = of(events, "error")
    assert err.stage == "vad"
    assert kinds(events)[:3] == ["wake", "error", "turn_end"]
    assert len(of(events, "reply")) == 1 and "300" in of(events, "reply")[0].text


# -- the LLM as the loop uses it -------------------------------------------------------------------------


def test_the_llm_is_ticked_about_once_a_second_while_listening_and_a_reload_is_reported(store, tmp_path):
    llm = ScriptedLlm(reload_ms=1234.5)
    quiet = Script().quiet(10400)
    run(stages_for(quiet, store, [], llm=llm), quiet, tmp_path)
    assert llm.ticks == 10  # t = 1040, 2080, ... 10400 ms
    script = command(Script().quiet(400)).quiet(1500)
    events, _ = run(stages_for(script, store, [QUERY], llm=llm), script, tmp_path)
    assert of(events, "turn_end")[0].latency_ms["llm_reload_ms"] == 1234.5


def test_smoke_inference_asks_the_engine(store, tmp_path):
    def with_llm(llm):
        return stages_for(Script(), store, [], llm=llm)

    assert smoke_inference(with_llm(None)) == "no LLM configured (grammar path only)"
    assert smoke_inference(with_llm(ScriptedLlm())) == "scripted-llm passed its smoke inference"
    with pytest.raises(SmokeError, match="scripted-llm.*crashed"):
        smoke_inference(with_llm(ScriptedLlm(broken=True)))
    assert smoke_inference(with_llm(EngineChain([]))).startswith("degraded: no LLM step")


# -- the real stages keep the protocols ------------------------------------------------------------------


def members(proto) -> dict[str, list[str]]:
    """The protocol's methods with their parameter names."""
    return {n: list(inspect.signature(f).parameters) for n, f in vars(proto).items()
            if callable(f) and not n.startswith("_")}


@pytest.mark.parametrize("proto,classes", [
    (WakeDetector, [WakeWord, ScriptedWake]), (VoiceActivity, [SileroVad, ScriptedVad]),
    (Recognizer, [WhisperRecognizer, VoskRecognizer, ScriptedRecognizer]), (Understander, [Understanding]),
    (Inventory, [Store, LockedOnce]), (Synthesizer, [WatchdogTts, SilentTts]),
    (Speaker, [TimelineSpeaker, DeviceSpeaker, BusySpeaker]), (ResourceGovernor, [Governor])])
def test_the_real_stages_and_the_stand_ins_have_the_protocols_methods(proto, classes):
    want = members(proto)
    assert want
    for cls in classes:
        got = {n: list(inspect.signature(getattr(cls, n)).parameters) for n in want if callable(getattr(cls, n, None))}
        assert got == want, cls
    if proto is Speaker:
        assert all(isinstance(cls.realtime, bool) for cls in classes)
    if proto is Recognizer:
        assert all(isinstance(cls.name, str) for cls in classes)


# -- endpointing: partials, semantic end, speculation without side effects ------------------------------

LOG = "we used three drill bits from drawer four"


def said(script: Script, *parts) -> Script:
    """A wake word, a short pause, then ``parts``: ms of speech and ("pause", ms) of silence."""
    script.wake().quiet(160)
    for p in parts:
        script.quiet(p[1]) if isinstance(p, tuple) else script.say(p)
    return script


def last_speech_ms(script: Script) -> int:
    """The audio time the pipeline processes the last speech frame at."""
    return 80 * (max(script.speech) + 1)


def run_mode(stages, script, out, mode: str = "semantic", emit=None, **endpoint):
    events: list = []

    def keep(e):
        events.append(e)
        if emit is not None:
            emit(e)

    p = Pipeline(stages, EndpointSettings(mode=mode, **endpoint), out, keep, guard_ms=1500)
    for frame in script.frames():
        p.feed(frame)
    p.finish()
    assert p.state is TurnState.LISTENING
    return events, p


@pytest.mark.parametrize("mode,reason,after_ms", [("semantic", "complete", 320), ("fixed", "vad_tail", 720)])
def test_a_complete_command_ends_after_the_short_silence_or_the_fixed_tail(store, tmp_path, mode, reason, after_ms):
    script = said(Script().quiet(400), 1200).quiet(1500)
    stages = stages_for(script, store, [QUERY])
    events, _ = run_mode(stages, script, tmp_path, mode)
    (end,) = of(events, "endpoint")
    assert end.reason == reason and end.t_ms == last_speech_ms(script) + after_ms  # 250 → 4 frames, 700 → 9
    assert kinds(events) == ["wake", "endpoint", "transcript", "intent", "reply", "turn_end"]
    assert "300" in of(events, "reply")[0].text
    if mode == "semantic":
        assert end.text == QUERY and stages.asr.speculated == [QUERY]
        assert stages.asr.partials == (1000, 0.1)  # endpoint.partial_interval_ms, partial_cpu_fraction
    else:
        assert end.text == "" and stages.asr.speculated == [] and stages.asr.partials == (1000, 0.0)


# (what the recognizer has when the speaker pauses, what the whole command is)
DANGLING = [
    ("we took twelve boxes of", "we took twelve boxes of nitrile gloves"),
    ("how many cable ties and", "how many cable ties and fuses do we have"),
    ("we used three drill bits from", LOG),
    ("add one hundred and five", "add one hundred and five washers to bin two oh two three"),
    ("how many um", "how many fuses do we have"),
    ("we took twelve sprockets", "we took twelve nitrile gloves"),  # an item not (yet) known
    ("how many m8 bolts are in bin", "how many m8 bolts are in bin twelve"),
]


@pytest.mark.parametrize("pause_ms", [320, 480, 640, 800, 880])
@pytest.mark.parametrize("partial,whole", DANGLING)
def test_an_incomplete_command_is_never_cut_at_a_pause_up_to_900_ms(store, tmp_path, partial, whole, pause_ms):
    script = said(Script().quiet(400), 800, ("pause", pause_ms), 640).quiet(2500)
    stages = stages_for(script, store, [whole], speculations=[partial, whole])
    events, _ = run_mode(stages, script, tmp_path)
    (end,) = of(events, "endpoint")
    assert end.reason == "complete" and end.text == whole
    assert end.t_ms == last_speech_ms(script) + 320  # after the second part, not in the pause
    assert [t.text for t in of(events, "transcript")] == [whole]
    second = set(range(at(last_speech_ms(script)) - 640 // 80 + 1, at(last_speech_ms(script)) + 1))
    assert second <= set(stages.asr.frames)  # the recognizer heard the part after the pause
    pause = set(range(min(second) - pause_ms // 80, min(second)))
    assert pause <= set(stages.asr.frames)  # ... and the pause itself, once speech resumed
    assert stages.asr.speculated == [partial, whole]


def test_an_incomplete_command_that_stops_ends_after_the_longer_wait(store, tmp_path):
    script = said(Script().quiet(400), 1200).quiet(2500)
    stages = stages_for(script, store, [""], speculations=["we used three drill bits from"])
    events, _ = run_mode(stages, script, tmp_path)
    (end,) = of(events, "endpoint")
    assert end.reason == "incomplete" and end.t_ms == last_speech_ms(script) + 1520  # 1500 ms → 19 frames


def test_what_the_grammar_cannot_judge_gets_the_plain_tail_and_the_cap_still_holds(store, tmp_path):
    script = said(Script().quiet(400), 1200).quiet(1500)
    stages = stages_for(script, store, ["tell me a joke about owls"])
    events, _ = run_mode(stages, script, tmp_path)
    assert [(e.reason, e.t_ms - last_speech_ms(script)) for e in of(events, "endpoint")] == [("vad_tail", 720)]
    long = said(Script().quiet(400), 10400).quiet(1000)
    events, _ = run_mode(stages_for(long, store, [QUERY]), long, tmp_path)
    assert [e.reason for e in of(events, "endpoint")] == ["max_length"]


@pytest.mark.parametrize("after_ms", [160, 80])
def test_silence_past_the_speculation_reaches_the_recognizer_only_when_speech_resumes(store, tmp_path, after_ms):
    script = said(Script().quiet(400), 800, ("pause", 480), 400).quiet(1500)
    stages = stages_for(script, store, [LOG], speculations=["we used three drill bits from", LOG])
    events, _ = run_mode(stages, script, tmp_path, speculate_after_ms=after_ms)
    end = at(last_speech_ms(script))
    # speech, the pause inside it, then only the final silence the speculation decoded (2 frames or 1)
    assert max(stages.asr.frames) == end + after_ms // 80
    assert stages.asr.speculated == ["we used three drill bits from", LOG]
    (ep,) = of(events, "endpoint")  # the grammar still decides after semantic_silence_ms (250 → 4 frames)
    assert ep.reason == "complete" and ep.t_ms == last_speech_ms(script) + 320


def test_the_turns_latencies_say_what_the_speculation_took(store, tmp_path):
    script = said(Script().quiet(400), 1200).quiet(1500)
    events, _ = run_mode(stages_for(script, store, [LOG]), script, tmp_path)
    (end,) = of(events, "turn_end")
    spec = {"speculation_decode_ms", "speculation_nlu_ms", "speculation_tts_ms"}
    assert spec <= set(end.latency_ms) and all(end.latency_ms[k] >= 0 for k in spec)
    events, _ = run_mode(stages_for(script, store, [LOG]), script, tmp_path, "fixed")
    (end,) = of(events, "turn_end")
    assert not spec & set(end.latency_ms)  # the fixed tail prepares nothing


@pytest.mark.parametrize("after_ms", [160, 80])
def test_nothing_is_written_before_the_endpoint_and_the_prepared_reply_is_used(store, tmp_path, after_ms):
    script = said(Script().quiet(400), 1200).quiet(1500)
    tts = SilentTts()
    stages = stages_for(script, store, [LOG], tts=tts)
    at_endpoint: list = []

    def check(e):
        if e.type == "endpoint":  # what the store and the speech engine had when the utterance ended
            at_endpoint.append((store.records(), list(tts.texts)))

    events, _ = run_mode(stages, script, tmp_path, emit=check, speculate_after_ms=after_ms)
    (records, prepared), = at_endpoint
    assert records == [] and len(prepared) == 1  # the reply was ready, nothing was written
    assert [r.delta for r in store.records()] == [-3] and store.get("DRL-BIT-6").quantity == 22
    (reply,) = of(events, "reply")
    assert tts.texts == [reply.text]  # synthesized once, during the tail, for the reply said
    assert Path(reply.audio).exists()


@pytest.mark.parametrize("after_ms", [160, 80])
def test_the_final_transcript_decides_over_the_speculation(store, tmp_path, after_ms):
    script = said(Script().quiet(400), 1200).quiet(1500)
    tts = SilentTts()
    stages = stages_for(script, store, ["we used two drill bits"], tts=tts, speculations=[LOG])
    events, _ = run_mode(stages, script, tmp_path, speculate_after_ms=after_ms)
    (end,) = of(events, "endpoint")
    assert end.text == LOG  # the speculation ended the utterance ...
    (intent,), (reply,) = of(events, "intent"), of(events, "reply")
    assert intent.slots["quantity"] == 2 and [r.delta for r in store.records()] == [-2]  # ... the final decided
    assert len(tts.texts) == 2 and "3" in tts.texts[0] and tts.texts[1] == reply.text
    assert sorted(p.name for p in tmp_path.glob("reply-*.wav")) == [Path(reply.audio).name]  # the other is gone


@pytest.mark.parametrize("temp_c,level,fraction", [(45.0, "normal", 0.1), (80.0, "warm", 0.05), (95.0, "hot", 0.0)])
def test_partial_decoding_gets_the_governors_budget_at_each_wake_word(store, tmp_path, temp_c, level, fraction):
    from edge.config import load_settings
    from tests.fakesys import rk3588

    fs = rk3588(tmp_path / "sys", temp_c=temp_c)
    settings = load_settings(board="rk3588-rock5b", overrides={
        "store": {"path": str(tmp_path / "x.db")}, "board": {"sensors": fs.sensors_settings()},
        "governor": {"power_mode": "performance", "dwell_s": 0}})
    script = said(Script().quiet(400), 1200).quiet(1500)
    stages = stages_for(script, store, [QUERY])
    stages.governor = Governor(settings)
    run_mode(stages, script, tmp_path)
    assert stages.governor.level == level and stages.asr.partials == (1000, fraction)


def test_a_new_loop_clears_the_answers_another_loop_left_on_the_recognizer(store, tmp_path):
    # the recognizer outlives a loop (the service's, a test rig's): a question's expected answers
    # left on it by one loop must not bias the next loop's first command
    script = command(Script().quiet(400)).quiet(1500)
    stages = stages_for(script, store, [QUERY])
    stages.asr.expect(["eighty", "one hundred"])
    events, _ = run(stages, script, tmp_path)
    assert stages.asr.answers is None
    assert of(events, "intent")[0].intent == "query_stock"


# -- the short encoder window, checked by the grammar ----------------------------------------------
MISHEARD = "we used three grill bits from drawer four"  # a short window's LOG: an unknown item


def test_a_windowed_transcript_the_grammar_cannot_take_is_decoded_again_before_the_endpoint(store, tmp_path):
    script = said(Script().quiet(400), 1200).quiet(1500)
    # the final is what the recheck gave (the real recognizer keeps it for finish)
    stages = stages_for(script, store, [LOG], speculations=[MISHEARD], rechecks=[LOG])
    events, _ = run_mode(stages, script, tmp_path)
    assert stages.asr.rechecked == [LOG]  # asked once, at the speculation: the final is a whole command
    (ep,) = of(events, "endpoint")
    assert ep.reason == "complete" and ep.text == LOG and ep.t_ms == last_speech_ms(script) + 320
    assert [r.delta for r in store.records()] == [-3]


def test_a_windowed_whole_command_is_kept_without_a_second_decode(store, tmp_path):
    script = said(Script().quiet(400), 1200).quiet(1500)
    stages = stages_for(script, store, [LOG], speculations=[LOG], rechecks=["we used two drill bits"])
    events, _ = run_mode(stages, script, tmp_path)
    assert stages.asr.rechecked == []
    assert [r.delta for r in store.records()] == [-3]


def test_the_fixed_tails_windowed_final_is_decoded_again_when_the_grammar_cannot_take_it(store, tmp_path):
    script = said(Script().quiet(400), 1200).quiet(1500)
    stages = stages_for(script, store, [MISHEARD], rechecks=[LOG])
    events, _ = run_mode(stages, script, tmp_path, "fixed")
    assert stages.asr.rechecked == [LOG]
    (intent,) = of(events, "intent")
    assert intent.slots["quantity"] == 3 and [r.delta for r in store.records()] == [-3]


def test_a_windowed_transcript_that_dangles_is_a_pause_and_is_not_decoded_again(store, tmp_path):
    script = said(Script().quiet(400), 800, ("pause", 480), 400).quiet(1500)
    stages = stages_for(script, store, [LOG], speculations=["we used three drill bits from", LOG], rechecks=[LOG])
    events, _ = run_mode(stages, script, tmp_path)
    assert stages.asr.rechecked == []  # "... from": the speaker goes on, no second decode for it
    assert [e.reason for e in of(events, "endpoint")] == ["complete"] and [r.delta for r in store.records()] == [-3]


@pytest.mark.parametrize("bias", [True, False])
def test_the_recognizer_is_biased_toward_the_inventory_only_when_asr_bias_is_on(store, tmp_path, bias):
    script = command(Script())
    stages = stages_for(script, store, ["how many M8 bolts are in bin 12"])
    events, p = run(stages, script, tmp_path, bias=bias)
    assert of(events, "reply")
    said = stages.asr.vocabulary
    assert (any("M8 bolt" in ph for ph in said) if bias else said == []), said


def test_the_speculation_never_runs_the_model_a_question_beyond_the_templates_waits_for_the_endpoint(store, tmp_path):
    """The grammar reads a comparison as a stock question, so the speculation at silence start
    understands it; the model's rounds (the tools) run only for the final transcript, never in the
    trailing silence, where they would hold the frame consumer for seconds and run twice."""
    from edge.stages.grounded.answer import GroundedAnswerer
    from edge.stages.grounded.tools import Toolbox
    from tests.nlu_helpers import ReplayEngine
    from tests.test_grounded import calls

    question = "are there more fuses than drill bits"
    script = said(Script().quiet(400), 1200).quiet(1500)
    engine = ReplayEngine([calls({"tool": "stock", "item": "FUS-5A"}, {"tool": "stock", "item": "DRL-BIT-6"})])
    stages = stages_for(script, store, [question], llm=engine)
    und = stages.understanding
    und.grounded = GroundedAnswerer(engine, Toolbox(store), und.llm_shortlist)
    at_endpoint: list = []

    def check(e):
        if e.type == "endpoint":
            at_endpoint.append(len(engine.requests))

    events, _ = run_mode(stages, script, tmp_path, emit=check)
    assert stages.asr.speculated == [question] and at_endpoint == [0]  # understood in the silence, no model
    (reply,) = of(events, "reply")
    assert reply.text.endswith("So there are more fuses than drill bits.") and len(engine.requests) == 1
