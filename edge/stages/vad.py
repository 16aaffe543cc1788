"""Endpointing: Silero VAD (the ONNX model openWakeWord 0.5.1 ships) decides where the command
after a wake word starts and ends.

Per 80 ms frame the VAD gives a speech probability (mean over two 40 ms windows). After a wake
word the endpointer first lets the wake phrase itself finish (up to ``WAKE_TAIL_MS``), then
waits for speech; the utterance ends after ``trailing_silence_ms`` of non-speech, or at
``max_utterance_ms``; with no speech for ``no_speech_timeout_ms`` it reports no speech. The voice
loop's semantic endpointing (:mod:`edge.loop.pipeline`) changes the tail while silence lasts and
may end the utterance early (:meth:`Endpointer.end`); :attr:`Endpointer.reason` says why it ended.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from edge.stages.wake import openwakeword_models_dir

FRAME_MS = 80  # one pipeline frame, ms
FULL_SCALE = 32768.0  # int16
WAKE_TAIL_MS = 480  # the wake phrase may still be sounding when it is detected
PRE_ROLL_FRAMES = 2  # audio kept before the first speech frame (160 ms), so onsets are not cut


class LevelNormalizer:
    """Gain in front of the VAD, so a quiet or distant speaker reaches the level Silero judges well.

    Silero's speech probability falls with the level: a spoken command whose loudest frame is at
    −42 dBFS over a −60 dBFS noise floor is cut after 15 of its 42 frames with one fixed threshold,
    and kept whole with this gain in front (tests/test_vad_adaptive.py). The gain follows the speech peak (frame RMS,
    falling :data:`PEAK_DECAY` per 80 ms frame) toward :data:`TARGET_DBFS`, is at most
    :data:`MAX_GAIN_DB`, never attenuates, and never lifts the noise floor (the lowest recent frame
    RMS, rising 1 % per frame) above :data:`FLOOR_CEILING_DBFS` — so silence and steady noise are not
    turned into speech. The gain changes only the copy given to the VAD, never the recorded audio.
    """

    TARGET_DBFS = -20.0
    MAX_GAIN_DB = 24.0
    FLOOR_CEILING_DBFS = -50.0
    PEAK_DECAY = 0.92  # about −0.7 dB per frame: 10 dB in ~1.1 s, so a loud wake word soon stops counting

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._peak = 0.0
        self._floor: float | None = None
        self.gain = 1.0

    def __call__(self, frame: np.ndarray) -> np.ndarray:
        """``frame`` (int16) with the gain applied and clipped to int16."""
        x = frame.astype(np.float32)
        rms = float(np.sqrt(np.mean(x * x))) + 1.0 if x.size else 1.0
        self._peak = max(rms, self._peak * self.PEAK_DECAY)
        self._floor = rms if self._floor is None else min(rms, self._floor * 1.01)
        target = FULL_SCALE * 10 ** (self.TARGET_DBFS / 20)
        floor_ceiling = FULL_SCALE * 10 ** (self.FLOOR_CEILING_DBFS / 20)
        self.gain = max(1.0, min(10 ** (self.MAX_GAIN_DB / 20), target / self._peak, floor_ceiling / self._floor))
        if self.gain == 1.0:
            return frame
        return np.clip(x * self.gain, -FULL_SCALE, FULL_SCALE - 1).astype(np.int16)


class SileroVad:
    """Silero VAD v4 through openWakeWord's wrapper; ``probability(frame) -> float`` in 0..1.

    ``normalize``: put a :class:`LevelNormalizer` in front of the model (``endpoint.vad_adaptive``)."""

    def __init__(self, normalize: bool = False):
        from openwakeword.vad import VAD

        self._vad = VAD(str(openwakeword_models_dir() / "silero_vad.onnx"))
        self.normalizer = LevelNormalizer() if normalize else None

    def probability(self, frame: np.ndarray) -> float:
        """Speech probability of one ``(1280,)`` int16 16 kHz frame."""
        if self.normalizer is not None:
            frame = self.normalizer(frame)
        return float(self._vad.predict(frame, frame_size=640))

    def reset(self) -> None:
        self._vad.reset_states()
        if self.normalizer is not None:
            self.normalizer.reset()


class Endpoint(Enum):
    WAITING = "waiting"  # no speech yet
    SPEECH = "speech"  # inside the utterance
    END = "end"  # utterance complete
    NO_SPEECH = "no_speech"  # timed out without speech


@dataclass
class Endpointer:
    """State machine over frames after a wake word.

    ``push(frame, prob)`` returns the state after that frame; ``audio()`` gives the utterance,
    ``(n,)`` int16 at 16 kHz, from ``PRE_ROLL_FRAMES`` before the first speech frame to the end.
    ``after_wake``: the wake phrase may still be sounding, so speech in the first frames (up to
    ``WAKE_TAIL_MS``) is its tail; False for an answer to the box's question (no wake phrase).

    ``release``: once inside the utterance a frame is silence only below ``threshold − release``
    (hysteresis; Silero's own speech-timestamp code uses 0.15), so a voice that fades at the end of
    a word is not cut. 0 gives one threshold for both.

    ``trailing_silence_ms`` and ``tail_reason`` may be changed while the utterance runs (a longer
    wait for an incomplete command); at ``END``, ``reason`` is ``tail_reason`` (default
    ``vad_tail``), ``max_length``, or what :meth:`end` was given.

    ``prob`` outside 0..1 (NaN, or a sentinel such as -1 from a VAD still warming up) counts as
    neither speech nor silence (:attr:`unknown_frames` counts them).
    """

    threshold: float = 0.5
    trailing_silence_ms: int = 700
    max_utterance_ms: int = 10000
    no_speech_timeout_ms: int = 5000
    after_wake: bool = True
    release: float = 0.0
    tail_reason: str = "vad_tail"
    reason: str | None = None
    unknown_frames: int = 0
    state: Endpoint = Endpoint.WAITING
    frames: list = field(default_factory=list)
    _elapsed: int = 0
    _silence: int = 0
    _speech_ms: int = 0
    _tail_done: bool = False
    _history: list = field(default_factory=list)

    def __post_init__(self):
        self._tail_done = self._tail_done or not self.after_wake

    def push(self, frame: np.ndarray, prob: float) -> Endpoint:
        if not 0.0 <= prob <= 1.0:  # NaN or a sentinel (-1, 2, inf): neither speech nor silence
            return self._unknown(frame)
        speech = prob >= self.threshold
        self._elapsed += FRAME_MS
        if self.state is Endpoint.WAITING:
            if not self._tail_done:
                if not speech or self._elapsed > WAKE_TAIL_MS:
                    self._tail_done = True
                if not speech:
                    self._history = [frame]
                    return self._timeout()
                return self._timeout() if not self._tail_done else self._start(frame)
            if speech:
                return self._start(frame)
            self._history = (self._history + [frame])[-PRE_ROLL_FRAMES:]
            return self._timeout()
        if self.state is Endpoint.SPEECH:
            speech = prob >= self.threshold - self.release
            self.frames.append(frame)
            self._speech_ms += FRAME_MS
            self._silence = 0 if speech else self._silence + FRAME_MS
            if self._speech_ms >= self.max_utterance_ms:
                self.end("max_length")
            elif self._silence >= self.trailing_silence_ms:
                self.end(self.tail_reason)
        return self.state

    def _unknown(self, frame: np.ndarray) -> Endpoint:
        """A frame the VAD could not judge: time passes (the timeouts and the cap count it) and the
        audio is kept, but it neither starts speech, nor ends the wake phrase, nor adds silence."""
        self.unknown_frames += 1
        self._elapsed += FRAME_MS
        if self.state is Endpoint.WAITING:
            self._history = (self._history + [frame])[-PRE_ROLL_FRAMES:]
            return self._timeout()
        if self.state is Endpoint.SPEECH:
            self.frames.append(frame)
            self._speech_ms += FRAME_MS
            if self._speech_ms >= self.max_utterance_ms:
                self.end("max_length")
        return self.state

    @property
    def silence_ms(self) -> int:
        """ms of non-speech at the end of the utterance so far (0 while speech goes on)."""
        return self._silence

    def preroll(self, frames: list) -> None:
        """Audio heard just before this endpointer opened (the last frames of the utterance before:
        an answer that began while that one's tail ran), kept as pre-roll of the speech to come."""
        self._history = list(frames)[-PRE_ROLL_FRAMES:]

    def end(self, reason: str) -> None:
        """End the utterance now (``reason``: e.g. ``complete``); frames after it are not kept."""
        self.state = Endpoint.END
        self.reason = reason

    def _start(self, frame: np.ndarray) -> Endpoint:
        self.state = Endpoint.SPEECH
        self.frames = self._history[-PRE_ROLL_FRAMES:] + [frame]
        self._speech_ms = FRAME_MS
        return self.state

    def _timeout(self) -> Endpoint:
        if self._elapsed >= self.no_speech_timeout_ms:
            self.state = Endpoint.NO_SPEECH
        return self.state

    def audio(self) -> np.ndarray:
        """The utterance so far, ``(n,)`` int16 at 16 kHz; trailing silence beyond 240 ms removed."""
        if not self.frames:
            return np.zeros(0, dtype=np.int16)
        keep = len(self.frames) - max(0, (self._silence - 240) // FRAME_MS)
        return np.concatenate(self.frames[:keep])
