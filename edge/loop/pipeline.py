"""The voice loop as the list of its stages, and the turn state machine that drives them.

    capture → wake word → endpointing (VAD) → speech recognition → understanding → store → reply → TTS → playback

One frame format from capture on: 16 kHz mono int16, 1280 samples (80 ms). States of a turn:
``listening`` → (wake word) → ``awake`` (endpointing; streaming recognizers get frames and give
partial transcripts) → (endpoint) → transcribe → understand → act on the store → reply text →
TTS → (playback) → ``listening``.
"""
from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from drivers.cpu import pinned
from edge import events as ev
from edge.stages import dialog
from edge.stages.asr import Recognizer
from edge.stages.nlu.understand import Understanding
from edge.stages.tts.stream import EarlyReply
from edge.stages.store import Store, StoreError
from edge.stages.tts.engine import WatchdogTts
from edge.stages.vad import Endpoint, Endpointer, SileroVad
from edge.stages.wake import WakeWord

FRAME_MS = 80
log = logging.getLogger("edge.loop.pipeline")


@dataclass
class Stages:
    """The stages, in the order a turn passes them."""

    wake: WakeWord
    vad: SileroVad
    asr: Recognizer
    understanding: Understanding
    store: Store
    tts: WatchdogTts
    governor: object | None = None  # edge.governor.Governor: thermal level → what the LLM may do


