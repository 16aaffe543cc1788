"""edge.stages.tts.stream: cutting sentences out of a token stream, and speaking the first sentence
while the rest is still being generated (real espeak-ng through pyttsx3, real SmolLM2 stream).
Ordering is checked with the events' sequence numbers, never with times."""
from __future__ import annotations

import itertools
import threading
import wave

import pytest

from edge.llm.base import GenerationRequest
from edge.stages.sentences import SentenceSplitter, find_cut, split_sentences
from edge.stages.tts.engine import Pyttsx3Tts, TtsError
from edge.stages.tts.stream import StreamingSpeaker

GATE_S = 60  # hang detection only: how long the gated token source waits for the first WAV


@pytest.mark.parametrize("text, expected", [
    ("Use a torque wrench, e.g. the blue one. It is in bin 2.5 of rack B! Is that right? Yes.",
     ["Use a torque wrench, e.g. the blue one.", "It is in bin 2.5 of rack B!", "Is that right?", "Yes."]),
    ('Mr. Smith took 2.5 kg. Dr. Jones said "fine." Then he left.',
     ["Mr. Smith took 2.5 kg.", 'Dr. Jones said "fine."', "Then he left."]),
    ("Wait... what? Really?! Yes.", ["Wait... what?", "Really?!", "Yes."]),
    ("It costs $3.50, i.e. cheap. J. Smith agrees. Version 1.2.3 is out.",
     ["It costs $3.50, i.e. cheap.", "J. Smith agrees.", "Version 1.2.3 is out."]),
    ("螺丝在第三个箱子里。还有别的吗？好的！", ["螺丝在第三个箱子里。", "还有别的吗？", "好的！"]),
    ("Bin 12 (the red one.) Next to it.", ["Bin 12 (the red one.)", "Next to it."]),
    ("No full stop at the end", ["No full stop at the end"]),
    ("First paragraph\n\nsecond one", ["First paragraph", "second one"]),
    ("", []),
])
def test_splitter_on_tricky_text(text, expected):
    assert split_sentences(text) == expected
    # the same sentences whatever the token boundaries: character by character here
    s = SentenceSplitter()
    got = [x for ch in text for x in s.feed(ch)] + s.flush()
    assert got == expected


def test_a_sentence_end_waits_for_the_next_word():
    s = SentenceSplitter()
    assert s.feed("The value is 2.") == []  # "2." could be "2.5"
    assert s.feed("5 units.") == []  # the end of the text may be mid-sentence ("units. and")
    assert s.feed(" ") == []
    assert s.feed("Next") == ["The value is 2.5 units."]
    assert s.flush() == ["Next"]
    assert find_cut("e.g. this") is None and find_cut("Done. Then") == 5


@pytest.fixture(scope="module")
def tts():
    try:
        return Pyttsx3Tts()
    except TtsError as e:
        pytest.skip(str(e))


def wav_frames(path) -> int:
    with wave.open(str(path)) as w:
        return w.getnframes()


def test_first_sentence_is_synthesized_while_generation_is_still_running(tts, tmp_path):
    """The token source blocks after the first sentence until that sentence's WAV exists; a
    speaker that synthesized only after the whole answer would leave it blocked (gate timeout)."""
    first_wav = threading.Event()
    speaker = StreamingSpeaker(tts, tmp_path, on_event=lambda e: first_wav.set() if e.kind == "wav" else None)

    def tokens():
        yield from ["The drill", " is in", " bin four.", " It was"]
        assert first_wav.wait(GATE_S), "the first sentence was not synthesized while tokens were still coming"
        yield from [" charged", " yesterday.", " Anything else?"]

    r = speaker.speak(tokens(), turn="t1")
    assert r.sentences == ["The drill is in bin four.", "It was charged yesterday.", "Anything else?"]
    assert r.first("wav", 0).seq < r.first("generation_done").seq
    assert all(p is not None and p.exists() and wav_frames(p) > 0 for p in r.wavs)
    assert [p.name for p in r.wavs] == ["reply-t1-00.wav", "reply-t1-01.wav", "reply-t1-02.wav"]


@pytest.fixture(scope="module")
def engine():
    from edge.llm.llamacpp import LlamaCppEngine

    e = LlamaCppEngine("smollm2-135m-instruct-q4_1", n_ctx=1024)
    yield e
    e.close()


