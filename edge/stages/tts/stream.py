"""Speak an answer while it is still being generated: cut complete sentences out of the token
stream and synthesize + play each one on a worker thread (issue 4, item 7).

Sentences are cut by :class:`edge.stages.sentences.SentenceSplitter` (rules there).

:class:`StreamingSpeaker` feeds tokens into the splitter on the caller's thread (which is also
the thread consuming the LLM's stream) and hands each sentence to a worker thread that writes
``<prefix>-<turn>-<NN>.wav`` with the TTS and calls ``play`` on it. Every step is recorded as a
:class:`SpeechEvent` with a sequence number (the order things happened) and a
``time.perf_counter()`` stamp (for benchmarks: ``bench/time_to_first_audio.py``).
"""
from __future__ import annotations

import itertools
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import soundfile as sf

from edge.stages.sentences import SentenceSplitter, answer_sentences


@dataclass(frozen=True)
class SpeechEvent:
    """One step of streaming speech. ``seq``: order of events (0, 1, …) across both threads;
    ``kind``: ``token`` | ``sentence`` (cut, queued) | ``wav`` (written) | ``played`` |
    ``generation_done`` | ``error``; ``index``: the sentence number; ``t``: perf_counter() s."""

    seq: int
    kind: str
    index: int | None = None
    text: str = ""
    path: Path | None = None
    t: float = 0.0


@dataclass
class SpeechResult:
    """What :meth:`StreamingSpeaker.speak` did: the full ``text``, the ``sentences``, their WAV
    ``wavs`` (None where synthesis failed), every event, and the errors."""

    text: str
    sentences: list[str]
    wavs: list[Path | None]
    events: list[SpeechEvent]
    errors: list[str] = field(default_factory=list)

    def first(self, kind: str, index: int | None = None) -> SpeechEvent | None:
        """The first event of ``kind`` (for sentence ``index`` when given)."""
        return next((e for e in self.events if e.kind == kind and (index is None or e.index == index)), None)


class StreamingSpeaker:
    """Synthesize and play sentences while the answer is generated.

    Args:
        tts: anything with ``synthesize(text, path) -> path`` (:class:`edge.stages.tts.engine.Pyttsx3Tts`).
        output_dir: where the sentence WAVs go.
        play: called with each WAV path on the worker thread, in order (blocking playback), or None.
        on_event: called with every :class:`SpeechEvent` as it happens (any thread).
    """

    def __init__(self, tts, output_dir: str | Path, play: Callable[[Path], None] | None = None,
                 on_event: Callable[[SpeechEvent], None] | None = None, prefix: str = "reply"):
        self.tts = tts
        self.output_dir = Path(output_dir)
        self.play = play
        self.on_event = on_event
        self.prefix = prefix
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self._events: list[SpeechEvent] = []
        self._stop = threading.Event()

    def _record(self, kind: str, index: int | None = None, text: str = "", path: Path | None = None) -> None:
        with self._lock:
            e = SpeechEvent(next(self._seq), kind, index, text, path, time.perf_counter())
            self._events.append(e)
        if self.on_event is not None:
            self.on_event(e)

    def stop(self) -> None:
        """Stop early (barge-in): no new sentence is synthesized or played; token reading stops."""
        self._stop.set()

    def _work(self, q: queue.Queue, turn: str, wavs: list, errors: list) -> None:
        while True:
            item = q.get()
            if item is None:
                return
            index, sentence = item
            if self._stop.is_set():
                continue
            path = self.output_dir / f"{self.prefix}-{turn}-{index:02d}.wav"
            try:
                self.tts.synthesize(sentence, path)
            except Exception as e:  # noqa: BLE001 - one failed sentence must not silence the rest
                errors.append(f"sentence {index}: {e}")
                self._record("error", index, str(e))
                continue
            wavs[index] = path
            self._record("wav", index, sentence, path)
            if self.play is not None and not self._stop.is_set():
                try:
                    self.play(path)
                except Exception as e:  # noqa: BLE001
                    errors.append(f"playing sentence {index}: {e}")
                    self._record("error", index, str(e))
                    continue
                self._record("played", index, sentence, path)

    # -- push interface (the voice loop: sentences arrive from the understanding stage) -----------
    def begin(self, turn: str = "0") -> None:
        """Start a new answer: the worker thread waits for sentences."""
        self._events = []
        self._stop.clear()
        self._splitter = SentenceSplitter()
        self._sentences: list[str] = []
        self._wavs: list[Path | None] = []
        self._errors: list[str] = []
        self._parts: list[str] = []
        self._q: queue.Queue = queue.Queue()
        self._worker = threading.Thread(target=self._work, args=(self._q, turn, self._wavs, self._errors),
                                        daemon=True, name="tts-stream")
        self._worker.start()

    def add_sentence(self, sentence: str) -> None:
        """Queue one complete sentence for synthesis and playback."""
        sentence = sentence.strip()
        if not sentence:
            return
        self._sentences.append(sentence)
        self._wavs.append(None)
        self._record("sentence", len(self._sentences) - 1, sentence)
        self._q.put((len(self._sentences) - 1, sentence))

    def feed(self, piece: str) -> None:
        """One token's text: the sentences it completes are queued."""
        self._parts.append(piece)
        self._record("token", None, piece)
        for sentence in self._splitter.feed(piece):
            self.add_sentence(sentence)

    def end(self) -> SpeechResult:
        """The answer is complete: queue its last sentence, wait until every sentence is written
        and played, and return what was done."""
        self._record("generation_done")
        for sentence in self._splitter.flush():
            self.add_sentence(sentence)
        self._q.put(None)
        self._worker.join()
        return SpeechResult("".join(self._parts), self._sentences, self._wavs, list(self._events), self._errors)

    def speak(self, tokens: Iterable[str], turn: str = "0") -> SpeechResult:
        """Consume ``tokens`` (e.g. ``engine.stream(request)``) and speak the answer; returns when
        every sentence is written and played. Exceptions from ``tokens`` propagate after the
        sentences already cut have been spoken."""
        self.begin(turn)
        try:
            for piece in tokens:
                self.feed(piece)
                if self._stop.is_set():
                    break
        finally:
            result = self.end()
        return result


