"""edge.stages.vad: the Endpointer state machine (driven by chosen per-frame speech probabilities) and
the real Silero VAD model."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from drivers.audio import FRAME_SAMPLES, wav_frames
from edge.stages.vad import FRAME_MS, PRE_ROLL_FRAMES, WAKE_TAIL_MS, Endpoint, Endpointer, SileroVad

AUDIO = Path(__file__).resolve().parents[2] / "shared" / "audio"
SESSION = AUDIO / "sessions" / "query_m8_bolts.wav"

SPEECH, QUIET = 0.9, 0.05  # probabilities either side of the default threshold 0.5


def zeros() -> np.ndarray:
    return np.zeros(FRAME_SAMPLES, dtype=np.int16)


def marked(k: int) -> np.ndarray:
    """A frame whose every sample is ``k``: lets a test see which frames audio() returns."""
    return np.full(FRAME_SAMPLES, k, dtype=np.int16)


def push_all(ep: Endpointer, probs, frame=zeros) -> list[Endpoint]:
    return [ep.push(frame(), p) for p in probs]


def frame_ids(audio: np.ndarray) -> list[int]:
    assert len(audio) % FRAME_SAMPLES == 0
    return [int(audio[i]) for i in range(0, len(audio), FRAME_SAMPLES)]


# --------------------------------------------------------------------------------------------
# trailing silence


@pytest.mark.parametrize("trailing_ms", [700, 400, 800, 1000])
def test_utterance_ends_after_exactly_ceil_trailing_silence_frames(trailing_ms):
    ep = Endpointer(trailing_silence_ms=trailing_ms)
    # the wake phrase still sounding for 3 frames, a short gap, then the command
    assert push_all(ep, [SPEECH] * 3) == [Endpoint.WAITING] * 3
    assert push_all(ep, [QUIET] * 2) == [Endpoint.WAITING] * 2
    assert push_all(ep, [SPEECH] * 10) == [Endpoint.SPEECH] * 10
    needed = math.ceil(trailing_ms / FRAME_MS)  # 700 ms -> 9 frames (720 ms)
    states = push_all(ep, [QUIET] * (needed + 3))
    assert states[:needed - 1] == [Endpoint.SPEECH] * (needed - 1), states
    assert states[needed - 1] is Endpoint.END, states
    assert ep.state is Endpoint.END
    # frames after the end are not part of the utterance
    assert len(ep.frames) == PRE_ROLL_FRAMES + 10 + needed


def test_audio_keeps_at_most_240_ms_of_the_trailing_silence():
    ep = Endpointer()
    k = iter(range(1, 1000))
    for p in [QUIET, QUIET, QUIET] + [SPEECH] * 5 + [QUIET] * 9:
        state = ep.push(marked(next(k)), p)
    assert state is Endpoint.END
    ids = frame_ids(ep.audio())
    # frames 2, 3: pre-roll; 4-8: speech; 9-11: the first 240 ms of the trailing silence
    assert ids == list(range(2, 12)), ids


def test_three_frame_pause_inside_speech_does_not_end_the_utterance():
    ep = Endpointer(trailing_silence_ms=700)
    k = iter(range(1, 1000))
    pushes = [QUIET] + [SPEECH] * 6 + [QUIET] * 3 + [SPEECH] * 6
    states = [ep.push(marked(next(k)), p) for p in pushes]
    assert states[0] is Endpoint.WAITING
    assert all(s is Endpoint.SPEECH for s in states[1:]), states
    # the pause restarted nothing: the silence count begins again at the next speech frame
    needed = math.ceil(700 / FRAME_MS)
    tail = [ep.push(marked(next(k)), QUIET) for _ in range(needed)]
    assert tail[:-1] == [Endpoint.SPEECH] * (needed - 1) and tail[-1] is Endpoint.END
    # frames 1-25 were pushed; the pause (8-10) stays inside, the last 6 silent frames are trimmed
    assert frame_ids(ep.audio()) == list(range(1, 20))


# --------------------------------------------------------------------------------------------
# maximum length


@pytest.mark.parametrize("max_ms", [10000, 2000, 1000])
def test_long_utterance_ends_at_max_utterance_ms(max_ms):
    ep = Endpointer(max_utterance_ms=max_ms)
    assert push_all(ep, [QUIET]) == [Endpoint.WAITING]
    limit = math.ceil(max_ms / FRAME_MS)  # speech frames counted from the first one
    states = push_all(ep, [SPEECH] * (limit + 5))
    assert states[:limit - 1] == [Endpoint.SPEECH] * (limit - 1)
    assert states[limit - 1] is Endpoint.END, f"END expected on speech frame {limit}"
    assert ep.state is Endpoint.END
    # one pre-roll frame (the single quiet frame) + the speech up to the cap
    assert len(ep.audio()) == (1 + limit) * FRAME_SAMPLES


def test_long_utterance_with_pauses_still_ends_at_max_utterance_ms():
    """The cap counts the utterance's duration, pauses included."""
    ep = Endpointer(max_utterance_ms=2000, trailing_silence_ms=700)
    push_all(ep, [QUIET])
    pattern = ([SPEECH] * 4 + [QUIET] * 3) * 10
    states = push_all(ep, pattern)
    assert Endpoint.END in states
    assert states.index(Endpoint.END) == math.ceil(2000 / FRAME_MS) - 1


