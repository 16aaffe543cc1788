"""C03 self-trigger: the box's reply, heard back through the open microphone, contains the wake
word. No wake detection while it speaks and for a guard time after; a real wake word after that
still works. With echo cancellation configured, a wake word during a reply is a barge-in.

The reply the box really produced is mixed into the microphone signal at -10 dB where it would be
played, with the real "hey mycroft" recording spliced into its middle (espeak-ng's own "hey
mycroft" does not reach the model's threshold, which would make the test unable to fail).
"""
from __future__ import annotations

import numpy as np
import pytest

from drivers.audio import SAMPLE_RATE, read_wav, wav_frames
from edge.loop.build import run_frames
from edge.stages.tts.speaker import TimelineSpeaker
from edge.stages.wake import WakeWord
from edge.stock.store import Store
from tests.helpers import INVENTORY, heard, of_type
from tests.synth import session, silence, to16k, wake

GAIN = 10 ** (-10 / 20)  # -10 dB


@pytest.fixture(scope="module", params=["micro", "openwakeword"])
def rig(request, tmp_path_factory, rig_llm):
    """The session rig with "hey mycroft" on either wake-word engine (the rig's own is micro)."""
    settings, stages = rig_llm
    saved = stages.wake
    if request.param == "openwakeword":
        stages.wake = WakeWord([("hey_mycroft", "openwakeword", 0.6)], settings.wake.refractory_ms)
    try:
        yield _build(tmp_path_factory, settings, stages)
    finally:
        stages.wake = saved


def _build(tmp_path_factory, settings, stages):
    d = tmp_path_factory.mktemp("c03")
    boot = Store(d / "boot.db")
    boot.import_csv(INVENTORY)
    stages.store = boot
    base = session(d / "base.wav", 0.5, "<wake>", 0.4, "how many cable ties do we have", 1.0)
    # learn when and what the box answers
    spk = TimelineSpeaker()
    stages.wake.flush()
    run_frames(wav_frames(base), stages, settings, d, [].append, speaker=spk)
    (start_ms, reply_wav), = spk.played
    data, rate = read_wav(reply_wav)
    reply = to16k(data, rate).astype(np.float64)
    half = len(reply) // 2
    echo = np.concatenate([reply[:half], wake().astype(np.float64), reply[half:]]) * GAIN
    mic = np.concatenate([np.concatenate(list(wav_frames(base))), silence(len(echo) / SAMPLE_RATE + 4.0)]).astype(np.float64)
    at = start_ms * SAMPLE_RATE // 1000
    mic[at:at + len(echo)] += echo
    tail = np.concatenate([wake(), silence(0.4), np.concatenate(list(wav_frames(
        session(d / "q2.wav", "how many fuses do we have")))), silence(1.5)])
    mic = np.concatenate([np.clip(mic, -32768, 32767).astype(np.int16), tail])
    from drivers.audio import write_wav

    wav = write_wav(d / "mic.wav", mic)
    return settings, stages, wav, start_ms, 1000 * len(echo) // SAMPLE_RATE, d


def _run(rig, speaker, echo_cancellation=False):
    settings, stages, wav, *_ = rig
    events = []
    stages.wake.flush()
    p = run_frames(wav_frames(wav), stages, settings.model_copy(update={"audio": settings.audio.model_copy(
        update={"echo_cancellation": echo_cancellation})}), rig[5], events.append, speaker=speaker)
    return events, p


def test_without_suppression_the_reply_triggers_the_box(rig):
    _, _, _, start, length, _ = rig
    events, _ = _run(rig, speaker=None)
    wakes = of_type(events, "wake")
    assert any(start < w.t_ms < start + length for w in wakes), "the mixed-in wake word must be able to trigger"


def test_no_wake_while_the_box_speaks_and_the_next_real_one_works(rig):
    _, _, _, start, length, _ = rig
    spk = TimelineSpeaker()
    events, p = _run(rig, speaker=spk)
    wakes = of_type(events, "wake")
    assert not any(start <= w.t_ms <= start + length + p.guard_ms for w in wakes)
    assert p.suppressed >= 1  # the echo did score over the threshold, and was ignored
    assert len(wakes) == 2  # the first command and the real wake word after the reply
    intents = of_type(events, "intent")
    assert [i.slots["sku"] for i in intents] == ["TIE-CBL-200", "FUS-5A"], heard(events)


def test_barge_in_with_echo_cancellation_stops_playback_and_starts_a_turn(rig):
    _, _, _, start, length, _ = rig
    spk = TimelineSpeaker()
    events, p = _run(rig, speaker=spk, echo_cancellation=True)
    wakes = of_type(events, "wake")
    barge = [w for w in wakes if start < w.t_ms < start + length]
    assert len(barge) == 1 and spk.stopped >= 1
    assert p.suppressed == 0


class InstantPlayback:
    """A stand-in output device that finishes each WAV at once (so the box is never 'busy' when
    the next frame is looked at)."""

    def __init__(self):
        self.played = []

    def play_wav(self, wav, stop):
        self.played.append(wav)


def test_an_answer_spoken_during_the_turn_still_guards_the_frames_captured_meanwhile(rig_llm, inventory_store, tmp_path):
    """Live mode speaks an LLM answer sentence by sentence while the turn is processed; frames
    captured meanwhile are processed after the turn and hold the box's own voice. A wake word in
    them (here: right after the endpoint) must not start a turn."""
    from edge.stages.tts.speaker import DeviceSpeaker
    from tests.helpers import SESSIONS

    settings, stages = rig_llm
    stages.store = inventory_store
    first: list = []
    stages.wake.flush()
    run_frames(wav_frames(SESSIONS / "chitchat_joke.wav"), stages, settings, tmp_path, first.append,
               speaker=TimelineSpeaker())
    (end,) = of_type(first, "turn_end")
    assert "first_audio_ms" in end.latency_ms  # the answer was spoken sentence by sentence
    data, rate = read_wav(SESSIONS / "chitchat_joke.wav")
    upto = to16k(data, rate)[: end.t_ms * SAMPLE_RATE // 1000]
    from drivers.audio import write_wav

    mic = write_wav(tmp_path / "mic.wav", np.concatenate([upto, silence(0.3), wake(), silence(2.0)]))
    dev = InstantPlayback()
    events: list = []
    stages.wake.flush()
    p = run_frames(wav_frames(mic), stages, settings, tmp_path, events.append, speaker=DeviceSpeaker(dev))
    assert dev.played  # the sentences went to the device during the turn
    assert len(of_type(events, "wake")) == 1 and p.suppressed >= 1
