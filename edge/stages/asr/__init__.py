"""Speech recognition behind one interface (:class:`edge.stages.asr.base.Recognizer`).

Engines: ``whisper`` (faster-whisper on the endpointed utterance) and ``vosk`` (streaming, with
partial results). :func:`create` builds the one named in the settings.
"""
from __future__ import annotations

from edge.stages.asr.base import Recognition, Recognizer, vocabulary
from edge.stages.asr.vosk import VoskRecognizer  # vosk itself is imported when one is built
from edge.stages.asr.whisper import WhisperRecognizer  # so is faster_whisper


def create(settings, language: str = "en") -> Recognizer:
    """The engine named by ``settings.engine`` (an :class:`edge.config.AsrSettings`).

    Raises:
        FileNotFoundError: the model is not installed or the directory does not exist.
    """
    if settings.engine == "vosk":
        return VoskRecognizer(settings.vosk.model, sample_rate=settings.vosk.sample_rate,
                              command_mode=settings.vosk.command_mode)
    w = settings.whisper
    from edge.config import WHISPER_BY_LANGUAGE
    return WhisperRecognizer(w.model or WHISPER_BY_LANGUAGE[language], language=language, compute_type=w.compute_type,
                             beam_size=w.beam_size, threads=w.threads, window_s=w.window_s)


__all__ = ["Recognition", "Recognizer", "create", "vocabulary"]
