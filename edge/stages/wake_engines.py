"""The two wake-word engines behind :class:`edge.stages.wake.WakeWord`, both fed the same 16 kHz
int16 80 ms frames (1280 samples) and both giving ``{model name: score 0..1}`` per frame:

- ``micro``: microWakeWord streaming TFLite models through pymicro-wakeword 2.5.0 (its own bundled
  TFLite C library; Apache-2.0 code and stock weights). One feature front end (pymicro-features,
  40 log-mel features per 10 ms step over a 30 ms window) feeds every micro model; an 80 ms frame is
  8 steps, and a model runs once per ``stride`` steps (3 for the stock models: 30 ms), so a frame's
  score is the highest of its 2–3 sliding-window means (the model's own ``sliding_window_size``
  probabilities averaged, as pymicro-wakeword does).
- ``openwakeword``: openWakeWord 0.5.1 ONNX models (melspectrogram + embedding front end shared by
  all of them; the stock weights are CC BY-NC-SA 4.0).

An engine's package that is not installed is reported by :func:`engine_missing` (the settings check
it) and by the engine's constructor: both name the pip package.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from drivers.audio import FRAME_SAMPLES
from edge.models.manifest import ModelNotFoundError

#: engine -> (import name, pip requirement): what the settings check and the error names
ENGINE_PACKAGES = {"micro": ("pymicro_wakeword", "pymicro-wakeword==2.5.0"),
                   "openwakeword": ("openwakeword", "openwakeword==0.5.1")}
ENGINES = tuple(ENGINE_PACKAGES)
#: microWakeWord models inside pymicro-wakeword 2.5.0 (pymicro_wakeword/models/*.json)
MICRO_STOCK = ("okay_nabu", "hey_mycroft", "alexa", "hey_jarvis")
#: openWakeWord 0.5.1's pre-trained wake-word models (resources/models/*_v0.1.onnx)
OWW_STOCK = ("hey_mycroft", "alexa", "hey_jarvis", "hey_rhasspy")
#: where ``edge models add`` puts a microWakeWord model (its JSON + .tflite), under ``models.dir``
WAKE_SUBDIR = "wake"

# openWakeWord's classifiers look at 16 embedding frames (~1.28 s; openWakeWord README, "model
# architecture"); 20 frames of silence = 1.6 s flush the melspectrogram and embedding buffers.
FLUSH_FRAMES = 20
#: openWakeWord 0.5.1 models in the same folder that are intent classifiers, not wake words
NOT_WAKE_WORDS = frozenset({"timer", "weather"})


def engine_missing(engine: str) -> str | None:
    """None when ``engine``'s package imports, else the message that names it and the fix."""
    module, requirement = ENGINE_PACKAGES[engine]
    try:
        importlib.import_module(module)
    except ImportError as e:
        return (f"the wake-word engine '{engine}' needs the package {requirement.split('==')[0]} ({e}); "
                f"install it with scripts/setup.sh (pip install '{requirement}'), or configure another engine")
    return None


def default_engine(name: str) -> str:
    """The engine a model name means when the settings do not say: a ``.tflite``/``.json`` path or a
    name only microWakeWord ships → ``micro``; otherwise ``openwakeword`` (what a name meant before
    there were two engines)."""
    if name.endswith((".json", ".tflite")) or (name in MICRO_STOCK and name not in OWW_STOCK):
        return "micro"
    if name.endswith(".onnx") or name in OWW_STOCK:
        return "openwakeword"
    return "micro"  # an own model installed with `edge models add` (models.dir/wake/NAME.json)


def openwakeword_models_dir() -> Path:
    """Directory of the ONNX models shipped inside the openwakeword 0.5.1 package.

    Raises:
        ModelNotFoundError: openwakeword is not installed (run the set-up script).
    """
    spec = importlib.util.find_spec("openwakeword")
    if spec is None or not spec.origin:
        raise ModelNotFoundError("the wake word models: openwakeword is not installed; run scripts/setup.sh")
    return Path(spec.origin).parent / "resources" / "models"


