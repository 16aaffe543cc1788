"""Your own wake word (README "Your own wake word"): a microWakeWord model trained elsewhere is
installed with ``edge models add NAME.json``, checked first, and then loads and fires by its own
name. The "own" model here is a shipped one copied under a new name (training needs TensorFlow and
data the box does not have): pymicro-wakeword's hey_mycroft, so the shared "hey mycroft" recording
is its wake word."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from drivers.audio import wav_frames
from edge.config import load_settings
from edge.models.own_wake import WakeAddError, add_wake_model
from edge.stages.wake import WakeWord
from edge.stages.wake_engines import micro_models_dir

REPO = Path(__file__).resolve().parents[1]
REAL = REPO.parent / "shared" / "audio" / "real"


def own_model(folder: Path, name: str = "hey_stockroom", **micro) -> Path:
    """A microWakeWord model on "the USB stick": the shipped hey_mycroft under ``name``."""
    folder.mkdir(parents=True, exist_ok=True)
    raw = json.loads((micro_models_dir() / "hey_mycroft.json").read_text())
    raw.update(model=f"{name}.tflite", wake_word="Hey Stockroom")
    raw["micro"].update(micro)
    shutil.copyfile(micro_models_dir() / "hey_mycroft.tflite", folder / f"{name}.tflite")
    (folder / f"{name}.json").write_text(json.dumps(raw))
    return folder / f"{name}.json"


def frames(path: Path) -> list[np.ndarray]:
    silence = [np.zeros(1280, np.int16)] * 12
    return silence + list(wav_frames(path)) + silence


def test_an_added_wake_word_is_installed_by_the_cli_and_fires_by_its_own_name(tmp_path):
    src = own_model(tmp_path / "usb")
    models = tmp_path / "models"
    r = subprocess.run([sys.executable, "-m", "edge.cli", "models", "add", str(src), "--models-dir", str(models)],
                       cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "installed wake word hey_stockroom" in r.stdout and "checks: json, missing, lfs-pointer, html, magic, loads" in r.stdout
    assert json.loads((models / "wake" / "hey_stockroom.json").read_text())["model"] == "hey_stockroom.tflite"
    settings = load_settings(overrides={"models": {"dir": str(models)},
                                        "wake": {"models": [{"name": "hey_stockroom", "threshold": 0.9}]}})
    assert settings.wake.models[0].engine == "micro"  # a name only an added model has
    ww = WakeWord.from_settings(settings)
    found = [d for f in frames(REAL / "hey_mycroft_test.wav") if (d := ww.process(f))]
    assert [d.wake_word for d in found] == ["hey_stockroom"]
    ww.flush()
    assert not any(ww.process(f) for f in frames(REAL / "negative_reference.wav"))


def test_its_own_cutoff_is_the_threshold_when_none_is_configured(tmp_path):
    res = add_wake_model(own_model(tmp_path / "usb", probability_cutoff=0.9), tmp_path / "models")
    ww = WakeWord([("hey_stockroom", "micro", None)], models_dir=tmp_path / "models")
    assert res.cutoff == 0.9 and ww.trigger.thresholds == {"hey_stockroom": 0.9}


@pytest.mark.parametrize("damage, check", [
    (lambda j: j.with_suffix(".tflite").write_text("version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 9\n"),
     "lfs-pointer"),
    (lambda j: j.with_suffix(".tflite").write_text("<!DOCTYPE html><html>sign in</html>"), "html"),
    (lambda j: j.with_suffix(".tflite").write_bytes(b"\x00" * 4096), "magic"),
    (lambda j: j.with_suffix(".tflite").unlink(), "missing"),
    (lambda j: j.write_text(json.dumps({"type": "openwakeword", "model": "x.onnx"})), "json"),
    (lambda j: j.write_text("{not json"), "json"),
])
def test_a_damaged_model_is_refused_naming_the_check_and_nothing_is_installed(tmp_path, damage, check):
    src = own_model(tmp_path / "usb")
    damage(src)
    with pytest.raises(WakeAddError) as e:
        add_wake_model(src, tmp_path / "models")
    assert e.value.check == check, str(e.value)
    assert not (tmp_path / "models" / "wake").exists()


def test_an_unknown_wake_word_name_says_how_to_add_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="edge models add NAME.json"):
        WakeWord([("hey_stockroom", "micro", 0.9)], models_dir=tmp_path / "models")