def test_real_llm_stream_is_spoken_sentence_by_sentence(tts, engine, tmp_path):
    played = []
    speaker = StreamingSpeaker(tts, tmp_path, play=played.append)
    req = GenerationRequest([{"role": "user", "content": "Tell me about hammers."}],
                            max_tokens=64, temperature=0.0)
    r = speaker.speak(engine.stream(req), turn="llm")
    assert len(r.sentences) >= 2, r.text
    assert r.sentences == split_sentences(r.text)
    # the first sentence was cut and queued for speech before the generation ended
    assert r.first("sentence", 0).seq < r.first("generation_done").seq
    assert played == r.wavs and all(wav_frames(p) > 0 for p in played)
    seqs = [r.first("played", i).seq for i in range(len(r.sentences))]
    assert seqs == sorted(seqs)  # played in order
    assert not r.errors


class PickyTts:
    """A neighbouring TTS that refuses sentences containing a word; real espeak for the rest."""

    def __init__(self, real, refuse: str):
        self.real, self.refuse = real, refuse

    def synthesize(self, text, path):
        if self.refuse in text:
            raise TtsError(f"cannot say {text!r}")
        return self.real.synthesize(text, path)


def test_a_failed_sentence_does_not_silence_the_rest(tts, tmp_path):
    r = StreamingSpeaker(PickyTts(tts, "xyzzy"), tmp_path).speak(iter(["Bin one. ", "Say xyzzy. ", "Bin three."]))
    assert r.wavs[0] is not None and r.wavs[1] is None and r.wavs[2] is not None
    assert len(r.errors) == 1 and "sentence 1" in r.errors[0]


def test_stop_silences_what_is_left(tts, tmp_path):
    speaker = StreamingSpeaker(tts, tmp_path)
    speaker.on_event = lambda e: speaker.stop() if e.kind == "wav" else None  # barge-in after the first

    def tokens():
        yield "First sentence here. "
        for _ in range(200):
            if speaker._stop.is_set():
                break
            yield "more words "
            threading.Event().wait(0.01)
        yield "Last. "

    r = speaker.speak(tokens())
    assert r.wavs[0] is not None and all(w is None for w in r.wavs[1:])


# ------------------------------------------------------------------ in the voice loop

def _json_other(answer: str) -> str:
    import json

    return json.dumps({"intent": "other", "sku": None, "quantity": None, "direction": None, "location": None,
                       "answer": answer})


@pytest.mark.parametrize("step", [1, 2, 3, 5, 64])
def test_the_answer_is_read_out_of_the_intent_json_as_it_streams(step):
    from edge.stages.nlu.llm_intent import AnswerTap

    answer = 'A wrench turns nuts.\nIt has a "jaw", é and \U0001F527 too.'
    text = _json_other(answer)  # ensure_ascii: é and the emoji arrive as \\u escapes (a surrogate pair)
    tap = AnswerTap()
    pieces = [tap.feed(text[i:i + step]) for i in range(0, len(text), step)]
    assert "".join(pieces) == answer
    assert pieces.index(next(p for p in pieces if p)) < len(pieces) - 1  # it started before the object ended


def test_a_stock_command_s_json_is_never_tapped():
    from edge.stages.nlu.llm_intent import AnswerTap

    tap = AnswerTap()
    text = '{"intent": "log_record", "sku": "FUS-5A", "quantity": 2, "direction": "out", "location": null, "answer": "Logged."}'
    assert "".join(tap.feed(c) for c in text) == ""


class CountingEngine:
    """Passes the real engine's tokens through and counts them (to see *when* a sentence came)."""

    def __init__(self, engine):
        self.engine, self.seen = engine, 0

    def stream(self, request, cancel=None):
        for piece in self.engine.stream(request, cancel):
            self.seen += 1
            yield piece

    @property
    def last_stats(self):
        return self.engine.last_stats


def test_the_first_sentence_of_an_llm_answer_comes_before_the_generation_ends(rig_llm):
    """Real SmolLM2 through the JSON path: the first sentence is handed over while tokens are still
    coming; the answer keeps at most two sentences and the early ones are its first."""
    from edge.stages.nlu.llm_intent import LlmIntentParser
    from edge.stages.nlu.understand import Understanding

    settings, stages = rig_llm
    real = stages.understanding.llm
    und = Understanding(stages.understanding.items, llm=CountingEngine(real))
    got: list[tuple[str, int]] = []
    intent = und.understand("tell me a joke", on_sentence=lambda s: got.append((s, und.llm.seen)))
    assert isinstance(und.llm_intent, LlmIntentParser) and intent.intent == "other" and intent.source == "llm"
    assert got, f"no sentence came early; answer: {intent.answer!r}"
    first, at = got[0]
    assert at < und.llm.seen  # tokens were still to come when the first sentence was given
    assert split_sentences(intent.answer)[:len(got)] == [s for s, _ in got] and len(got) <= 2


