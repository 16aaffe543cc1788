"""Stand-in stages for the fast loop harness (tests/test_loop_harness.py).

They implement the protocols of :mod:`edge.loop.stages` from a :class:`Script` instead of models,
so the pipeline (the unit under test) runs a whole session in milliseconds. Each frame's first
sample holds its index in the script; the stand-ins read it to know where they are.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from drivers.audio import FRAME_SAMPLES, write_wav
from edge.llm.base import GenerationStats, LlmEngine
from edge.stages.asr.base import Recognition
from edge.stages.wake import Detection

FRAME_MS = 80


class Script:
    """A timeline of 80 ms frames: :meth:`quiet`, :meth:`wake` (one frame whose detection the
    wake stand-in reports), :meth:`say` (frames the VAD stand-in scores as speech)."""

    def __init__(self):
        self.n = 0
        self.wakes: set[int] = set()
        self.speech: set[int] = set()

    def quiet(self, ms: int) -> "Script":
        self.n += ms // FRAME_MS
        return self

    def wake(self) -> "Script":
        self.wakes.add(self.n)
        self.n += 1
        return self

    def say(self, ms: int) -> "Script":
        self.speech.update(range(self.n, self.n + ms // FRAME_MS))
        self.n += ms // FRAME_MS
        return self

    def wake_at(self, t_ms: int) -> "Script":
        """A wake word in the frame the pipeline processes at ``t_ms`` (a frame of the script already)."""
        i = at(t_ms)
        assert 0 <= i < self.n, f"{t_ms} ms is outside the script"
        self.wakes.add(i)
        return self

    def frames(self):
        for i in range(self.n):
            f = np.zeros(FRAME_SAMPLES, dtype=np.int16)
            f[0] = i
            yield f


def at(t_ms: int) -> int:
    """The index of the frame the pipeline processes at ``t_ms`` (its clock advances before each frame)."""
    return t_ms // FRAME_MS - 1


def index(frame: np.ndarray) -> int:
    return int(frame[0])


class ScriptedWake:
    """:class:`edge.loop.stages.WakeDetector`: a detection at the script's wake frames."""

    def __init__(self, script: Script, name: str = "hey_mycroft", score: float = 0.9):
        self.script, self.name, self.score = script, name, score
        self.scored = 0

    def process(self, frame: np.ndarray) -> Detection | None:
        self.scored += 1
        return Detection(self.name, self.score) if index(frame) in self.script.wakes else None

    def flush(self) -> None:
        self.scored = 0


class ScriptedVad:
    """:class:`edge.loop.stages.VoiceActivity`: 0.9 on the script's speech frames, 0.02 elsewhere."""

    def __init__(self, script: Script):
        self.script = script
        self.scored: list[int] = []  # frame indexes scored
        self.resets = 0

    def probability(self, frame: np.ndarray) -> float:
        self.scored.append(index(frame))
        return 0.9 if index(frame) in self.script.speech else 0.02

    def reset(self) -> None:
        self.resets += 1


