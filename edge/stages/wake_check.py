"""The wake word's second stage: Whisper checks that the audio of a first-stage detection holds
the wake phrase.

A first-stage model (:mod:`edge.stages.wake_engines`) fires on what only sounds like its word
("okay now" for okay_nabu: 10 of 12 clips at 0.7), and a lower threshold would hear more of the
wake words said in noise. The check decodes the last :attr:`WhisperCheck.window_ms` of audio
with Whisper (the recognizer's own model, tiny.en by default), the wake phrase given as the
previous text (Whisper's prompt: it writes "OK, Nabu." for the word and still "OK, now." for
"okay now"), and compares the transcript's first sentence with the phrase, letters only.

Whisper tiny.en does not hear the phrase well in noise (at 10 dB it wrote the phrase for fewer
than half of the wake words the first stage caught; bench/results/wake_recall_where.json), so
its "no" only counts where the window is quiet: :func:`window_snr_db` (the loudest 20 ms pieces
of the window over the quietest) at least :attr:`WhisperCheck.quiet_db`. In a noisier window a
first-stage score of at least ``alone_above`` is a detection by itself, as without the check;
Whisper's "yes" counts everywhere, so the first stage of a checked word runs at a lower
:attr:`WhisperCheck.threshold` (:meth:`edge.stages.wake.WakeWord.confirm_with`) and Whisper adds
the words it recognises below ``alone_above``.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass

import numpy as np

SAMPLE_RATE = 16_000  # Hz, Whisper's input rate
#: log-mel frames per s of audio in Whisper's front end (hop 160 samples at 16 kHz)
MEL_FRAMES_PER_S = 100
#: s of log-mel frames the encoder sees (the window padded to it). Whisper's own is 30 s; the
#: encoder's cost follows this, not the audio (tiny.en, one thread here: ~190 ms at 3 s, ~250 ms
#: at 5 s, ~340 ms at 10 s per check); at 3 s the phrase was missed more often than at 5 s
ENCODER_WINDOW_S = 5.0
#: tokens the transcript may have beyond the phrase's longest spelling (only its first sentence counts)
EXTRA_TOKENS = 6
#: 20 ms pieces for the window's SNR estimate; the loudest and quietest 10 % of them are compared
PIECE = 320


@dataclass(frozen=True)
class Verdict:
    """The second stage's answer for one detection: ``accepted``; ``heard``: the first sentence
    of Whisper's transcript of the window; ``match``: it is the phrase; ``snr_db``:
    :func:`window_snr_db` of the window; ``cpu_ms``: process CPU time of the check (all threads)."""

    accepted: bool
    heard: str
    match: bool
    snr_db: float
    cpu_ms: float


def spellings(phrase: str) -> list[str]:
    """How Whisper may write a wake phrase, each with Whisper's leading space: ``"okay nabu"`` →
    ``[" OK Nabu", " OK, Nabu.", " Okay Nabu", " Okay, Nabu."]``.

    Raises:
        ValueError: no word in ``phrase``.
    """
    words = [w for w in re.split(r"[\s_,.!?]+", phrase.strip()) if w]
    if not words:
        raise ValueError("a wake phrase needs at least one word")
    titled = [w[:1].upper() + w[1:] for w in words]
    firsts = {"Okay", "OK"} if titled[0].lower() in ("okay", "ok") else {titled[0]}
    out = []
    for first in sorted(firsts):
        rest = titled[1:]
        out.append(" " + " ".join([first, *rest]))
        out.append(" " + first + (", " + " ".join(rest) + "." if rest else "."))
    return out


def plain(text: str) -> str:
    """Letters and digits only, lower case, "okay" as "ok": what is compared."""
    return re.sub(r"[^0-9a-z]+", "", text.lower().replace("okay", "ok"))


def window_snr_db(audio: np.ndarray) -> float:
    """A rough SNR of ``audio`` (int16), dB: the RMS of its loudest 10 % of 20 ms pieces over that
    of its quietest 10 % (at most 60; 60 for digital silence)."""
    n = len(audio) // PIECE
    if n < 10:
        return 60.0
    rms = np.sqrt(np.mean(np.square(audio[:n * PIECE].astype(np.float64).reshape(n, PIECE)), axis=1))
    rms.sort()
    k = max(1, n // 10)
    low, high = float(rms[:k].mean()), float(rms[-k:].mean())
    return 60.0 if low < 1.0 else float(min(60.0, 20 * np.log10(max(high, 1.0) / low)))


class WhisperCheck:
    """The second stage on a faster-whisper model.

    Args:
        model: a ``faster_whisper.WhisperModel`` (the recognizer's, or one of its own).
        phrases: ``{wake word name: phrase}``, e.g. ``{"okay_nabu": "okay nabu"}``.
        window_ms: ms of audio up to the detection that are checked.
        quiet_db: a window at least this quiet (:func:`window_snr_db`) is decided by Whisper alone.
        alone_above: in a noisier window, a first-stage score at least this is a detection whatever
            Whisper heard; None: Whisper decides everywhere.
        threshold: the first-stage threshold of the words it checks when it is lower than the
            model's (:meth:`edge.stages.wake.WakeWord.confirm_with`); None: the model's.
    Raises:
        ValueError: an empty phrase.
    """

    def __init__(self, model, phrases: dict[str, str], window_ms: int = 2000, quiet_db: float = 40.0,
                 alone_above: float | None = 0.7, threshold: float | None = None):
        from faster_whisper.tokenizer import Tokenizer

        self.model = model
        self.window_ms = int(window_ms)
        self.quiet_db = float(quiet_db)
        self.alone_above = alone_above
        self.threshold = threshold
        self.tokenizer = Tokenizer(model.hf_tokenizer, model.model.is_multilingual, task="transcribe",
                                   language="en")
        self.phrases = dict(phrases)
        self._spellings = {name: [self.tokenizer.encode(s) for s in spellings(p)] for name, p in self.phrases.items()}
        self._plain = {name: plain(p) for name, p in self.phrases.items()}
        self.checks = 0
        self.cpu_ms = 0.0

    @property
    def window_samples(self) -> int:
        """Samples of 16 kHz audio the check looks at."""
        return SAMPLE_RATE * self.window_ms // 1000

    def _encode(self, audio: np.ndarray):
        import ctranslate2

        feats = self.model.feature_extractor(audio.astype(np.float32) / 32768.0)
        n = int(ENCODER_WINDOW_S * MEL_FRAMES_PER_S)
        feats = feats[:, -n:] if feats.shape[1] >= n else np.pad(feats, ((0, 0), (0, n - feats.shape[1])))
        return self.model.model.encode(ctranslate2.StorageView.from_array(np.ascontiguousarray(feats[None])),
                                       to_cpu=False)

    def hear(self, name: str, audio: np.ndarray) -> Verdict:
        """Whisper's transcript of the window and whether it is the phrase of ``name``; ``accepted``
        is ``match`` (:meth:`decide` adds the first stage's score).

        Raises:
            KeyError: ``name`` has no phrase.
        """
        c0 = time.process_time()
        audio = np.asarray(audio, dtype=np.int16)[-self.window_samples:]
        start = [self.tokenizer.sot_prev, *self._spellings[name][1], *self.tokenizer.sot_sequence,
                 self.tokenizer.no_timestamps]
        longest = max(len(t) for t in self._spellings[name])
        gen = self.model.model.generate(self._encode(audio), [start], beam_size=1,
                                        max_length=len(start) + longest + EXTRA_TOKENS, suppress_blank=True)[0]
        heard = first_sentence(self.tokenizer.decode([t for t in gen.sequences_ids[0] if t < self.tokenizer.eot]))
        match = plain(heard) == self._plain[name]
        cpu = 1000 * (time.process_time() - c0)
        self.checks += 1
        self.cpu_ms += cpu
        return Verdict(match, heard, match, round(window_snr_db(audio), 1), round(cpu, 1))

    def decide(self, verdict: Verdict, score: float) -> Verdict:
        """``verdict`` with ``accepted`` for a first-stage ``score``: Whisper heard the phrase, or
        the window is noisier than :attr:`quiet_db` and ``score`` reaches :attr:`alone_above`."""
        alone = self.alone_above is not None and score >= self.alone_above and verdict.snr_db < self.quiet_db
        return Verdict(verdict.match or alone, verdict.heard, verdict.match, verdict.snr_db, verdict.cpu_ms)

    def check(self, name: str, audio: np.ndarray, score: float = 1.0) -> Verdict:
        """Is wake word ``name`` in ``audio`` (int16 16 kHz, the window ending at the detection),
        whose first-stage score was ``score``?

        Raises:
            KeyError: ``name`` has no phrase.
        """
        return self.decide(self.hear(name, audio), score)


def first_sentence(text: str) -> str:
    """``text`` up to and with its first full stop, question or exclamation mark (a prompted decode
    of a short window often says the phrase again and again)."""
    m = re.search(r"[.?!]", text)
    return (text[:m.end()] if m else text).strip()


#: Whisper models loaded for the check alone, by directory (one per process, shared by every
#: wake-word detector, e.g. the Wyoming service's pool)
_OWN_MODELS: dict[str, object] = {}


def build_check(settings, phrases: dict[str, str], recognizer=None) -> WhisperCheck | None:
    """The second stage of ``settings.wake.check`` for the configured wake words whose ``phrases``
    (``{name: phrase}``, :attr:`edge.stages.wake.WakeWord.phrases`) it names; None when it names
    none of them. The Whisper model is ``recognizer``'s (an in-process
    :class:`edge.stages.asr.whisper.WhisperRecognizer` of the same model), else one loaded for the
    check (int8, one thread), once per process.

    Raises:
        FileNotFoundError: the Whisper model is not installed (names it).
    """
    c = settings.wake.check
    checked = {n: p for n, p in phrases.items() if n in c.models}
    if not checked:
        return None
    from edge.stages.asr.base import model_dir

    name = c.model or settings.asr.whisper.model
    path = str(model_dir(name))
    model = getattr(recognizer, "model", None)
    if model is None or getattr(recognizer, "name", None) != "whisper" or c.model not in (None, settings.asr.whisper.model):
        if path not in _OWN_MODELS:
            from faster_whisper import WhisperModel

            _OWN_MODELS[path] = WhisperModel(path, device="cpu", compute_type="int8", cpu_threads=1, num_workers=1)
        model = _OWN_MODELS[path]
    return WhisperCheck(model, checked, c.window_ms, c.quiet_db, c.alone_above, c.threshold)
