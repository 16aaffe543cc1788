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


def workshop(seconds: float, seed: int = 7, level_db: float = -20.0) -> np.ndarray:
    """``seconds`` of workshop-like audio at ``level_db`` dBFS RMS (float64 in int16 units): an angle
    grinder that runs for 3–20 s at a time (a motor tone near 140 Hz with harmonics, a whine near
    4 kHz and band-limited hiss), hammer blows (decaying broadband clicks), a compressor's hum
    (50 Hz and harmonics) and people talking (one track of the shared recordings, 6 dB under the
    machines), over a floor of brown-ish noise."""
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    out = np.cumsum(rng.standard_normal(n)) * 0.02
    out -= np.convolve(out, np.ones(801) / 801, mode="same")  # brown noise without its drift
    out = at_db(out, -45)
    hum = sum(np.sin(2 * np.pi * 50 * k * t) / k for k in (1, 2, 3, 5))
    out += at_db(hum, -38)
    pos = 0
    while pos < n:  # the grinder: on for 3-20 s, off for 2-25 s
        on, off = int(rng.uniform(3, 20) * RATE), int(rng.uniform(2, 25) * RATE)
        seg = slice(pos, min(n, pos + on))
        m = seg.stop - seg.start
        tt = np.arange(m) / RATE
        f0 = 140 * (1 + 0.02 * np.sin(2 * np.pi * 0.3 * tt))
        motor = sum(np.sin(2 * np.pi * f0 * k * tt) / k for k in range(1, 6))
        hiss = np.convolve(rng.standard_normal(m), np.hanning(9), mode="same")
        whine = np.sin(2 * np.pi * (4000 + 200 * np.sin(2 * np.pi * 0.5 * tt)) * tt)
        g = at_db(motor, -24) + at_db(hiss, -22) + at_db(whine, -30)
        g *= np.minimum(1, np.minimum(tt, tt[::-1]) / 0.3)  # spin up and down
        out[seg] += g
        pos += on + off
    for start in rng.integers(0, n - RATE, size=int(seconds / 4)):  # a hammer blow every 4 s on average
        m = int(0.15 * RATE)
        blow = rng.standard_normal(m) * np.exp(-np.arange(m) / (0.02 * RATE))
        out[start:start + m] += at_db(blow, -14)
    voices = [load(v) for v in VOICES]
    talk, pos = np.zeros(n), int(rng.integers(0, RATE))
    while pos < n:
        v = at_db(voices[int(rng.integers(0, len(voices)))], -26 + float(rng.uniform(-3, 3)))
        m = min(len(v), n - pos)
        talk[pos:pos + m] += v[:m]
        pos += m + int(rng.uniform(1, 8) * RATE)
    out += talk
    return at_db(out, level_db)