def micro_models_dir() -> Path:
    """Directory of the microWakeWord models inside pymicro-wakeword (``<name>.json`` + ``.tflite``).

    Raises:
        ModelNotFoundError: pymicro-wakeword is not installed.
    """
    spec = importlib.util.find_spec("pymicro_wakeword")
    if spec is None or not spec.origin:
        raise ModelNotFoundError(engine_missing("micro") or "pymicro-wakeword is not installed")
    return Path(spec.origin).parent / "models"


@dataclass(frozen=True)
class MicroModelFile:
    """A microWakeWord model: its JSON (the format ESPHome and microWakeWord's training write) and
    the ``.tflite`` it names. ``cutoff``: the JSON's ``micro.probability_cutoff`` (0..1)."""

    name: str
    json_path: Path
    tflite: Path
    wake_word: str
    cutoff: float
    window: int


def read_micro_json(path: Path, name: str | None = None) -> MicroModelFile:
    """Read a microWakeWord model JSON (``{"type": "micro", "wake_word", "model", "micro":
    {"probability_cutoff", "sliding_window_size", ...}}``).

    Raises:
        ModelNotFoundError: the JSON or its ``.tflite`` is not there.
        ValueError: the JSON is not a microWakeWord model description; the message names the field.
    """
    if not path.is_file():
        raise ModelNotFoundError(f"{path}: no such file")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a microWakeWord model JSON ({e})") from e
    if not isinstance(raw, dict) or raw.get("type") != "micro":
        raise ValueError(f"{path}: 'type' must be \"micro\" (a microWakeWord model JSON); "
                         f"found {raw.get('type') if isinstance(raw, dict) else type(raw).__name__!r}")
    micro = raw.get("micro")
    for key, ok in (("wake_word", isinstance(raw.get("wake_word"), str)),
                    ("model", isinstance(raw.get("model"), str)),
                    ("micro", isinstance(micro, dict))):
        if not ok:
            raise ValueError(f"{path}: field '{key}' is missing or of the wrong type")
    cutoff, window = micro.get("probability_cutoff"), micro.get("sliding_window_size")
    if not isinstance(cutoff, (int, float)) or not 0 < cutoff < 1:
        raise ValueError(f"{path}: micro.probability_cutoff must be a number in (0, 1), found {cutoff!r}")
    if not isinstance(window, int) or not 1 <= window <= 100:
        raise ValueError(f"{path}: micro.sliding_window_size must be an integer 1..100, found {window!r}")
    tflite = path.parent / raw["model"]
    if not tflite.is_file():
        raise ModelNotFoundError(f"{path}: its model file {tflite} is not there; put the .tflite beside the JSON")
    return MicroModelFile(name or path.stem, path, tflite, raw["wake_word"], float(cutoff), window)


def find_micro(name: str, models_dir: Path | None = None) -> MicroModelFile:
    """The microWakeWord model ``name``: a path to its ``.json`` (or to a ``.tflite`` with a JSON of the
    same stem beside it), a model installed with ``edge models add`` (``<models_dir>/wake/<name>.json``),
    or a stock model of pymicro-wakeword.

    Raises:
        ModelNotFoundError: none of these; the message lists the stock and installed names.
        ValueError: the JSON is malformed (names the field).
    """
    if name.endswith((".json", ".tflite")):
        p = Path(name).expanduser()
        return read_micro_json(p.with_suffix(".json"), p.stem)
    own = Path(models_dir) / WAKE_SUBDIR / f"{name}.json" if models_dir is not None else None
    if own is not None and own.is_file():
        return read_micro_json(own, name)
    stock = micro_models_dir()
    if (stock / f"{name}.json").is_file():
        return read_micro_json(stock / f"{name}.json", name)
    installed = sorted(p.stem for p in (Path(models_dir) / WAKE_SUBDIR).glob("*.json")) if models_dir else []
    raise ModelNotFoundError(f"wake.models: microWakeWord model '{name}' not found; stock models: engine micro: "
                             f"{', '.join(sorted(MICRO_STOCK))}; engine openwakeword: {', '.join(sorted(OWW_STOCK))}"
                             + (f"; installed in {Path(models_dir) / WAKE_SUBDIR}: {', '.join(installed)}"
                                if installed else "") + "; add your own with `edge models add NAME.json`")