def test_the_loop_speaks_an_llm_answer_sentence_by_sentence_back_to_back(rig_llm, inventory_store, tmp_path):
    """The chitchat session: the reply's sentences are synthesized one by one and queued on the
    speaker back to back; the turn's reply WAV is their concatenation; first_audio_ms is reported."""
    from drivers.audio import wav_frames as frames_of
    from edge.loop.build import run_frames
    from edge.stages.tts.speaker import TimelineSpeaker, duration_ms
    from tests.helpers import SESSIONS, of_type

    settings, stages = rig_llm
    stages.store = inventory_store
    spk = TimelineSpeaker()
    events: list = []
    run_frames(frames_of(SESSIONS / "chitchat_joke.wav"), stages, settings, tmp_path, events.append, speaker=spk)
    (reply,) = of_type(events, "reply")
    sentences = split_sentences(reply.text)
    assert len(spk.played) == len(sentences) >= 1
    assert all(p.name.startswith("reply-part-") for _, p in spk.played)
    for (t1, w1), (t2, _) in itertools.pairwise(spk.played):
        assert t2 == t1 + duration_ms(w1)  # the next sentence starts when the previous one ends
    assert wav_frames(reply.audio) == sum(wav_frames(p) for _, p in spk.played)
    assert "first_audio_ms" in of_type(events, "turn_end")[0].latency_ms


class GatedPlayback:
    """A stand-in output device: play_wav blocks until released or stopped, and records the order."""

    def __init__(self):
        self.played, self.release = [], threading.Semaphore(0)

    def play_wav(self, wav, stop):
        self.played.append(wav.name)
        while not stop.is_set() and not self.release.acquire(timeout=0.01):
            pass


def test_the_device_speaker_plays_a_queue_in_order_and_a_barge_in_drops_the_rest(tmp_path):
    from pathlib import Path

    from edge.stages.tts.speaker import DeviceSpeaker

    dev = GatedPlayback()
    spk = DeviceSpeaker(dev)
    for n in ("a", "b", "c"):
        spk.queue(Path(n), 0)
    dev.release.release()  # a ends
    dev.release.release()  # b ends
    guard = 500
    while dev.played != ["a", "b", "c"] and guard:
        threading.Event().wait(0.01)
        guard -= 1
    assert dev.played == ["a", "b", "c"] and spk.busy(0)
    spk.queue(Path("d"), 0)
    spk.stop()  # barge-in during c: d is dropped
    assert not spk.busy(0) and spk.stopped == 1
    spk.queue(Path("e"), 0)  # the next reply plays
    dev.release.release()
    spk.wait(GATE_S)
    assert dev.played == ["a", "b", "c", "e"] and not spk.busy(0)


# ------------------------------------------------------------------ what is spoken early is the reply

def _other(answer: str, **slots) -> str:
    import json

    obj = {"intent": "other", "sku": None, "quantity": None, "direction": None, "location": None, "answer": answer}
    obj.update(slots)
    return json.dumps(obj)


def _understand(store, outputs, text="tell me something", language="en"):
    from edge.stages.nlu.understand import Understanding
    from tests.nlu_helpers import ReplayEngine

    engine = ReplayEngine(outputs)
    got: list[str] = []
    intent = Understanding(store.items(), engine, language=language).understand(text, on_sentence=got.append)
    return intent, got, engine