# --------------------------------------------------------------------------------------------
# no speech


@pytest.mark.parametrize("timeout_ms", [5000, 1000, 800])
def test_no_speech_for_the_timeout_reports_no_speech(timeout_ms):
    ep = Endpointer(no_speech_timeout_ms=timeout_ms)
    needed = math.ceil(timeout_ms / FRAME_MS)  # counted from the wake word
    states = push_all(ep, [QUIET] * needed + [SPEECH] * 3)
    assert states[:needed - 1] == [Endpoint.WAITING] * (needed - 1)
    assert states[needed - 1] is Endpoint.NO_SPEECH
    assert states[needed:] == [Endpoint.NO_SPEECH] * 3, "speech after the timeout must not restart the turn"
    assert len(ep.audio()) == 0


def test_wake_tail_alone_is_not_an_utterance():
    """Speech that is only the end of the wake phrase (< WAKE_TAIL_MS), then silence: no speech."""
    ep = Endpointer(no_speech_timeout_ms=1600)
    tail_frames = WAKE_TAIL_MS // FRAME_MS - 1
    states = push_all(ep, [SPEECH] * tail_frames + [QUIET] * 30)
    assert Endpoint.SPEECH not in states
    assert states[-1] is Endpoint.NO_SPEECH
    assert states.index(Endpoint.NO_SPEECH) == math.ceil(1600 / FRAME_MS) - 1


def test_speech_just_before_the_timeout_starts_the_utterance():
    ep = Endpointer(no_speech_timeout_ms=1000)
    needed = math.ceil(1000 / FRAME_MS)
    states = push_all(ep, [QUIET] * (needed - 2) + [SPEECH])  # speech at 960 ms of 1000
    assert states[-1] is Endpoint.SPEECH


# --------------------------------------------------------------------------------------------
# pre-roll


def test_pre_roll_frames_are_included_in_audio():
    ep = Endpointer()
    # 1-3: wake tail (speech), 4-7: silence, 8-12: command speech
    probs = [SPEECH] * 3 + [QUIET] * 4 + [SPEECH] * 5
    for k, p in enumerate(probs, start=1):
        ep.push(marked(k), p)
    assert ep.state is Endpoint.SPEECH
    ids = frame_ids(ep.audio())
    assert ids == [6, 7, 8, 9, 10, 11, 12], ids
    assert ids[:PRE_ROLL_FRAMES] == [8 - PRE_ROLL_FRAMES + i for i in range(PRE_ROLL_FRAMES)]


def test_pre_roll_never_reaches_back_into_the_wake_phrase():
    ep = Endpointer()
    # 1-2: wake tail, 3: one silent frame, 4-6: command
    for k, p in enumerate([SPEECH, SPEECH, QUIET, SPEECH, SPEECH, SPEECH], start=1):
        ep.push(marked(k), p)
    assert frame_ids(ep.audio()) == [3, 4, 5, 6]


def test_threshold_is_respected():
    ep = Endpointer(threshold=0.8)
    assert push_all(ep, [QUIET, 0.7, 0.79]) == [Endpoint.WAITING] * 3
    assert ep.push(zeros(), 0.8) is Endpoint.SPEECH


# --------------------------------------------------------------------------------------------
# Silero VAD (real model) and the two together


@pytest.fixture(scope="module")
def vad() -> SileroVad:
    return SileroVad()


@pytest.fixture(scope="module")
def session_frames() -> list[np.ndarray]:
    if not SESSION.exists():
        pytest.skip(f"test recording {SESSION} is missing")
    return list(wav_frames(SESSION))


def rms(frame: np.ndarray) -> float:
    return float(np.sqrt(np.mean(frame.astype(np.float64) ** 2)))


def test_silero_high_on_speech_low_on_zeros(vad, session_frames):
    vad.reset()
    probs = [vad.probability(f) for f in session_frames]
    assert all(0.0 <= p <= 1.0 for p in probs)
    loud = [p for f, p in zip(session_frames, probs, strict=True) if rms(f) > 2000]  # clearly voiced frames
    assert len(loud) >= 10
    assert float(np.median(loud)) > 0.9, loud
    assert sum(p >= 0.5 for p in loud) >= 0.9 * len(loud), loud

    vad.reset()
    silent = [vad.probability(zeros()) for _ in range(25)]
    assert max(silent) < 0.2, silent


def test_silero_drives_the_endpointer_on_a_session(vad, session_frames):
    """0.5 s silence, "hey mycroft", a command, trailing silence: the command is endpointed before
    the file ends. The wake word is taken as ending on the last voiced frame of its first burst."""
    vad.reset()
    probs = [vad.probability(f) for f in session_frames]
    first_speech = next(i for i, p in enumerate(probs) if p >= 0.5)
    wake_end = next(i for i in range(first_speech, len(probs)) if probs[i] < 0.5)
    ep = Endpointer()
    state = Endpoint.WAITING
    for i in range(wake_end, len(session_frames)):
        state = ep.push(session_frames[i], probs[i])
        if state in (Endpoint.END, Endpoint.NO_SPEECH):
            break
    assert state is Endpoint.END
    assert i < len(session_frames) - 1, "the utterance should end on the trailing silence, not at EOF"
    audio = ep.audio()
    assert len(audio) >= 1.0 * 16000, "the command lasts more than a second"
    assert rms(audio) > 500
