"""Your own wake word: a microWakeWord model trained elsewhere (microWakeWord's training needs
TensorFlow and recorded or generated speech, neither of which the box has), installed with
``edge models add NAME.json`` (the model JSON microWakeWord's training and ESPHome use, with its
``.tflite`` beside it) and configured as ``wake: {models: [{name: NAME, engine: micro}]}``.

:func:`add_wake_model` checks, before the model is installed, in this order (:data:`WAKE_CHECKS`):

``json``        the JSON is a microWakeWord model description (``type: micro``, ``wake_word``,
                ``model``, ``micro.probability_cutoff`` in (0, 1), ``micro.sliding_window_size``);
``missing``     the ``.tflite`` it names is beside it;
``lfs-pointer`` the ``.tflite`` is not a Git LFS pointer; ``html``: not an HTML page;
``magic``       a TFLite flatbuffer (bytes 4-8 ``TFL3``, TFLite's schema.fbs file identifier);
``loads``       pymicro-wakeword loads it and scores 2 s of silence (a model that fires on
                silence is refused: its cutoff or its training is wrong).

Both files are copied to ``<models.dir>/wake/NAME.json`` and ``NAME.tflite`` (the JSON's ``model``
rewritten to that name) through temporary names and renamed into place.
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from drivers.audio import FRAME_SAMPLES
from edge.models.manifest import HEAD_BYTES, LFS_PREFIX, ModelError, is_html, lfs_info, sha256_file
from edge.stages.wake_engines import WAKE_SUBDIR, MicroEngine, read_micro_json

WAKE_CHECKS = ("json", "missing", "lfs-pointer", "html", "magic", "loads")
_NAME_OK = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


class WakeAddError(ModelError):
    """An own wake-word model failed a check; ``check`` is one of :data:`WAKE_CHECKS`."""

    def __init__(self, check: str, message: str):
        self.check = check
        super().__init__(f"{check}: {message}")


@dataclass(frozen=True)
class InstalledWake:
    """``name`` (what ``wake.models`` names), the installed JSON and ``.tflite``, the ``.tflite``'s
    SHA-256, the phrase, the model's own cutoff (0..1) and the checks passed."""

    name: str
    json_path: Path
    tflite: Path
    sha256: str
    wake_word: str
    cutoff: float
    checks: tuple[str, ...]


def add_wake_model(file: str | os.PathLike[str], models_dir: str | os.PathLike[str],
                   name: str | None = None) -> InstalledWake:
    """Check the microWakeWord model ``file`` (its ``.json``, or its ``.tflite`` with the JSON of the
    same stem beside it) and install it under ``<models_dir>/wake/`` as ``name`` (default: the JSON's
    stem; lower-case letters, digits, ``_`` and ``-``).

    Raises:
        WakeAddError: a check failed (``.check`` names it; the message says what was found and the fix).
        ModelError: the models folder cannot be written.
    """
    src = Path(file).expanduser()
    src = src.with_suffix(".json") if src.suffix == ".tflite" else src
    name = name or src.stem
    if not set(name) <= _NAME_OK or not name:
        raise WakeAddError("json", f"name {name!r}: use lower-case letters, digits, '_' and '-' (pass --id NAME)")
    try:
        desc = read_micro_json(src, name)
    except FileNotFoundError as e:
        raise WakeAddError("missing", f"{e}; a microWakeWord model is a .json and the .tflite it names") from e
    except ValueError as e:
        raise WakeAddError("json", str(e)) from e
    done = ["json", "missing"]
    head = desc.tflite.read_bytes()[:HEAD_BYTES]
    if head.startswith(LFS_PREFIX):
        raise WakeAddError("lfs-pointer", f"{desc.tflite} is {lfs_info(head)}, not the model; fetch the real file")
    done.append("lfs-pointer")
    if is_html(head):
        raise WakeAddError("html", f"{desc.tflite} is an HTML page, not a .tflite model; the download failed")
    done.append("html")
    if head[4:8] != b"TFL3":
        raise WakeAddError("magic", f"{desc.tflite}: expected a TFLite flatbuffer (bytes 4-8 b'TFL3'), found "
                                    f"{head[:8]!r}; export the trained model as a quantized streaming .tflite")
    done.append("magic")
    try:
        engine = MicroEngine([(name, desc)])
        silence = np.zeros(FRAME_SAMPLES, dtype=np.int16)
        top = max(engine.score(silence)[name] for _ in range(25))
    except (OSError, ValueError, RuntimeError) as e:
        raise WakeAddError("loads", f"{desc.tflite}: pymicro-wakeword cannot run it ({e})") from e
    if top >= desc.cutoff:
        raise WakeAddError("loads", f"{desc.tflite} scores {top:.2f} on silence, at or over its cutoff "
                                    f"{desc.cutoff}: it would wake on nothing; check its training and cutoff")
    done.append("loads")
    dst = Path(models_dir) / WAKE_SUBDIR
    try:
        dst.mkdir(parents=True, exist_ok=True)
        raw = json.loads(desc.json_path.read_text(encoding="utf-8"))
        raw["model"] = f"{name}.tflite"
        tmp_t, tmp_j = dst / f".{name}.tflite.part-{os.getpid()}", dst / f".{name}.json.part-{os.getpid()}"
        shutil.copyfile(desc.tflite, tmp_t)
        tmp_j.write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp_t, dst / f"{name}.tflite")
        os.replace(tmp_j, dst / f"{name}.json")
    except OSError as e:
        raise ModelError(f"{dst}: cannot install the wake-word model there ({e.strerror or e})") from e
    return InstalledWake(name, dst / f"{name}.json", dst / f"{name}.tflite", sha256_file(dst / f"{name}.tflite"),
                         desc.wake_word, desc.cutoff, tuple(done))