class Pipeline:
    """Feed frames with :meth:`feed`; events go to ``emit`` as they happen.

    Args:
        stages: the built stages.
        endpoint: an :class:`edge.config.EndpointSettings`.
        output_dir: reply WAVs are written here as ``reply-<turn_id>.wav``.
        emit: called with every :class:`edge.events.Event`.
        speaker: plays replies (:mod:`edge.stages.tts.speaker`), or None when replies are only written (a
            recording in, nothing to hear back).
        guard_ms: after the box stops speaking, wake words are still ignored this long (C03).
        echo_cancellation: the capture path removes the box's own voice, so a wake word during a
            reply is a barge-in: playback stops and a new turn starts.
    """

    def __init__(self, stages: Stages, endpoint, output_dir: Path, emit: Callable[[ev.Event], None],
                 speaker=None, guard_ms: int = 1500, echo_cancellation: bool = False):
        self.s = stages
        self.endpoint_settings = endpoint
        self.output_dir = Path(output_dir)
        self.emit = emit
        self.speaker = speaker
        self.guard_ms = guard_ms
        self.echo_cancellation = echo_cancellation
        self._guard_until = -1
        self._was_speaking = False
        self.suppressed = 0  # wake detections ignored while the box spoke (C03)
        self.t_ms = 0
        self.state = "listening"
        self.turn_id = ""
        self._ep: Endpointer | None = None
        self._fed = 0
        self._wake_t = 0
        self.turns = 0
        self.vocabulary_rebuilds = 0
        self.pending = None  # a question the box asked (edge.stages.dialog.Pending), answered without a wake word
        self.follow_up_ms = 5000
        self.language = "en"
        #: CPUs for a turn's recognition, understanding and reply (the big cores on big.LITTLE boards,
        #: see edge.governor.Governor.cpu_sets); None: not pinned
        self.turn_cpus: tuple[int, ...] | None = None

    # -- frames -------------------------------------------------------------------------------
    def feed(self, frame: np.ndarray) -> None:
        """Process one ``(1280,)`` int16 16 kHz frame."""
        self.t_ms += FRAME_MS
        if self.t_ms % 1040 == 0 and self.state == "listening":  # about once a second
            tick = getattr(self.s.understanding.llm, "tick", None)
            if tick is not None:
                tick()  # idle unload of the LLM (governor.idle_unload_s)
        detection = self.s.wake.process(frame)  # always scored: keeps the feature buffers current
        speaking = self._speaking()
        if detection is not None and (speaking or self.t_ms <= self._guard_until):
            if speaking and self.echo_cancellation:  # barge-in: the user talks over the reply
                self.speaker.stop()
                self._guard_until = -1
                if self.state != "listening":
                    self._end({})
            else:
                self.suppressed += 1
                detection = None
        if self.state == "listening":
            if detection is not None:
                self._start_turn(detection)
            return
        if self._ep is None:  # a follow-up answer, without a wake word, once the question was said
            if speaking:
                return
            self._open_endpointer(follow_up=True)
        prob = self.s.vad.probability(frame)
        state = self._ep.push(frame, prob)
        if state in (Endpoint.SPEECH, Endpoint.END):
            self._stream_to_asr()
        if state is Endpoint.END:
            self._turn()
        elif state is Endpoint.NO_SPEECH:
            self._no_speech()

    def _speaking(self) -> bool:
        """Whether the box is speaking; on the step from speaking to silent the guard starts."""
        if self.speaker is None:
            return False
        now = self.speaker.busy(self.t_ms)
        if self._was_speaking and not now:
            self._guard_until = max(self._guard_until, self.t_ms + self.guard_ms)
        self._was_speaking = now
        return now

    def finish(self) -> None:
        """End of stream: close an open turn as if its trailing silence had arrived."""
        if self.state != "awake":
            return
        if self._ep.state is Endpoint.SPEECH:
            self._stream_to_asr()
            self._turn()
        else:
            self._no_speech()

    # -- turn steps ---------------------------------------------------------------------------
    def _start_turn(self, detection) -> None:
        self.turn_id = uuid.uuid4().hex[:12]
        self.turns += 1
        self.state = "awake"
        self._wake_t = self.t_ms
        self.pending = None
        self._refresh_vocabulary()
        self._apply_limits()
        self._open_endpointer()
        self.emit(ev.Wake(self.t_ms, self.turn_id, detection.wake_word, round(detection.score, 4)))

    def _refresh_vocabulary(self) -> None:
        """When the inventory's names, aliases or places changed (an import by another process),
        rebuild the grammar, the LLM prompt and the recognizer's biasing before this turn."""
        def sig(items):
            return sorted((i.sku, i.item, i.location, tuple(i.aliases)) for i in items)

        items = self.s.store.items()
        if sig(items) == sig(getattr(self.s.understanding, "items", items)):
            return
        from edge.stages.asr import vocabulary

        self.s.understanding.rebuild(items)
        if hasattr(self.s.asr, "set_vocabulary"):
            self.s.asr.set_vocabulary(vocabulary(items))
        self.vocabulary_rebuilds += 1
        log.info("inventory changed: grammar, LLM prompt and recognition vocabulary rebuilt (%d items)", len(items))

    def _apply_limits(self) -> None:
        """At each wake word: read the board's signals and let the thermal level decide what the
        LLM may do this turn (warm: shorter answers; hot: grammar path only, with a notice)."""
        gov = self.s.governor
        if gov is None:
            return
        try:
            gov.sample()
            lim = gov.limits()
        except Exception as e:  # an unreadable signal never stops a turn
            log.warning("governor: %s", e)
            return
        u = self.s.understanding
        u.withheld = None if lim.llm_allowed else lim.notice
        if lim.max_tokens:
            u.max_tokens = lim.max_tokens

    def _open_endpointer(self, follow_up: bool = False) -> None:
        e = self.endpoint_settings
        self._ep = Endpointer(e.vad_threshold, e.trailing_silence_ms, e.max_utterance_ms,
                              self.follow_up_ms if follow_up else e.no_speech_timeout_ms)
        if follow_up:
            self._ep._tail_done = True  # no wake phrase to let finish
            self._wake_t = self.t_ms
        self._fed = 0
        self.s.vad.reset()

    def _stream_to_asr(self) -> None:
        frames = self._ep.frames
        if self._fed == 0 and frames:
            self.s.asr.start()
        for f in frames[self._fed:]:
            partial = self.s.asr.accept(f)
            if partial:
                self.emit(ev.Partial(self.t_ms, self.turn_id, partial, self.s.asr.name))
        self._fed = len(frames)

    def _no_speech(self) -> None:
        self.emit(ev.NoSpeech(self.t_ms, self.turn_id, self.t_ms - self._wake_t))
        self.pending = None
        self._end({})

    def _end(self, latency: dict) -> None:
        self.emit(ev.TurnEnd(self.t_ms, self.turn_id, latency))
        self.state = "listening"
        self._ep = None

    def _turn(self) -> None:
        """The endpointed turn, on ``turn_cpus`` when set (the audio loop's own mask comes back after)."""
        with pinned(self.turn_cpus):
            self._finish_turn()

    def _finish_turn(self) -> None:
        t0 = time.perf_counter()
        lat: dict[str, float] = {}
        early = None
        try:
            rec = self.s.asr.finish()
            t1 = time.perf_counter()
            lat["endpoint_to_transcript_ms"] = round(1000 * (t1 - t0), 1)
            self.emit(ev.Transcript(self.t_ms, self.turn_id, rec.text, self.s.asr.name,
                                    None if rec.confidence is None else round(rec.confidence, 3)))
            if not rec.text.strip():
                return self._no_speech()
            if self.pending is not None:
                outcome = self._answer(rec.text)
            else:
                # an LLM answer is spoken sentence by sentence while it is generated (issue 4 item 7)
                early = EarlyReply(self.s.tts, self.output_dir, f"{self.turn_id}-{self.t_ms}", t0=t0,
                                   play=self._queue_play if self.speaker is not None else None)
                intent = self.s.understanding.understand(rec.text, confidence=rec.confidence,
                                                         on_sentence=early.sentence)
                if intent is None:  # filler only ("the", "thank you"): not a command
                    return self._no_speech()
                t2 = time.perf_counter()
                lat["transcript_to_intent_ms"] = round(1000 * (t2 - t1), 1)
                take = getattr(self.s.understanding.llm, "take_reload_ms", None)
                reload_ms = take() if take is not None else None
                if reload_ms is not None:  # the LLM had been unloaded while idle and was loaded again
                    lat["llm_reload_ms"] = reload_ms
                self.emit(ev.IntentEvent(self.t_ms, self.turn_id, intent.intent, intent.slots(), intent.source))
                outcome = dialog.act(intent, self.s.store, rec.text, self.turn_id, language=self.language)
            t2 = time.perf_counter()
            wav = self._reply_audio(outcome.text, early, t0, lat)
            t3 = time.perf_counter()
            lat["intent_to_reply_audio_ms"] = round(1000 * (t3 - t2), 1)
            lat["total_ms"] = round(1000 * (t3 - t0), 1)
            self.emit(ev.Reply(self.t_ms, self.turn_id, outcome.text, str(wav)))
            self.pending = outcome.pending
        except Exception as e:  # one failed turn never stops the service
            self.pending = None
            self.emit(ev.Error(self.t_ms, self.turn_id, _stage_of(e), f"{type(e).__name__}: {e}"))
        finally:
            if early is not None:
                early.close()  # a turn that failed half-way leaves no synthesis thread behind
        if self.pending is not None:  # wait for the answer, no wake word needed
            self._ep = None
            return
        self._end(lat)

    def _reply_audio(self, text: str, early: EarlyReply | None, t0: float, lat: dict) -> Path:
        """The reply's WAV, spoken: the rest of an answer already being spoken sentence by sentence
        (``first_audio_ms`` goes to ``lat``), or the whole reply synthesized and played at once."""
        out = self.output_dir / f"reply-{self.turn_id}-{self.t_ms}.wav"
        if early is None or not early.started:
            wav = self.s.tts.synthesize(text, out)
            if self.speaker is not None:
                self.speaker.start(wav, self.t_ms)
            return wav
        wav = early.finish(text, out)
        for err in early.errors:  # a sentence the speech engine failed on: said, not hidden
            self.emit(ev.Error(self.t_ms, self.turn_id, "tts", err))
        if wav is None:  # not one sentence was synthesized: the whole reply in one piece
            wav = self.s.tts.synthesize(text, out)
            if self.speaker is not None:
                self.speaker.queue(wav, self.t_ms)
        else:
            lat["first_audio_ms"] = early.first_audio_ms
        if self.speaker is not None and getattr(self.speaker, "realtime", False):
            # sentences played while the turn ran: the frames captured meanwhile (processed next)
            # hold the box's own voice, so the guard covers them too (C03)
            busy_ms = int(1000 * (time.perf_counter() - t0))
            self._guard_until = max(self._guard_until, self.t_ms + busy_ms + self.guard_ms)
        return wav

    def _queue_play(self, wav: Path) -> None:
        """Play ``wav`` after what the speaker is already playing (a streamed reply's next sentence)."""
        self.speaker.queue(wav, self.t_ms)

    def _answer(self, text: str):
        """The answer to the pending question; emits the completed intent when there is one."""
        pending = self.pending
        outcome = dialog.follow_up(pending, text, self.s.store, self.turn_id, self.language)
        if outcome.record is not None or (pending.kind == "choose_item" and outcome.pending is not None):
            i = pending.intent
            sku = outcome.record.sku if outcome.record else (outcome.pending.intent.sku or i.sku)
            self.emit(ev.IntentEvent(self.t_ms, self.turn_id, i.intent, {**i.slots(), "sku": sku}, "follow_up"))
        return outcome

def _stage_of(e: Exception) -> str:
    if isinstance(e, StoreError):
        return "store"
    mod = type(e).__module__ or ""
    return "tts" if "tts" in mod or "pyttsx3" in mod else "pipeline"
