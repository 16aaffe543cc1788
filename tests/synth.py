"""Build test sessions from parts: silence, the real wake-word recording, and sentences spoken by
espeak-ng, all at 16 kHz mono int16."""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np

from drivers.audio import SAMPLE_RATE, read_wav, write_wav
from drivers.audio.convert import FrameConverter

WAKE_CLIP = Path(__file__).resolve().parents[2] / "shared" / "audio" / "real" / "hey_mycroft_test.wav"


def to16k(samples: np.ndarray, rate: int) -> np.ndarray:
    conv = FrameConverter(rate, samples.shape[1] if samples.ndim == 2 else 1)
    frames = conv.push(samples) + conv.flush()
    return np.concatenate(frames) if frames else np.zeros(0, np.int16)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * SAMPLE_RATE), dtype=np.int16)


def wake() -> np.ndarray:
    data, rate = read_wav(WAKE_CLIP)
    return to16k(data, rate)


_spoken: dict[str, np.ndarray] = {}


def speech(text: str) -> np.ndarray:
    """``text`` spoken by espeak-ng (the engine behind the product's TTS stage), 16 kHz int16.

    Each phrase comes from a fresh ``espeak-ng`` process and is kept for the session, so it is the
    same audio whatever ran before it. Through pyttsx3 the engine lives for the whole process and a
    phrase's samples drift with every phrase spoken before it (a few ms per call, measured here),
    which made the recognised words depend on test order."""
    if text not in _spoken:
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "s.wav"
            subprocess.run(["espeak-ng", "-v", "gmw/en", "-s", "150", "-w", str(out), "--", text],
                           check=True, capture_output=True, timeout=60)
            data, rate = read_wav(out)
        _spoken[text] = to16k(data, rate)
    return _spoken[text].copy()


def session(path: Path, *parts) -> Path:
    """Write the concatenation of ``parts`` (arrays, or strings to speak, or floats = seconds of
    silence, or the string ``"<wake>"``) as a 16 kHz WAV."""
    chunks = []
    for p in parts:
        if isinstance(p, np.ndarray):
            chunks.append(p.astype(np.int16))
        elif isinstance(p, (int, float)):
            chunks.append(silence(p))
        elif p == "<wake>":
            chunks.append(wake())
        else:
            chunks.append(speech(p))
    return write_wav(path, np.concatenate(chunks), SAMPLE_RATE)
