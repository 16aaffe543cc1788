"""Text to speech: pyttsx3 over espeak-ng (Debian package ``espeak-ng``), into a WAV file.

espeak-ng writes 22 050 Hz mono 16-bit WAV. Voices are chosen by language (``en`` → espeak's
``gmw/en``, ``zh`` → ``sit/cmn``) unless ``voice`` is set.
"""
from __future__ import annotations

import contextlib
import io
import threading
import time
from pathlib import Path

VOICES = {"en": "gmw/en", "zh": "sit/cmn"}
WAV_HEADER_BYTES = 44  # a canonical PCM WAV header; a file this size holds no samples
RETRIES = 2


class TtsError(RuntimeError):
    """Synthesis failed; the message says how to fix the speech engine."""


class Pyttsx3Tts:
    """``synthesize(text, path) -> path``: one WAV per reply.

    Args:
        language: ``en`` or ``zh`` (selects the voice).
        voice: an espeak voice id overriding the language default.
        rate_wpm: speaking rate in words per minute.
    Raises:
        TtsError: espeak-ng is missing (``apt-get install espeak-ng``).
    """

    def __init__(self, language: str = "en", voice: str | None = None, rate_wpm: int = 170):
        import pyttsx3

        try:
            self.engine = pyttsx3.init("espeak")
        except Exception as e:  # pyttsx3 raises OSError/RuntimeError when libespeak-ng is missing
            raise TtsError(f"cannot start espeak-ng through pyttsx3 ({e}); install it: apt-get install espeak-ng") from e
        wanted = voice or VOICES.get(language, VOICES["en"])
        ids = {v.id for v in self.engine.getProperty("voices")}
        if wanted in ids:
            self.engine.setProperty("voice", wanted)
        self.engine.setProperty("rate", rate_wpm)
        self._lock = threading.Lock()
        self.retries = 0  # empty-WAV retries so far (see synthesize)

    def synthesize(self, text: str, path: str | Path) -> Path:
        """Speak ``text`` into the WAV file ``path`` (22 050 Hz mono int16); returns the path.

        Raises:
            TtsError: no audio was written.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in range(1, RETRIES + 2):
            path.unlink(missing_ok=True)
            with self._lock, contextlib.redirect_stdout(io.StringIO()):  # pyttsx3 prints "Audio saved to"
                self.engine.save_to_file(text, str(path))
                self.engine.runAndWait()
            if path.exists() and path.stat().st_size > WAV_HEADER_BYTES:
                return path
            # pyttsx3 2.99's espeak driver writes the file when espeak reports the end of the
            # message; now and then that arrives with no samples buffered (an empty WAV). Retry.
            self.retries += 1
        raise TtsError(f"espeak-ng wrote no audio for {text!r} into {path} after {attempt} attempts")


def create(settings, language: str = "en") -> Pyttsx3Tts:
    """The TTS engine for :class:`edge.config.TtsSettings`."""
    return Pyttsx3Tts(language=language, voice=settings.voice, rate_wpm=settings.rate_wpm)
