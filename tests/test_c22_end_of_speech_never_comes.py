"""C22 end of speech never comes: "yes" starting 100 ms after the wake word; a command followed by
constant background speech at -35 dBFS; a 60 s monologue; a VAD that returns NaN or a sentinel for
its first 760 ms.

Right behaviour: a short answer ends <= 1.5 s after it; endless speech is closed by the hard cap
(``endpoint.max_utterance_ms``) and processed, memory bounded (the recognizer is given at most the
cap's audio); sentinel VAD values count as neither speech nor silence. Times are audio time (frames
of 80 ms counted by the pipeline), never the wall clock.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from drivers.audio import FRAME_SAMPLES, SAMPLE_RATE, read_wav, write_wav
from edge.stages.vad import FRAME_MS, PRE_ROLL_FRAMES, WAKE_TAIL_MS, Endpoint, Endpointer
from tests import synth
from tests.helpers import AUDIO, SESSIONS, of_type, run_session

SENTINELS = [float("nan"), -1.0, 2.0, float("inf"), float("-inf")]
WARMUP_MS = 760


def pcm(path) -> np.ndarray:
    data, rate = read_wav(path)
    return synth.to16k(data, rate)


def at_dbfs(x: np.ndarray, db: float) -> np.ndarray:
    x = x.astype(np.float64)
    return np.clip(x * (10 ** (db / 20) * 32768 / np.sqrt(np.mean(x ** 2))), -32768, 32767).astype(np.int16)


def voiced_end_ms(x: np.ndarray) -> float:
    """Where the last sample above -40 dBFS is, ms from the start of ``x``."""
    loud = np.nonzero(np.abs(x.astype(np.int32)) > 328)[0]
    return 1000 * (loud[-1] + 1) / SAMPLE_RATE


def voiced_start_after_ms(x: np.ndarray, t_ms: float) -> float:
    """Where speech resumes after ``t_ms`` (the first 10 ms block above -40 dBFS RMS after a quiet
    one), ms from the start of ``x``: the start of a command said after the wake word."""
    block = SAMPLE_RATE // 100
    n = len(x) // block
    rms = np.sqrt((x[: n * block].astype(np.float64).reshape(n, block) ** 2).mean(axis=1))
    loud = rms > 328
    first = int(t_ms // 10)
    quiet = next(i for i in range(first, n) if not loud[i])
    return 10.0 * next(i for i in range(quiet, n) if loud[i])


def monologue(seconds: float) -> np.ndarray:
    """Real people talking without a pause long enough to end an utterance, ``seconds`` long."""
    parts = [pcm(AUDIO / "real" / n) for n in ("turn_on_the_office_lights_test_clip.wav",
                                                "negative_reference.wav", "digits_vosk_test.wav")]
    talk = np.concatenate(parts)
    reps = math.ceil(seconds * SAMPLE_RATE / len(talk))
    return np.tile(talk, reps)[: int(seconds * SAMPLE_RATE)]


class CountingAsr:
    """The real recognizer, with the samples it was given counted (nothing else changed)."""

    def __init__(self, inner) -> None:
        self.inner, self.samples, self.most = inner, 0, 0

    def start(self):
        self.samples = 0
        return self.inner.start()

    def accept(self, frame):
        self.samples += len(frame)
        self.most = max(self.most, self.samples)
        return self.inner.accept(frame)

    def __getattr__(self, name):
        return getattr(self.inner, name)


class WarmingVad:
    """The real Silero VAD, answering ``sentinel`` for the first 760 ms after each reset."""

    def __init__(self, inner, sentinel: float) -> None:
        self.inner, self.sentinel, self.ms = inner, sentinel, 0

    def reset(self) -> None:
        self.ms = 0
        self.inner.reset()

    def probability(self, frame) -> float:
        p = self.inner.probability(frame)
        self.ms += FRAME_MS
        return self.sentinel if self.ms <= WARMUP_MS else p


@pytest.fixture
def rig(rig_grammar, inventory_store):
    settings, stages = rig_grammar
    stages.store = inventory_store
    return settings, stages


# -- the endpointer alone ----------------------------------------------------------------------------

@pytest.mark.parametrize("sentinel", SENTINELS)
def test_sentinel_values_are_neither_speech_nor_silence(sentinel):
    warm = math.ceil(WARMUP_MS / FRAME_MS)
    # while waiting: sentinels never start an utterance, but the no-speech timeout still runs
    ep = Endpointer(no_speech_timeout_ms=2000)
    states = [ep.push(np.zeros(FRAME_SAMPLES, np.int16), sentinel) for _ in range(warm)]
    assert states == [Endpoint.WAITING] * warm and ep.unknown_frames == warm
    assert [ep.push(np.zeros(FRAME_SAMPLES, np.int16), sentinel) for _ in range(20)][-1] is Endpoint.NO_SPEECH
    # inside speech: sentinels neither reset nor add to the trailing silence
    ep = Endpointer(trailing_silence_ms=400)
    assert ep.push(np.zeros(FRAME_SAMPLES, np.int16), 0.05) is Endpoint.WAITING
    for p in [0.9] * 5 + [0.05] * 3 + [sentinel] * warm:
        assert ep.push(np.zeros(FRAME_SAMPLES, np.int16), p) is Endpoint.SPEECH
    assert ep.silence_ms == 3 * FRAME_MS
    assert ep.push(np.zeros(FRAME_SAMPLES, np.int16), 0.05) is Endpoint.SPEECH  # 4 quiet frames: 320 ms
    assert ep.push(np.zeros(FRAME_SAMPLES, np.int16), 0.05) is Endpoint.END  # the 5th: 400 ms
    assert len(ep.frames) == PRE_ROLL_FRAMES - 1 + 5 + 3 + warm + 2  # the unjudged audio is kept
    # and the hard cap counts them: sentinels for ever after speech still end at max_length
    ep = Endpointer(max_utterance_ms=1600)
    ep.push(np.zeros(FRAME_SAMPLES, np.int16), 0.05)
    ep.push(np.zeros(FRAME_SAMPLES, np.int16), 0.9)
    n = 1
    while ep.push(np.zeros(FRAME_SAMPLES, np.int16), sentinel) is Endpoint.SPEECH:
        n += 1
    assert ep.reason == "max_length" and (n + 1) * FRAME_MS == 1600  # the speech frame + the unjudged ones


@pytest.mark.parametrize("sentinel", [float("nan"), -1.0, 2.0])
def test_a_vad_warming_up_with_sentinels_still_gives_the_command(rig, tmp_path, sentinel):
    settings, stages = rig
    real = stages.vad
    stages.vad = WarmingVad(real, sentinel)
    try:
        events = run_session(stages, settings, SESSIONS / "query_m8_bolts.wav", tmp_path)
    finally:
        stages.vad = real
    intents = of_type(events, "intent")
    assert [i.intent for i in intents] == ["query_stock"] and intents[0].slots["sku"] == "BLT-M8-30", events
    assert "140" in of_type(events, "reply")[0].text


# -- real audio through the whole loop ------------------------------------------------------------------

@pytest.mark.parametrize("gap_s", [0.1, 0.0])
def test_yes_right_after_the_wake_word_ends_within_1_5_s(rig, tmp_path, gap_s):
    settings, stages = rig
    lead, wake, yes = synth.silence(0.5), synth.wake(), synth.speech("yes")
    wav = synth.session(tmp_path / "yes.wav", lead, wake, gap_s, yes, 4.0)
    events = run_session(stages, settings, wav, tmp_path)
    ends = of_type(events, "endpoint")
    assert len(ends) == 1 and not of_type(events, "no_speech"), events
    said_until = 1000 * (len(lead) + len(wake)) / SAMPLE_RATE + 1000 * gap_s + voiced_end_ms(yes)
    assert ends[0].t_ms - said_until <= 1500, (ends[0].t_ms, said_until)
    assert "yes" in of_type(events, "transcript")[0].text.lower(), events


@pytest.mark.parametrize("mode", ["semantic", "fixed"])
def test_a_command_with_background_speech_at_minus_35_dbfs_is_answered(rig, tmp_path, mode):
    settings, stages = rig
    cmd = pcm(SESSIONS / "query_m8_bolts.wav")
    cmd = cmd[: int(voiced_end_ms(cmd) * SAMPLE_RATE / 1000)]
    babble = at_dbfs(monologue(15.0), -35.0)
    wav = write_wav(tmp_path / "bg.wav", np.concatenate([cmd, babble]), SAMPLE_RATE)
    settings = settings.model_copy(update={"endpoint": settings.endpoint.model_copy(update={"mode": mode})})
    events = run_session(stages, settings, wav, tmp_path)
    wake, ends = of_type(events, "wake"), of_type(events, "endpoint")
    assert len(wake) == 1 and len(ends) == 1, events
    cap = settings.endpoint.max_utterance_ms
    # the cap counts from the start of the command (here 630 ms after the wake word is detected)
    start = voiced_start_after_ms(cmd, wake[0].t_ms)
    assert ends[0].t_ms - start <= cap + 2 * FRAME_MS, (start, ends)
    intents = of_type(events, "intent")
    assert [i.intent for i in intents] == ["query_stock"] and intents[0].slots["sku"] == "BLT-M8-30", events
    assert len(of_type(events, "turn_end")) == 1


def test_a_60_s_monologue_is_closed_by_the_cap_with_bounded_audio(rig, tmp_path):
    settings, stages = rig
    talk = monologue(60.0)
    wav = synth.session(tmp_path / "monologue.wav", 0.5, "<wake>", talk, 1.0)
    real = stages.asr
    stages.asr = counting = CountingAsr(real)
    try:
        events = run_session(stages, settings, wav, tmp_path)
    finally:
        stages.asr = real
    wake, ends = of_type(events, "wake"), of_type(events, "endpoint")
    assert len(wake) == 1, events  # the rest of the monologue wakes nothing
    assert [e.reason for e in ends] == ["max_length"], ends
    cap = settings.endpoint.max_utterance_ms
    assert ends[0].t_ms - wake[0].t_ms <= WAKE_TAIL_MS + cap + FRAME_MS
    # the recognizer never holds more than the cap's audio (plus the pre-roll)
    assert counting.most <= (cap // FRAME_MS + PRE_ROLL_FRAMES) * FRAME_SAMPLES, counting.most
    assert len(of_type(events, "transcript")) == 1 and len(of_type(events, "turn_end")) == 1
    replies = of_type(events, "reply")  # processed: answered as too long (no LLM call for endless speech, C21)
    assert len(replies) == 1 and "too long" in replies[0].text, events
