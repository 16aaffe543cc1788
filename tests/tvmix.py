"""A TV-like mix from the shared recordings: several voices talking over each other and music, at a
chosen level, with real wake words mixed in at known places (for tests/test_c21_false_wakes_from_a_tv.py
and bench/tv_false_wakes.py). 16 kHz mono int16; deterministic for a seed."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from drivers.audio import read_wav
from drivers.audio.convert import FrameConverter

AUDIO = Path(__file__).resolve().parents[2] / "shared" / "audio"
VOICES = ("real/turn_on_the_office_lights_test_clip.wav", "real/negative_reference.wav",
          "real/digits_vosk_test.wav", "real/hey_jane.wav")
WAKES = {"hey_mycroft": "real/hey_mycroft_test.wav", "alexa": "real/alexa_test.wav"}
RATE = 16000


def load(rel: str) -> np.ndarray:
    data, rate = read_wav(AUDIO / rel)
    conv = FrameConverter(rate, data.shape[1])
    return np.concatenate(conv.push(data) + conv.flush()).astype(np.float64)


def rms_db(x: np.ndarray) -> float:
    return 20 * np.log10(np.sqrt(np.mean(np.square(x, dtype=np.float64))) / 32768 + 1e-12)


def at_db(x: np.ndarray, db: float) -> np.ndarray:
    return x * (10 ** ((db - rms_db(x)) / 20))


def music(n: int, rng: np.random.Generator) -> np.ndarray:
    """Chords changing every half second with a beat: something like a TV's background music."""
    t = np.arange(n) / RATE
    out = np.zeros(n)
    for start in range(0, n, RATE // 2):
        root = 110 * 2 ** (rng.integers(0, 12) / 12)
        seg = slice(start, min(n, start + RATE // 2))
        for ratio in (1, 1.26, 1.5, 2):
            out[seg] += np.sin(2 * np.pi * root * ratio * t[seg])
        out[seg] *= np.exp(-3 * (t[seg] - t[start]))  # each chord struck, then fading
    return out


def tv(seconds: float, seed: int = 21, level_db: float = -10.0) -> np.ndarray:
    """``seconds`` of TV-like audio at ``level_db`` dBFS RMS (float64 samples in int16 units)."""
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE)
    voices = [load(v) for v in VOICES]
    mix = np.zeros(n)
    for k in range(3):  # three voice tracks over each other, each a random sequence of the recordings
        track, pos = np.zeros(n), int(rng.integers(0, RATE))
        while pos < n:
            v = voices[int(rng.integers(0, len(voices)))]
            v = at_db(v, -20 - 3 * k + float(rng.uniform(-3, 3)))
            m = min(len(v), n - pos)
            track[pos:pos + m] += v[:m]
            pos += m + int(rng.integers(0, RATE // 4))
        mix += track
    mix += at_db(music(n, rng), -26)
    return at_db(mix, level_db)


def with_wakes(base: np.ndarray, count: int, seed: int = 21, snr_db: float = 0.0,
               names: tuple[str, ...] = tuple(sorted(WAKES))) -> tuple[np.ndarray, list[tuple[str, int]]]:
    """``base`` with ``count`` real wake words mixed in, evenly spaced (a random offset in each slot),
    each at ``snr_db`` over the base's level; returns ``(int16 audio, [(wake word, end sample)])``."""
    rng = np.random.default_rng(seed + 1)
    out = base.copy()
    level = rms_db(base)
    slot = len(base) // count
    where = []
    for i in range(count):
        name = names[i % len(names)]
        w = load(WAKES[name])
        voiced = np.abs(w) > 0.05 * np.abs(w).max()
        w = at_db(w, level + snr_db + rms_db(w) - rms_db(w[voiced]))  # its voiced part at the SNR
        start = i * slot + int(rng.integers(RATE, max(RATE + 1, slot - len(w) - RATE)))
        out[start:start + len(w)] += w
        where.append((name, start + len(w)))
    peak = np.abs(out).max()
    if peak > 32000:  # the microphone's gain stage turned down so nothing clips (clipping is another fault)
        out *= 32000 / peak
    return np.clip(out, -32768, 32767).astype(np.int16), where
