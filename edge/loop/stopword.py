"""Saying "stop" while the box speaks ends the reply (C21), without a wake word.

:class:`StopListener` is fed every frame while the box speaks. A frame is voice when its level is
:data:`ABOVE_FLOOR_DB` over the quietest frame of the last 2 s (and above :data:`MIN_DB`): an energy
gate, so the VAD's state stays the endpointer's and costs nothing while the box talks. A run
of voice frames from :data:`MIN_SPEECH_MS` to :data:`MAX_SPEECH_MS` long, followed by
:data:`END_SILENCE_MS` of non-speech, is decoded by the recognizer; when the whole transcript is a stop
phrase (:data:`STOP_PHRASES`: "stop", "stop that", "be quiet", "cancel", "enough", ...; in Chinese
"停", "停止", "别说了") the listener says so and the pipeline stops the speaker. Only a short utterance
that is nothing but a stop phrase counts, so a fragment of the box's own reply heard back (no echo
cancellation) does not stop it unless that fragment is a bare "stop". Longer speech is not decoded.
"""
from __future__ import annotations

import re

import numpy as np

__all__ = ["StopListener", "STOP_PHRASES", "is_stop"]

FRAME_MS = 80
MIN_SPEECH_MS = 160
MAX_SPEECH_MS = 1200
END_SILENCE_MS = 160
PRE_ROLL_FRAMES = 2
ABOVE_FLOOR_DB = 12.0
MIN_DB = -50.0
FLOOR_FRAMES = 25  # 2 s

STOP_PHRASES = frozenset({
    "stop", "stop it", "stop that", "stop talking", "please stop", "stop please", "be quiet", "quiet",
    "cancel", "enough", "that's enough", "shut up", "silence", "停", "停止", "别说了", "闭嘴", "安静",
})


def is_stop(text: str) -> bool:
    """Whether ``text`` (a transcript) is a stop phrase and nothing else."""
    t = re.sub(r"[^\w\s']", " ", text.lower()).strip()
    return " ".join(t.split()) in STOP_PHRASES


def level_db(frame: np.ndarray) -> float:
    """RMS level of an int16 frame in dBFS (-120 for digital silence)."""
    rms = float(np.sqrt(np.mean(np.square(frame, dtype=np.float64)))) / 32768
    return 20 * np.log10(rms) if rms > 1e-6 else -120.0


class StopListener:
    """See the module docstring. ``push(frame)`` per 80 ms frame ``(1280,)`` int16; returns the audio
    ``(n,)`` int16 of a short utterance to decode, or None. :meth:`reset` when speaking starts."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self._history: list[np.ndarray] = []
        self._speech: list[np.ndarray] = []
        self._levels: list[float] = []
        self._silence_ms = 0
        self._too_long = False

    def push(self, frame: np.ndarray) -> np.ndarray | None:
        db = level_db(frame)
        self._levels = (self._levels + [db])[-FLOOR_FRAMES:]
        speech = db > max(MIN_DB, min(self._levels) + ABOVE_FLOOR_DB)
        if not self._speech:
            if speech:
                self._speech = self._history[-PRE_ROLL_FRAMES:] + [frame]
                self._silence_ms, self._too_long = 0, False
            else:
                self._history = (self._history + [frame])[-PRE_ROLL_FRAMES:]
            return None
        self._speech.append(frame)
        self._silence_ms = 0 if speech else self._silence_ms + FRAME_MS
        voiced_ms = (len(self._speech) - PRE_ROLL_FRAMES) * FRAME_MS - self._silence_ms
        if voiced_ms > MAX_SPEECH_MS:
            self._too_long = True  # a sentence, not a stop: wait for its end, decode nothing
        if self._silence_ms < END_SILENCE_MS:
            return None
        audio = None if self._too_long or voiced_ms < MIN_SPEECH_MS else np.concatenate(self._speech)
        self._speech, self._history = [], []
        return audio
