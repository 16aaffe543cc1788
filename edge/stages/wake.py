"""Wake word stage: ``process(frame) -> Detection | None`` over one or more models, each run by its
engine (:mod:`edge.stages.wake_engines`: microWakeWord through pymicro-wakeword, or openWakeWord).

Every 80 ms frame is scored, also while a turn is in progress, so the engines' feature buffers
always hold the most recent audio; the pipeline only *acts* on a detection when it is listening.
:meth:`WakeWord.flush` forgets all audio (a new stream): openWakeWord gets 1.6 s of silence pushed
through its feature models (its ``reset()`` keeps them), microWakeWord's models are reloaded (a
streaming TFLite model keeps its state inside the interpreter).

With a second stage (:meth:`WakeWord.confirm_with`, :class:`Confirm`; ``wake.check``), a detection
of a checked word is held until its score stops rising and then confirmed or rejected on the
audio before it (:mod:`edge.stages.wake_check`: Whisper hears the phrase or not).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from drivers.audio import FRAME_SAMPLES
from edge.models.manifest import ModelNotFoundError
from edge.stages.wake_engines import (
    FLUSH_FRAMES,
    NOT_WAKE_WORDS,
    MicroEngine,
    OwwEngine,
    default_engine,
    find_micro,
    openwakeword_models_dir,
)

__all__ = ["Detection", "Trigger", "Confirm", "WakeSpec", "WakeWord", "FLUSH_FRAMES", "NOT_WAKE_WORDS",
           "openwakeword_models_dir", "model_key", "ModelNotFoundError"]

#: openWakeWord's models have no threshold of their own; 0.5 is its README's example
OWW_DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class Detection:
    wake_word: str  # configured model name, e.g. "okay_nabu"
    score: float  # 0..1


@dataclass(frozen=True)
class WakeSpec:
    """One configured model: ``name`` (stock name or path), ``engine`` (``micro`` | ``openwakeword``;
    None: :func:`edge.stages.wake_engines.default_engine`), ``threshold`` 0..1 (None: the model's own,
    microWakeWord's JSON ``probability_cutoff``, or 0.5 for openWakeWord)."""

    name: str
    engine: str | None = None
    threshold: float | None = None


def model_key(name: str) -> str:
    """The name a model is reported under: the name itself, or a path's file stem."""
    return Path(name).stem if name.endswith((".onnx", ".json", ".tflite")) else name


class Trigger:
    """The decision on per-frame scores: a model's score reaching its threshold outside the refractory
    time is a detection (the highest such score wins; the refractory time is shared by all models).
    :meth:`WakeWord.process` uses it frame by frame; bench/tv_false_wakes.py replays stored scores
    through it for a sweep of thresholds.

    Args:
        thresholds: ``{name: threshold}``, 0..1.
        refractory_frames: after a detection, no new detection for this many 80 ms frames.
    """

    def __init__(self, thresholds: dict[str, float], refractory_frames: int):
        self.thresholds = dict(thresholds)
        self.refractory_frames = refractory_frames
        self._since_last = 10**9
        self._disarmed: set[str] = set()

    def step(self, scores: dict[str, float]) -> Detection | None:
        """One frame's ``{name: score}``; a :class:`Detection` or None."""
        self._since_last += 1
        self._disarmed = {k for k in self._disarmed if scores.get(k, 0.0) >= self.thresholds[k]}
        if self._since_last <= self.refractory_frames:
            return None
        best = max(((k, float(v)) for k, v in scores.items() if v >= self.thresholds[k] and k not in self._disarmed),
                   key=lambda kv: kv[1], default=None)
        if best is None:
            return None
        self._since_last = 0
        return Detection(best[0], best[1])

    def reset(self) -> None:
        """Forget the last detection (the refractory time is over)."""
        self._since_last = 10**9
        self._disarmed = set()

    def rejected(self, name: str) -> None:
        """The last detection of ``name`` was not confirmed (:class:`Confirm`): no refractory time,
        but ``name`` detects again only after its score has fallen below its threshold (a
        microWakeWord score stays high ~1.2 s after a word: one check per word, not one per frame)."""
        self._since_last = 10**9
        self._disarmed.add(name)


class Confirm:
    """The second stage between :class:`Trigger` and the caller: a first-stage detection is held
    until its score stops rising (at most ``hold_frames`` frames), then ``checker`` decides on the
    audio up to that frame and the highest score (:class:`edge.stages.wake_check.WhisperCheck`:
    ``check(name, audio, score) -> Verdict``, ``window_samples``, ``phrases``: the words it checks;
    a detection of another word passes unchecked).
    :meth:`WakeWord.process` uses it frame by frame; bench/wake_words.py replays stored scores
    and audio through it.

    Args:
        trigger: the first stage's decision (its thresholds are the first stage's).
        checker: the second stage.
        hold_frames: 80 ms frames a detection may wait for a higher score (the word's end).
    """

    def __init__(self, trigger: Trigger, checker, hold_frames: int = 6):
        self.trigger = trigger
        self.checker = checker
        self.hold_frames = hold_frames
        self._pending: tuple[str, float, int] | None = None  # (name, highest score, frames held)
        self.verdicts: list = []  # the checks' verdicts (the last 100), newest last

    def step(self, scores: dict[str, float], audio) -> Detection | None:
        """One frame's scores; ``audio()`` returns the int16 audio up to and with this frame (at
        least ``checker.window_samples`` of it when there is that much). A confirmed
        :class:`Detection` or None."""
        if self._pending is not None:
            name, peak, held = self._pending
            now = float(scores.get(name, 0.0))
            if now > peak and held < self.hold_frames:
                self._pending = (name, now, held + 1)
                return None
            self._pending = None
            return self._check(name, peak, audio())
        det = self.trigger.step(scores)
        if det is None or det.wake_word not in self.checker.phrases:  # a word that is not checked
            return det
        if self.hold_frames > 0:
            self._pending = (det.wake_word, det.score, 0)
            return None
        return self._check(det.wake_word, det.score, audio())

    def _check(self, name: str, score: float, audio: np.ndarray) -> Detection | None:
        verdict = self.checker.check(name, audio, score)
        self.verdicts = [*self.verdicts[-99:], verdict]
        if verdict.accepted:
            return Detection(name, score)
        self.trigger.rejected(name)
        return None

    def reset(self) -> None:
        """Forget a held detection and the first stage's last one."""
        self._pending = None
        self.trigger.reset()


def _spec(m) -> WakeSpec:
    if isinstance(m, WakeSpec):
        return m
    if isinstance(m, tuple):
        return WakeSpec(*m[:1], None, m[1]) if len(m) == 2 else WakeSpec(*m)
    return WakeSpec(m.name, getattr(m, "engine", None), m.threshold)  # edge.config.WakeModel


class WakeWord:
    """Wake-word models of either engine with per-model thresholds and a refractory time.

    Args:
        models: :class:`WakeSpec`, ``(name, threshold)`` (engine by name) or ``(name, engine,
            threshold)``; ``name`` is a stock model (microWakeWord: ``okay_nabu``, ``hey_mycroft``,
            ``alexa``, ``hey_jarvis``, Apache-2.0; openWakeWord: ``hey_mycroft``, ``alexa``,
            ``hey_jarvis``, ``hey_rhasspy``, CC BY-NC-SA 4.0), a model added with ``edge models add``
            (micro), or a path (``.json``/``.tflite`` micro, ``.onnx`` openWakeWord).
        refractory_ms: after a detection, no new detection for this many ms of audio.
        models_dir: ``models.dir`` of the settings (where added models are).
    Raises:
        ModelNotFoundError: an engine's package or a model file is missing (a ``FileNotFoundError``
            too); the message names it.
        ValueError: two models under one name, or a malformed microWakeWord JSON.
    """

    def __init__(self, models: list, refractory_ms: int = 2000, models_dir: Path | None = None):
        specs = [_spec(m) for m in models]
        thresholds: dict[str, float] = {}
        self.phrases: dict[str, str] = {}  # the words each model listens for (the second stage's phrase)
        micro, oww = [], []
        for s in specs:
            key = model_key(s.name)
            if key in thresholds:
                raise ValueError(f"wake.models: two models named {key!r}; configure one engine per wake word")
            if (s.engine or default_engine(s.name)) == "micro":
                f = find_micro(s.name, models_dir)
                micro.append((key, f))
                self.phrases[key] = f.wake_word
                thresholds[key] = s.threshold if s.threshold is not None else f.cutoff
            else:
                oww.append(s.name)
                self.phrases[key] = key.replace("_", " ")
                thresholds[key] = s.threshold if s.threshold is not None else OWW_DEFAULT_THRESHOLD
        self.engines: dict[str, str] = {k: "micro" for k, _ in micro} | {model_key(n): "openwakeword" for n in oww}
        self._engines = ([MicroEngine(micro)] if micro else []) + ([OwwEngine(oww)] if oww else [])
        self.thresholds = dict(thresholds)  # as configured; the trigger's are lower for checked words
        self.trigger = Trigger(thresholds, int(np.ceil(refractory_ms / 80)))
        self.confirm: Confirm | None = None
        self._ring: deque[np.ndarray] = deque(maxlen=1)

    def confirm_with(self, checker, hold_ms: int = 480) -> None:
        """Put a second stage after the models (:class:`Confirm`; ``checker``: e.g.
        :class:`edge.stages.wake_check.WhisperCheck`); None removes it. The last
        ``checker.window_samples`` of audio are kept for it. A checked word's first stage runs at
        ``checker.threshold`` when that is lower than its configured threshold (Whisper guards
        the lower one: :attr:`trigger` holds the thresholds in force)."""
        self.confirm = None
        if checker is not None:
            self.confirm = Confirm(self.trigger, checker, int(np.ceil(hold_ms / 80)))
            self._ring = deque(maxlen=int(np.ceil(checker.window_samples / FRAME_SAMPLES)) + 1)
        self._apply_thresholds()

    def _apply_thresholds(self) -> None:
        checker = self.confirm.checker if self.confirm is not None else None
        low = getattr(checker, "threshold", None)
        self.trigger.thresholds = {k: min(t, low) if low is not None and k in checker.phrases else t
                                   for k, t in self.thresholds.items()}

    @classmethod
    def from_settings(cls, settings, recognizer=None, check: bool = True) -> WakeWord:
        """From :class:`edge.config.Settings`: ``wake.models``, ``wake.refractory_ms``, ``models.dir``,
        and the second stage of ``wake.check`` (:func:`edge.stages.wake_check.build_check`; its
        Whisper model is ``recognizer``'s when that is the same model in this process; ``check=False``:
        without it, :meth:`confirm_with` adds it later)."""
        ww = cls(list(settings.wake.models), settings.wake.refractory_ms, settings.models.dir)
        from edge.stages.wake_check import build_check

        checker = build_check(settings, ww.phrases, recognizer) if check else None
        if checker is not None:
            ww.confirm_with(checker, settings.wake.check.hold_ms)
        return ww

    def engine_for(self, name: str):
        """The engine object (:class:`~edge.stages.wake_engines.MicroEngine` or
        :class:`~edge.stages.wake_engines.OwwEngine`) that runs model ``name``."""
        cls = MicroEngine if self.engines[name] == "micro" else OwwEngine
        return next(e for e in self._engines if isinstance(e, cls))

    @property
    def refractory_frames(self) -> int:
        """The refractory time in 80 ms frames."""
        return self.trigger.refractory_frames

    def score(self, frame: np.ndarray) -> dict[str, float]:
        """Score one frame ``(1280,)`` int16 at 16 kHz: ``{configured name: score 0..1}``."""
        out: dict[str, float] = {}
        for e in self._engines:
            out.update(e.score(frame))
        return out

    def process(self, frame: np.ndarray) -> Detection | None:
        """Score one frame ``(1280,)`` int16 at 16 kHz; a :class:`Detection` when a model's score
        reaches its threshold outside the refractory time, else None."""
        if self.confirm is None:
            return self.trigger.step(self.score(frame))
        self._ring.append(np.asarray(frame, dtype=np.int16))
        return self.confirm.step(self.score(frame), lambda: np.concatenate(self._ring))

    def set_thresholds(self, models: list) -> None:
        """New thresholds for the loaded models (a config reload: no model is loaded again, the next
        frame uses them). ``models`` as at construction (a 2-tuple or an engine of None: the engine the
        model runs on); a threshold of None keeps the running one.

        Raises:
            ValueError: a name that is not one of the loaded models, or another engine for one
                (either needs a restart).
        """
        new = dict(self.thresholds)
        for m in models:
            s = _spec(m)
            key = model_key(s.name)
            if key not in new:
                raise ValueError(f"wake.models: {s.name!r} is not loaded (loaded: {', '.join(sorted(new))}); "
                                 "a new wake word needs a restart")
            if s.engine is not None and s.engine != self.engines[key]:  # None: the engine it runs on
                raise ValueError(f"wake.models: {key!r} runs on {self.engines[key]}, not {s.engine}; "
                                 "another engine needs a restart")
            if s.threshold is not None:
                new[key] = float(s.threshold)
        self.thresholds = new
        self._apply_thresholds()

    def set_check_threshold(self, threshold: float | None) -> None:
        """A new first-stage threshold for the checked words (``wake.check.threshold`` of a config
        reload; None: their configured ones); nothing without a second stage."""
        if self.confirm is not None:
            self.confirm.checker.threshold = threshold
            self._apply_thresholds()

    def flush(self) -> None:
        """Forget all audio and the last detection (a new stream; see the module doc)."""
        for e in self._engines:
            e.flush()
        self.trigger.reset()
        self._ring.clear()
        if self.confirm is not None:
            self.confirm.reset()