class ScriptedRecognizer:
    """:class:`edge.stages.asr.base.Recognizer`: the next of ``texts`` per utterance; raises on
    the utterances numbered in ``fail`` (1 = the first). :meth:`speculate` gives the next of
    ``speculations`` (each silence start takes one), then the coming final text; ``speculated``
    lists what it gave, ``partials`` the last :meth:`set_partials` budget. With ``rechecks``, every
    decode is windowed (``window_s`` 10) and :meth:`recheck` gives the next of them in the full
    window; ``rechecked`` lists what it gave."""

    name = "scripted"

    def __init__(self, texts: list[str], fail: tuple[int, ...] = (), speculations: list[str] | None = None,
                 rechecks: list[str] | None = None):
        self.rechecks = None if rechecks is None else list(rechecks)
        self.rechecked: list[str] = []
        self.texts = list(texts)
        self.fail = fail
        self.speculations = list(speculations or [])
        self.speculated: list[str] = []
        self.partials: tuple[int, float] | None = None
        self.utterances = 0
        self.frames: list[int] = []
        self.vocabulary: list[str] = []

    def speculate(self) -> Recognition:
        text = self.speculations.pop(0) if self.speculations else (self.texts[0] if self.texts else "")
        self.speculated.append(text)
        return self._rec(text)

    def _rec(self, text: str) -> Recognition:
        return Recognition(text, 0.9, audio_ms=FRAME_MS * len(self.frames), decode_ms=1.0,
                           window_s=None if self.rechecks is None else 10.0)

    def recheck(self) -> Recognition | None:
        if not self.rechecks:
            return None
        text = self.rechecks.pop(0)
        self.rechecked.append(text)
        return Recognition(text, 0.9, audio_ms=FRAME_MS * len(self.frames), decode_ms=1.0)

    def set_partials(self, interval_ms: int, cpu_fraction: float) -> None:
        self.partials = (interval_ms, cpu_fraction)

    def start(self) -> None:
        self.frames = []

    def accept(self, frame: np.ndarray) -> str | None:
        self.frames.append(index(frame))
        return None

    def finish(self) -> Recognition:
        self.utterances += 1
        if self.utterances in self.fail:
            raise RuntimeError("recognizer stand-in told to fail")
        text = self.texts.pop(0) if self.texts else ""
        return self._rec(text)

    def set_vocabulary(self, phrases: list[str]) -> None:
        self.vocabulary = list(phrases)

    def expect(self, answers: list[str] | None) -> None:
        self.answers = answers


class SilentTts:
    """:class:`edge.loop.stages.Synthesizer`: writes ``ms`` of silence (16 kHz); raises on the
    requests numbered in ``fail``."""

    def __init__(self, ms: int = 200, fail: tuple[int, ...] = ()):
        self.ms, self.fail = ms, fail
        self.texts: list[str] = []

    def synthesize(self, text: str, path: str | Path) -> Path:
        self.texts.append(text)
        if len(self.texts) in self.fail:
            raise RuntimeError("speech stand-in told to fail")
        return write_wav(path, np.zeros(16 * self.ms, dtype=np.int16))

    def close(self) -> None:
        pass


class BusySpeaker:
    """:class:`edge.loop.stages.Speaker`: busy for ``busy_ms`` of audio time per WAV played."""

    realtime = False

    def __init__(self, busy_ms: int):
        self.busy_ms = busy_ms
        self.until = -1
        self.played: list[tuple[int, Path]] = []
        self.stopped = 0

    def start(self, wav: Path, t_ms: int) -> None:
        self.until = t_ms + self.busy_ms
        self.played.append((t_ms, Path(wav)))

    def queue(self, wav: Path, t_ms: int) -> None:
        start = max(t_ms, self.until)
        self.until = start + self.busy_ms
        self.played.append((start, Path(wav)))

    def busy(self, t_ms: int) -> bool:
        return t_ms < self.until

    def stop(self) -> None:
        self.until = -1
        self.stopped += 1


class ScriptedLlm(LlmEngine):
    """:class:`edge.llm.base.LlmEngine`: counts :meth:`tick`, reports ``reload_ms`` once, and
    fails every generation (``RuntimeError``, as a broken runtime would) when ``broken``."""

    name = "scripted-llm"
    n_ctx = 512

    def __init__(self, reload_ms: float | None = None, broken: bool = False):
        self.last_stats = GenerationStats()
        self.reload_ms, self.broken = reload_ms, broken
        self.ticks = 0

    def stream(self, request, cancel=None):
        if self.broken:
            raise RuntimeError("LLM runtime stand-in crashed")
        yield "Hello."

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def tick(self) -> bool:
        self.ticks += 1
        return False

    def take_reload_ms(self) -> float | None:
        ms, self.reload_ms = self.reload_ms, None
        return ms