def join_wavs(paths: Iterable[Path], out: Path) -> Path:
    """Concatenate WAV files of one rate and channel count (the TTS's sentence WAVs) into ``out``.

    Raises:
        ValueError: no file, or the files differ in rate or channels.
    """
    parts, rate, channels = [], None, None
    for p in paths:
        data, r = sf.read(str(p), dtype="int16", always_2d=True)
        if rate is None:
            rate, channels = r, data.shape[1]
        elif (r, data.shape[1]) != (rate, channels):
            raise ValueError(f"{p}: {r} Hz x {data.shape[1]} ch, the others are {rate} Hz x {channels} ch")
        parts.append(data)
    if not parts:
        raise ValueError("no WAV files to join")
    sf.write(str(out), np.concatenate(parts), rate, subtype="PCM_16")
    return Path(out)


class EarlyReply:
    """One turn's reply, spoken sentence by sentence while the LLM is still producing it (the
    voice loop's use of :class:`StreamingSpeaker`).

    :meth:`sentence` is given each complete sentence as it is cut (``on_sentence`` of
    :meth:`edge.stages.nlu.understand.Understanding.understand`); the first one starts a
    :class:`StreamingSpeaker` whose worker synthesizes ``reply-part-<turn>-NN.wav`` and hands each
    to ``play`` (the speaker's queue). :meth:`finish` adds the reply's sentences not spoken yet,
    waits for the worker and joins the sentence WAVs into the turn's reply WAV.
    ``first_audio_ms``: from ``t0`` (perf_counter s, the endpoint) to the first sentence's WAV.
    """

    def __init__(self, tts, output_dir: str | Path, turn: str, play: Callable[[Path], None] | None = None,
                 t0: float | None = None):
        self.tts, self.output_dir, self.turn, self.play = tts, Path(output_dir), turn, play
        self.t0 = time.perf_counter() if t0 is None else t0
        self._speaker: StreamingSpeaker | None = None
        self._done = False
        self.first_audio_ms: float | None = None
        self.errors: list[str] = []

    @property
    def started(self) -> bool:
        return self._speaker is not None

    def sentence(self, sentence: str) -> None:
        if self._speaker is None:
            self._speaker = StreamingSpeaker(self.tts, self.output_dir, play=self.play, prefix="reply-part")
            self._speaker.begin(self.turn)
        self._speaker.add_sentence(sentence)

    def finish(self, text: str, out: Path) -> Path | None:
        """Speak the sentences of ``text`` (the final reply) not given yet, wait for the worker, and
        join the sentence WAVs into ``out``; None when not one sentence could be synthesized (the
        caller then synthesizes the whole text). ``errors``: one line per sentence that failed."""
        spoken = list(self._speaker._sentences)
        final, tail = answer_sentences(text)
        final += [tail] if tail else []
        rest = final[len(spoken):] if final[:len(spoken)] == spoken else [s for s in final if s not in spoken]
        for s in rest:
            self._speaker.add_sentence(s)
        res = self._speaker.end()
        self._done = True
        self.errors = list(res.errors)
        first = res.first("wav")
        if first is not None:
            self.first_audio_ms = round(1000 * (first.t - self.t0), 1)
        wavs = [w for w in res.wavs if w is not None]
        return join_wavs(wavs, out) if wavs else None

    def close(self) -> None:
        """End a reply the turn did not finish (an exception): nothing more is synthesized or played,
        and the worker thread is gone when this returns."""
        if self._speaker is not None and not self._done:
            self._speaker.stop()
            self._speaker.end()
            self._done = True
