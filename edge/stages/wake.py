"""Wake word stage: ``process(frame) -> Detection | None`` over one or more models, each run by its
engine (:mod:`edge.stages.wake_engines`: microWakeWord through pymicro-wakeword, or openWakeWord).

Every 80 ms frame is scored, also while a turn is in progress, so the engines' feature buffers
always hold the most recent audio; the pipeline only *acts* on a detection when it is listening.
:meth:`WakeWord.flush` forgets all audio (a new stream): openWakeWord gets 1.6 s of silence pushed
through its feature models (its ``reset()`` keeps them), microWakeWord's models are reloaded (a
streaming TFLite model keeps its state inside the interpreter).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

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

__all__ = ["Detection", "Trigger", "WakeSpec", "WakeWord", "FLUSH_FRAMES", "NOT_WAKE_WORDS",
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

    def step(self, scores: dict[str, float]) -> Detection | None:
        """One frame's ``{name: score}``; a :class:`Detection` or None."""
        self._since_last += 1
        if self._since_last <= self.refractory_frames:
            return None
        best = max(((k, float(v)) for k, v in scores.items() if v >= self.thresholds[k]),
                   key=lambda kv: kv[1], default=None)
        if best is None:
            return None
        self._since_last = 0
        return Detection(best[0], best[1])

    def reset(self) -> None:
        """Forget the last detection (the refractory time is over)."""
        self._since_last = 10**9


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
        micro, oww = [], []
        for s in specs:
            key = model_key(s.name)
            if key in thresholds:
                raise ValueError(f"wake.models: two models named {key!r}; configure one engine per wake word")
            if (s.engine or default_engine(s.name)) == "micro":
                f = find_micro(s.name, models_dir)
                micro.append((key, f))
                thresholds[key] = s.threshold if s.threshold is not None else f.cutoff
            else:
                oww.append(s.name)
                thresholds[key] = s.threshold if s.threshold is not None else OWW_DEFAULT_THRESHOLD
        self.engines: dict[str, str] = {k: "micro" for k, _ in micro} | {model_key(n): "openwakeword" for n in oww}
        self._engines = ([MicroEngine(micro)] if micro else []) + ([OwwEngine(oww)] if oww else [])
        self.trigger = Trigger(thresholds, int(np.ceil(refractory_ms / 80)))

    @classmethod
    def from_settings(cls, settings) -> WakeWord:
        """From :class:`edge.config.Settings`: ``wake.models``, ``wake.refractory_ms``, ``models.dir``."""
        return cls(list(settings.wake.models), settings.wake.refractory_ms, settings.models.dir)

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
        return self.trigger.step(self.score(frame))

    def set_thresholds(self, models: list) -> None:
        """New thresholds for the loaded models (a config reload: no model is loaded again, the next
        frame uses them). ``models`` as at construction (a 2-tuple or an engine of None: the engine the
        model runs on); a threshold of None keeps the running one.

        Raises:
            ValueError: a name that is not one of the loaded models, or another engine for one
                (either needs a restart).
        """
        new = dict(self.trigger.thresholds)
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
        self.trigger.thresholds = new

    def flush(self) -> None:
        """Forget all audio and the last detection (a new stream; see the module doc)."""
        for e in self._engines:
            e.flush()
        self.trigger.reset()