class MicroEngine:
    """microWakeWord models sharing one feature front end.

    Args:
        models: ``[(name, MicroModelFile)]``.
    Raises:
        ModelNotFoundError: pymicro-wakeword is not installed.
    """

    def __init__(self, models: list[tuple[str, MicroModelFile]]):
        missing = engine_missing("micro")
        if missing:
            raise ModelNotFoundError(missing)
        from pymicro_wakeword import MicroWakeWord, MicroWakeWordFeatures

        lib = next((micro_models_dir().parent / "lib").glob("*tensorflowlite_c.*"))
        self._features = MicroWakeWordFeatures()
        self._models = {name: MicroWakeWord(name, wake_word=f.wake_word, tflite_model=f.tflite,
                                            probability_cutoff=f.cutoff, sliding_window_size=f.window,
                                            trained_languages=[], libtensorflowlite_c_path=lib)
                        for name, f in models}

    def score(self, frame: np.ndarray) -> dict[str, float]:
        """One ``(1280,)`` int16 frame → ``{name: highest sliding-window mean in the frame}``."""
        out = dict.fromkeys(self._models, 0.0)
        # pymicro-features takes the frame's bytes and steps 160 samples (10 ms) at a time
        for feats in self._features.process_streaming(np.ascontiguousarray(frame, dtype=np.int16).tobytes()):
            for name, m in self._models.items():
                p = m.process_streaming_prob(feats)  # 0.0 until a stride and a window are full
                if p is not None and p > out[name]:
                    out[name] = float(p)
        return out

    def flush(self) -> None:
        """Forget all audio: the front end's buffers, each model's feature stride, its window of
        probabilities and the streaming model's internal state (pymicro-wakeword reloads the model:
        a streaming TFLite model keeps its ring buffers inside the interpreter)."""
        self._features.reset()
        for m in self._models.values():
            m.reset()


class OwwEngine:
    """openWakeWord 0.5.1 models sharing the melspectrogram and embedding models.

    This sidesteps a known openWakeWord behaviour: ``Model.reset()`` clears the scores but not the
    melspectrogram/embedding buffers, so frames 5–8 after a reset still scored ~1.0 on the previous
    clip's wake word (measured here, 0.5.1). :meth:`flush` therefore pushes silence through the
    feature models before resetting.

    Args:
        names: stock names (:data:`OWW_STOCK`) or ``.onnx`` paths.
    Raises:
        ModelNotFoundError: openwakeword is not installed, or a model file does not exist (names it).
    """

    def __init__(self, names: list[str]):
        missing = engine_missing("openwakeword")
        if missing:
            raise ModelNotFoundError(missing)
        from openwakeword.model import Model

        d = openwakeword_models_dir()
        paths, self._names = [], {}
        for name in names:
            p = Path(name) if name.endswith(".onnx") else d / f"{name}_v0.1.onnx"
            if not p.exists():
                known = ", ".join(sorted(n for q in d.glob("*_v0.1.onnx")
                                         if (n := q.name.removesuffix("_v0.1.onnx")) not in NOT_WAKE_WORDS))
                raise ModelNotFoundError(f"wake.models: openWakeWord model '{name}': no file {p}; stock models: {known}")
            paths.append(str(p))
            self._names[p.stem] = p.stem if name.endswith(".onnx") else name
        self.model = Model(
            wakeword_models=paths, inference_framework="onnx",
            melspec_model_path=str(d / "melspectrogram.onnx"), embedding_model_path=str(d / "embedding_model.onnx"))

    def score(self, frame: np.ndarray) -> dict[str, float]:
        """One ``(1280,)`` int16 frame → ``{name: score}``."""
        return {self._names[k]: float(v) for k, v in self.model.predict(frame).items()}

    def flush(self) -> None:
        """Push 1.6 s of silence through the feature buffers, then clear the scores."""
        silence = np.zeros(FRAME_SAMPLES, dtype=np.int16)
        for _ in range(FLUSH_FRAMES):
            self.model.predict(silence)
        self.model.reset()
