"""Wake word stage: openWakeWord 0.5.1 ONNX models, ``process(frame) -> Detection | None``.

Every 80 ms frame is scored, also while a turn is in progress, so the model's feature buffers
always hold the most recent audio; the pipeline only *acts* on a detection when it is listening.
This sidesteps a known openWakeWord behaviour: ``Model.reset()`` clears the scores but not the
melspectrogram/embedding buffers, so frames 5–8 after a reset still scored ~1.0 on the previous
clip's wake word (measured here, 0.5.1). :meth:`WakeWord.flush` therefore pushes silence through
the feature models before resetting.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from drivers.audio import FRAME_SAMPLES
from edge.models.manifest import ModelNotFoundError

# openWakeWord's classifiers look at 16 embedding frames (~1.28 s; openWakeWord README, "model
# architecture"); 20 frames of silence = 1.6 s flush the melspectrogram and embedding buffers.
FLUSH_FRAMES = 20


def openwakeword_models_dir() -> Path:
    """Directory of the ONNX models shipped inside the openwakeword 0.5.1 package.

    Raises:
        ModelNotFoundError: openwakeword is not installed (run the set-up script).
    """
    spec = importlib.util.find_spec("openwakeword")
    if spec is None or not spec.origin:
        raise ModelNotFoundError("the wake word models: openwakeword is not installed; run scripts/setup.sh")
    return Path(spec.origin).parent / "resources" / "models"


#: openWakeWord 0.5.1 models in the same folder that are intent classifiers, not wake words
NOT_WAKE_WORDS = frozenset({"timer", "weather"})


@dataclass(frozen=True)
class Detection:
    wake_word: str  # configured model name, e.g. "hey_mycroft"
    score: float  # 0..1


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


class WakeWord:
    """openWakeWord with per-model thresholds and a refractory time.

    Args:
        models: ``[(name, threshold)]``; ``name`` is a stock model (``hey_mycroft``, ``alexa``,
            ``hey_jarvis``, ``hey_rhasspy``: CC BY-NC-SA 4.0) or a path to an ``.onnx`` model.
        refractory_ms: after a detection, no new detection for this many ms of audio.
    Raises:
        ModelNotFoundError: a model file does not exist (a ``FileNotFoundError`` too); the message
            names it.
    """

    def __init__(self, models: list[tuple[str, float]], refractory_ms: int = 2000):
        from openwakeword.model import Model

        d = openwakeword_models_dir()
        paths, self._names, thresholds = [], {}, {}
        for name, threshold in models:
            p = Path(name) if name.endswith(".onnx") else d / f"{name}_v0.1.onnx"
            if not p.exists():
                known = ", ".join(sorted(n for q in d.glob("*_v0.1.onnx")
                                         if (n := q.name.removesuffix("_v0.1.onnx")) not in NOT_WAKE_WORDS))
                raise ModelNotFoundError(f"wake.models: wake word model '{name}': no file {p}; stock models: {known}")
            paths.append(str(p))
            self._names[p.stem] = p.stem.removesuffix("_v0.1") if not name.endswith(".onnx") else p.stem
            thresholds[self._names[p.stem]] = threshold
        self.model = Model(
            wakeword_models=paths, inference_framework="onnx",
            melspec_model_path=str(d / "melspectrogram.onnx"), embedding_model_path=str(d / "embedding_model.onnx"))
        self.trigger = Trigger(thresholds, int(np.ceil(refractory_ms / 80)))

    @property
    def refractory_frames(self) -> int:
        """The refractory time in 80 ms frames."""
        return self.trigger.refractory_frames

    def score(self, frame: np.ndarray) -> dict[str, float]:
        """Score one frame ``(1280,)`` int16 at 16 kHz: ``{configured name: score 0..1}``."""
        return {self._names[k]: float(v) for k, v in self.model.predict(frame).items()}

    def process(self, frame: np.ndarray) -> Detection | None:
        """Score one frame ``(1280,)`` int16 at 16 kHz; a :class:`Detection` when a model's score
        reaches its threshold outside the refractory time, else None."""
        return self.trigger.step(self.score(frame))

    def set_thresholds(self, models: list[tuple[str, float]]) -> None:
        """New thresholds for the loaded models (a config reload: no model is loaded again, the next
        frame uses them). ``models``: ``[(name, threshold)]`` as at construction.

        Raises:
            ValueError: a name that is not one of the loaded models (adding one needs a restart).
        """
        loaded = set(self._names.values())
        new = dict(self.trigger.thresholds)
        for name, threshold in models:
            key = name if name in loaded else Path(name).stem
            if key not in loaded:
                raise ValueError(f"wake.models: {name!r} is not loaded (loaded: {', '.join(sorted(loaded))}); "
                                 "a new wake word needs a restart")
            new[key] = float(threshold)
        self.trigger.thresholds = new

    def flush(self) -> None:
        """Push 1.6 s of silence through the feature buffers, then clear scores (see module doc)."""
        silence = np.zeros(FRAME_SAMPLES, dtype=np.int16)
        for _ in range(FLUSH_FRAMES):
            self.model.predict(silence)
        self.model.reset()
        self.trigger.reset()