def test_an_answer_that_fails_validation_after_it_was_spoken_is_the_reply_without_a_second_attempt(inventory_store):
    from edge.stages.nlu.schema import ANSWER_MAX_CHARS

    long = "Hammers drive nails. They have a head and a handle. " + "They are old. " * (ANSWER_MAX_CHARS // 10)
    intent, got, engine = _understand(inventory_store, [_other(long)])  # over maxLength: fails validation
    assert got == ["Hammers drive nails.", "They have a head and a handle."]
    assert intent.answer == "Hammers drive nails. They have a head and a handle." and len(engine.requests) == 1
    assert intent.extra["failed_validation"] is True and intent.extra["streamed"] == 2


def test_an_other_object_is_spoken_early_only_when_its_other_fields_will_pass(inventory_store):
    # slots filled in but valid (SmolLM2 does this): accepted, so spoken early
    intent, got, _ = _understand(inventory_store, [_other("I took it. Done now.", quantity=10, location="the van")])
    assert got == ["I took it."] and intent.answer == "I took it. Done now."  # the last one is said at the end
    # a location over its limit fails validation: nothing spoken, the retry's answer is the reply
    intent, got, engine = _understand(inventory_store, [_other("Nope. Not this.", location="x" * 80),
                                                        _other("Sure thing. Anything else?")])
    assert got == [] and len(engine.requests) == 2 and intent.answer == "Sure thing. Anything else?"


def test_spoken_sentences_are_the_reply_s_sentences_cleaned_and_cut_the_same_way(inventory_store):
    intent, got, _ = _understand(inventory_store, [_other("**Sure**. Use 3 ft. of\nwire. Then cut it.")])
    assert got == ["Sure.", "Use 3 ft. of wire."]
    assert intent.answer == "Sure. Use 3 ft. of wire."


def test_a_repeated_prompt_example_stops_early_speech_and_keeps_the_order(inventory_store):
    from edge.stages.nlu.llm_intent import LlmIntentParser
    from edge.stages.sentences import answer_sentences

    example = sorted(LlmIntentParser(ReplayStub(), inventory_store.items()).example_answers)[0]
    first = answer_sentences(example)[0][0]
    intent, got, _ = _understand(inventory_store, [_other(f"Hello there. {first} Bye now."), "Hi."])
    assert got == ["Hello there."]  # stopped at the example's sentence: the rest is said after, in order
    assert intent.answer.startswith("Hello there.")


class ReplayStub:
    name, n_ctx = "stub", 2048


def test_an_engine_failure_mid_answer_ends_the_reply_with_what_was_said(inventory_store):
    from edge.llm.base import EngineError, GenerationStats
    from edge.stages.nlu.understand import Understanding

    class Failing:
        name, n_ctx, last_stats = "failing", 2048, GenerationStats()

        def stream(self, request, cancel=None):
            yield from _other("Hammers are great. They drive nails. And more")[:-12]  # cut in "nails"
            raise EngineError("the NPU stopped")

    got: list[str] = []
    intent = Understanding(inventory_store.items(), Failing()).understand("tell me about hammers", on_sentence=got.append)
    assert got == ["Hammers are great."] and intent.answer == "Hammers are great."
    assert intent.extra["engine_error"] == "the NPU stopped"


@pytest.mark.parametrize("text, expected", [
    ("你好。我是库房助手。还有别的吗？", "你好。我是库房助手。"),
    ("你好，我是库房", "你好。"),
    ("A spider has eight legs. Each leg has seven segments. Spiders are neat.",
     "A spider has eight legs. Each leg has seven segments."),
])
def test_two_sentences_in_both_languages(text, expected):
    from edge.stages.sentences import two_sentences

    assert two_sentences(text) == expected


class FlakyTts:
    """The real espeak-ng TTS, except that it fails on sentences containing 'broken'."""

    def __init__(self, tts):
        self.tts = tts

    def synthesize(self, text, path):
        if "broken" in text:
            raise TtsError(f"espeak-ng wrote no audio for {text!r}")
        return self.tts.synthesize(text, path)


def test_a_sentence_the_speech_engine_fails_on_is_reported_and_the_others_are_joined(tts, tmp_path):
    from edge.stages.tts.stream import EarlyReply

    early = EarlyReply(FlakyTts(tts), tmp_path, "t1")
    early.sentence("First part.")
    early.sentence("A broken part.")
    wav = early.finish("First part. A broken part. Last part.", tmp_path / "reply.wav")
    assert len(early.errors) == 1 and "broken" in early.errors[0]
    parts = sorted(tmp_path.glob("reply-part-t1-*.wav"))
    assert [p.name for p in parts] == ["reply-part-t1-00.wav", "reply-part-t1-02.wav"]
    assert wav_frames(wav) == sum(wav_frames(p) for p in parts)
    nothing = EarlyReply(FlakyTts(tts), tmp_path / "x", "t2")
    nothing.sentence("All broken.")
    assert nothing.finish("All broken.", tmp_path / "x.wav") is None  # the caller synthesizes the whole reply


def test_a_turn_that_fails_half_way_leaves_no_synthesis_thread(tts, tmp_path):
    from edge.stages.tts.stream import EarlyReply

    early = EarlyReply(tts, tmp_path, "t3")
    early.sentence("One.")
    early.close()
    assert not any(t.name == "tts-stream" and t.is_alive() for t in threading.enumerate())
