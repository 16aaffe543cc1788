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
WAKE_TAIL_MS = 480  # the wake phrase may still be sounding when it is detected
PRE_ROLL_FRAMES = 2  # audio kept before the first speech frame (160 ms), so onsets are not cut


class SileroVad:
    """Silero VAD v4 through openWakeWord's wrapper; ``probability(frame) -> float`` in 0..1."""

    def __init__(self):
        from openwakeword.vad import VAD

        self._vad = VAD(str(openwakeword_models_dir() / "silero_vad.onnx"))

    def probability(self, frame: np.ndarray) -> float:
        """Speech probability of one ``(1280,)`` int16 16 kHz frame."""
        return float(self._vad.predict(frame, frame_size=640))

    def reset(self) -> None:
        self._vad.reset_states()


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
