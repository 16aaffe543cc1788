"""The voice loop: the turn state machine that drives the stages (:mod:`edge.loop.stages`).

    capture → wake word → endpointing (VAD) → speech recognition → understanding → store → reply → TTS → playback

One frame format from capture on: 16 kHz mono int16, 1280 samples (80 ms). The turn state
(:class:`edge.loop.state.TurnState`: listening → awake → transcribing → understanding →
speaking → listening, or follow_up after a question) is changed only here, and every change is a
``state`` event. Each step of a turn runs as a named stage (``asr``, ``nlu``, ``store``, ``tts``):
what it raises becomes an ``error`` event naming that stage, the turn ends and the loop goes on
listening.

Endpointing (``endpoint.mode``): ``fixed`` ends an utterance after ``trailing_silence_ms``.
``semantic``: partial transcripts while the user speaks (within the governor's CPU budget); when
silence starts, the utterance so far is decoded and the reply prepared without side effects
(:mod:`edge.loop.speculation`); after ``semantic_silence_ms`` a complete command ends at once, an
incomplete one waits up to ``incomplete_silence_ms``, anything else the plain tail. Silence past
``speculate_after_ms`` reaches the recognizer only when speech resumes, so the decode made when
silence started is the final one unless the user goes on. Each end is an ``endpoint`` event with its reason;
the ``turn_end`` event's latencies include what the speculation took (``speculation_decode_ms``,
``speculation_nlu_ms``, ``speculation_tts_ms``).
"""
from __future__ import annotations

import logging
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from drivers.cpu import pinned
from edge import events as ev
from edge.loop import reload
from edge.loop.speculation import PreviewInventory, Speculation, answer_verdict, is_new_command, windowed_stands
from edge.loop.stages import Speaker, Stages
from edge.loop.state import TRANSITIONS, TurnState
from edge.loop.steps import StageFailed, stage
from edge.loop.stopword import StopListener, is_stop
from edge.loop.vocabulary import Vocabulary
from edge.stages import dialog, reply
from edge.stages.asr.base import Recognition
from edge.stages.nlu.grammar import COMPLETE, INCOMPLETE, dangles
from edge.stages.nlu.types import Intent
from edge.stages.nlu.understand import TOO_LONG, TOO_LONG_ZH
from edge.stages.tts.stream import EarlyReply
from edge.stages.vad import PRE_ROLL_FRAMES, Endpoint, Endpointer
from edge.stages.wake import Detection

if TYPE_CHECKING:
    from edge.governor.thermal import Limits

FRAME_MS = 80
log = logging.getLogger("edge.loop.pipeline")


def apply_limits(stages: Stages) -> Limits | None:
    """Read the board's signals and let the thermal level decide what the LLM may do this turn
    (warm: shorter answers and fewer threads; hot: the grammar path only, with the cooling notice;
    a busy CPU: one LLM thread): sets the understanding's ``withheld`` and ``max_tokens`` and the
    loaded model's threads. Returns the limits, or None without a governor
    or when a signal could not be read (logged: an unreadable signal never stops a turn)."""
    gov = stages.governor
    if gov is None:
        return None
    try:
        gov.sample()
        lim = gov.limits()
    except Exception as e:  # an unreadable signal never stops a turn
        log.warning("governor: %s", e)
        return None
    u = stages.understanding
    u.withheld = None if lim.llm_allowed else lim.notice
    setter = getattr(u.llm, "set_threads", None)
    if lim.llm_threads and setter is not None:
        setter(lim.llm_threads)  # warm or a busy CPU: fewer threads for a model already loaded
    if lim.max_tokens:
        u.max_tokens = lim.max_tokens
        if stages.docs is not None:  # a generated documents answer gets the same budget
            stages.docs.max_tokens = lim.max_tokens
    return lim


def _ms(t0: float, t1: float) -> float:
    return round(1000 * (t1 - t0), 1)


class Pipeline:
    """Feed frames with :meth:`feed`; events go to ``emit`` as they happen.

    Args:
        stages: the built stages.
        endpoint: an :class:`edge.config.EndpointSettings`.
        output_dir: reply WAVs are written here as ``reply-<turn_id>-<t_ms>.wav``.
        emit: called with every :class:`edge.events.Event`.
        speaker: plays replies (:mod:`edge.stages.tts.speaker`), or None when replies are only written (a
            recording in, nothing to hear back).
        guard_ms: after the box stops speaking, wake words are still ignored this long (C03).
        echo_cancellation: the capture path removes the box's own voice, so a wake word during a
            reply is a barge-in: playback stops and a new turn starts.

    ``state`` is the :class:`~edge.loop.state.TurnState`; ``pending`` the question the box asked
    (:class:`edge.stages.dialog.Pending`) while it says it and waits for the answer.
    """

    def __init__(self, stages: Stages, endpoint, output_dir: Path, emit: Callable[[ev.Event], None],
                 speaker: Speaker | None = None, guard_ms: int = 1500, echo_cancellation: bool = False):
        self.s = stages
        self.endpoint_settings = endpoint
        self.output_dir = Path(output_dir)
        self.emit = emit
        self.speaker = speaker
        self.guard_ms = guard_ms
        self.echo_cancellation = echo_cancellation
        self._guard_until, self._was_speaking = -1, False
        self._failing: str | None = None  # the stage failing on every frame, reported once
        self.suppressed = 0  # wake detections ignored while the box spoke (C03)
        self._stop = StopListener()  # "stop" said during a reply (C21)
        self._was_listening_for_stop, self.stops = False, 0  # stops: replies ended by "stop"
        self.t_ms, self.turn_id, self._fed = 0, "", 0
        self.state = TurnState.LISTENING
        self._ep: Endpointer | None = None
        self._spec: Speculation | None = None  # prepared when silence started (semantic endpointing)
        self._decided = False  # the short-silence decision of this pause was taken
        self._partial_cpu_fraction = endpoint.partial_cpu_fraction  # the governor's budget, set per turn
        self._wake_t = self._lost = 0  # _lost: chunks the capture dropped by the wake word, then during the turn
        self.turns = 0
        #: audio chunks the frame source dropped so far (the capture ring's overflows; run_frames sets it)
        self.lost_audio: Callable[[], int] = lambda: 0
        self.vocabulary = Vocabulary(stages, self._report)
        self._tail: tuple[int, list] = (-1, [])  # when the last utterance ended, and its last frames
        self.pending: dialog.Pending | None = None
        self.follow_up_ms, self.language = 5000, "en"
        #: CPUs for a turn's recognition, understanding and reply (the big cores on big.LITTLE boards,
        #: see edge.governor.governor.Governor.cpu_sets); None: not pinned
        self.turn_cpus: tuple[int, ...] | None = None
        #: messages of the turns whose store step failed (nothing saved; the user was told)
        self.store_failures: list[str] = []

    def _to(self, new: TurnState) -> None:
        """The one place the turn state changes; emits the ``state`` event."""
        old = self.state
        if new is old:
            return
        if new not in TRANSITIONS[old]:
            log.error("turn state %s -> %s is not one of edge.loop.state.TRANSITIONS", old.value, new.value)
        self.state = new
        self.emit(ev.StateChange(self.t_ms, self.turn_id, new.value, old.value))

    # -- frames -------------------------------------------------------------------------------
    def feed(self, frame: np.ndarray) -> None:
        """Process one ``(1280,)`` int16 16 kHz frame. A stage that raises (the wake word, the VAD,
        the LLM's idle tick) ends an open turn with an ``error`` event naming it; while listening it
        is reported once per run of failing frames. The loop never stops on it."""
        self.t_ms += FRAME_MS
        reload.apply_if_requested(self.s)  # kill -HUP: new wake thresholds from the next frame
        try:
            self._frame(frame)
        except StageFailed as e:
            self._frame_failed(e)
        else:
            self._failing = None

    def _report(self, e: StageFailed) -> None:
        """A stage that failed outside a turn's steps: an ``error`` event naming it; the turn goes on."""
        self.emit(ev.Error(self.t_ms, self.turn_id, e.stage, str(e)))

    def _frame_failed(self, e: StageFailed) -> None:
        if self.state not in (TurnState.LISTENING, TurnState.SPEAKING):
            self._failing = e.stage
            return self._fail(e, {})
        if self._failing != e.stage:  # once per run of failing frames, not 12.5 times a second
            self._failing = e.stage
            log.warning("%s failed: %s", e.stage, e)
            self.emit(ev.Error(self.t_ms, self.turn_id, e.stage, str(e)))

    def _frame(self, frame: np.ndarray) -> None:
        llm = self.s.understanding.llm
        if llm is not None and self.t_ms % 1040 == 0 and self.state is TurnState.LISTENING:  # about once a second
            with stage("llm"):
                llm.tick()  # idle unload of the LLM (governor.idle_unload_s)
        with stage("wake"):
            detection = self.s.wake.process(frame)  # always scored: keeps the feature buffers current
        speaking = self._follow_speaker()
        if speaking and self._stop_heard(frame):
            speaking = self._follow_speaker()
        if detection is not None and (speaking or self.t_ms <= self._guard_until):
            detection = self._over_reply(detection, speaking)
        if self.state in (TurnState.LISTENING, TurnState.SPEAKING):
            if detection is not None:
                self._start_turn(detection)
            return
        if detection is not None and self.state is TurnState.FOLLOW_UP:
            # a wake word instead of the answer: a new command; the question gets no answer
            self.pending = None
            self.emit(ev.TurnEnd(self.t_ms, self.turn_id, {}))
            self._start_turn(detection)
            return
        self._endpoint(frame)

    def _follow_speaker(self) -> bool:
        """Whether the box speaks now; ``speaking`` ends when the speaker falls silent. On the step
        from speaking to silent the guard starts."""
        now = self.speaker is not None and self.speaker.busy(self.t_ms)
        if not now:
            self._was_listening_for_stop = False  # the next reply starts the stop listener afresh
        if self._was_speaking and not now:
            self._guard_until = max(self._guard_until, self.t_ms + self.guard_ms)
        self._was_speaking = now
        if not now and self.state is TurnState.SPEAKING:
            self._after_reply()
        return now

    def _stop_heard(self, frame: np.ndarray) -> bool:
        """While the box speaks: a bare "stop" (:mod:`edge.loop.stopword`) stops the speaker, and a
        question being said gets no answer. True when it did."""
        if not self._was_listening_for_stop:
            self._stop.reset()
            self._was_listening_for_stop = True
        audio = self._stop.push(frame)
        if audio is None:
            return False
        with stage("asr"):
            asr = self.s.asr
            if hasattr(asr, "transcribe"):
                text = asr.transcribe(audio).text
            else:
                asr.start()
                for i in range(0, len(audio), len(frame)):
                    asr.accept(audio[i:i + len(frame)])
                text = asr.finish().text
        if not is_stop(text):
            return False
        log.info("heard %r while speaking: reply stopped", text)
        self.speaker.stop()
        self.stops += 1
        if self.pending is not None:  # the question being said gets no answer: its turn ends here
            self.pending = None
            self.emit(ev.TurnEnd(self.t_ms, self.turn_id, {}))
        return True

    def _after_reply(self) -> None:
        """The reply was said: wait for the answer to its question, or listen."""
        if self.pending is not None:
            self._to(TurnState.FOLLOW_UP)
            self._open_endpointer(follow_up=True)
        else:
            self._to(TurnState.LISTENING)

    def _over_reply(self, detection: Detection, speaking: bool) -> Detection | None:
        """A wake word while the box speaks or within the guard after: a barge-in (echo cancellation
        on and the box still speaking; the detection is returned) or ignored (C03; None)."""
        if not (speaking and self.echo_cancellation):
            self.suppressed += 1
            return None
        self.speaker.stop()
        self._guard_until = -1
        if self.pending is not None:  # the question being said gets no answer: its turn ends here
            self.pending = None
            self.emit(ev.TurnEnd(self.t_ms, self.turn_id, {}))
        return detection

    def _endpoint(self, frame: np.ndarray) -> None:
        """``awake`` / ``follow_up``: the frame goes to the VAD and the endpointer."""
        with stage("vad"):
            prob = self.s.vad.probability(frame)
        state = self._ep.push(frame, prob)
        if state in (Endpoint.SPEECH, Endpoint.END):
            try:
                self._stream_to_asr()
                if state is Endpoint.SPEECH and self.semantic:
                    state = self._semantic_step()
            except StageFailed as e:
                self._fail(e, {})
                return
        if state is Endpoint.END:
            self._endpointed()
            self._turn()
        elif state is Endpoint.NO_SPEECH:
            self._no_speech()

    @property
    def semantic(self) -> bool:
        """Semantic endpointing (``endpoint.mode: semantic``), else the fixed trailing silence."""
        return self.endpoint_settings.mode == "semantic"

    def _semantic_step(self) -> Endpoint:
        """Inside the utterance: speculate when silence starts, decide after ``semantic_silence_ms``
        (complete: end now; incomplete: the longer tail); speech going on drops both."""
        ep, e = self._ep, self.endpoint_settings
        if ep.silence_ms == 0:
            if self._spec is not None or self._decided:  # the pause was inside the command
                self._drop_speculation()
                ep.trailing_silence_ms, ep.tail_reason = e.trailing_silence_ms, "vad_tail"
            return ep.state
        if self._spec is None and ep.silence_ms >= min(e.speculate_after_ms, e.semantic_silence_ms):
            self._spec = self._speculate()
        if self._spec is not None and not self._decided and ep.silence_ms >= e.semantic_silence_ms:
            self._decided = True
            if self._spec.verdict == COMPLETE:
                ep.end(COMPLETE)
            elif self._spec.verdict == INCOMPLETE:
                ep.trailing_silence_ms = max(e.incomplete_silence_ms, e.trailing_silence_ms)
                ep.tail_reason = INCOMPLETE
        return ep.state

    def _speculate(self) -> Speculation:
        """The decode of the utterance so far, the grammar's verdict on it and, when the grammar
        understood it, the reply prepared against a :class:`PreviewInventory` (nothing written).

        Raises:
            StageFailed: the recognizer or the grammar raised.
        """
        t0 = time.perf_counter()
        with stage("asr"):
            rec = self.s.asr.speculate()
        verdict, intent = self._verdict(rec.text)
        if rec.window_s is not None and not windowed_stands(verdict, intent) and not dangles(rec.text):  # misheard?
            with stage("asr"):
                rec = self.s.asr.recheck() or rec
            verdict, intent = self._verdict(rec.text)
        t1 = time.perf_counter()
        u = self.s.understanding
        if self.pending is not None:  # an answer to the box's question
            return Speculation(rec, verdict, timing={"speculation_decode_ms": _ms(t0, t1)})
        spec = Speculation(rec, verdict, intent)
        spec.timing["speculation_decode_ms"] = _ms(t0, t1)
        if intent is not None and verdict != INCOMPLETE:
            try:  # the grammar understood it. The model's rounds wait for the final transcript: here they
                # would hold the frame consumer for seconds (the capture ring overflows) and run twice
                final = u.understand(rec.text, confidence=rec.confidence, llm=False)
                if final is not None:  # (None: only the model would answer it)
                    outcome = dialog.act(final, PreviewInventory(self.s.store), rec.text, self.turn_id,
                                         language=self.language)
                    spec.reply_text = outcome.text
                    t2 = time.perf_counter()
                    spec.timing["speculation_nlu_ms"] = _ms(t1, t2)
                    spec.wav = self.s.tts.synthesize(outcome.text, self.output_dir / f"reply-{self.turn_id}-{self.t_ms}.wav")
                    spec.timing["speculation_tts_ms"] = _ms(t2, time.perf_counter())
            except Exception as err:  # never fails the turn: the real steps run after the endpoint
                log.debug("speculative reply not prepared: %s", err)
        spec.timing.setdefault("speculation_nlu_ms", _ms(t1, time.perf_counter()))
        return spec

    def _verdict(self, text: str) -> tuple[str, Intent | None]:
        """The grammar's verdict on ``text`` (complete, incomplete, unclear) and its intent; for an
        answer to the box's question, whether it answers it (no intent).

        Raises:
            StageFailed: the grammar raised.
        """
        with stage("nlu"):
            if self.pending is not None:
                return answer_verdict(self.pending, text, self.s.understanding.items, self.language), None
            return self.s.understanding.completeness(text)

    def _drop_speculation(self) -> None:
        if self._spec is not None:
            self._spec.discard()
        self._spec = None
        self._decided = False

    def _endpointed(self) -> None:
        ep = self._ep
        self._tail = (self.t_ms, ep.frames[-PRE_ROLL_FRAMES:])
        text = self._spec.rec.text if self._spec is not None else ""
        self.emit(ev.EndpointEvent(self.t_ms, self.turn_id, ep.reason or "vad_tail", ep.silence_ms, text))

    def finish(self) -> None:
        """End of stream: an open turn is closed as if its trailing silence had arrived, a question
        still unanswered gets ``no_speech``; the state ends at ``listening``."""
        if self.state is TurnState.SPEAKING:
            self._after_reply()
        if self.state in (TurnState.AWAKE, TurnState.FOLLOW_UP):
            if self._ep.state is Endpoint.SPEECH:
                try:
                    self._stream_to_asr()
                except StageFailed as e:
                    self._fail(e, {})
                    return
                self._ep.end("stream_end")
                self._endpointed()
                self._turn()
            else:
                self._no_speech()
        if self.state is TurnState.SPEAKING:  # the reply of that last turn
            self._after_reply()
        if self.state is TurnState.FOLLOW_UP:  # it was a question: the stream ended before an answer
            self._no_speech()

    # -- turn steps ---------------------------------------------------------------------------
    def _start_turn(self, detection: Detection) -> None:
        self.turn_id = uuid.uuid4().hex[:12]
        self.turns += 1
        self.pending = None
        self.emit(ev.Wake(self.t_ms, self.turn_id, detection.wake_word, round(detection.score, 4)))
        self._to(TurnState.AWAKE)
        self._wake_t, self._lost = self.t_ms, self.lost_audio()
        self.vocabulary.refresh()
        self._apply_limits()
        self._open_endpointer()

    def _apply_limits(self) -> None:
        """At each wake word: read the board's signals and let the thermal level decide what the
        LLM may do this turn (warm: shorter answers; hot: grammar path only, with a notice)."""
        lim = apply_limits(self.s)
        if lim is not None:
            self._partial_cpu_fraction = lim.partial_cpu_fraction

    def _open_endpointer(self, follow_up: bool = False) -> None:
        e = self.endpoint_settings
        self._ep = Endpointer(e.vad_threshold, e.trailing_silence_ms, e.max_utterance_ms,
                              self.follow_up_ms if follow_up else e.no_speech_timeout_ms,
                              after_wake=not follow_up,  # an answer has no wake phrase to let finish
                              release=e.vad_release)
        if follow_up:
            self._wake_t = self.t_ms
            if self._tail[0] == self.t_ms:  # nothing was played in between: the answer may have begun
                self._ep.preroll(self._tail[1])
        self._fed = 0
        self._drop_speculation()
        with stage("vad"):
            self.s.vad.reset()
        with stage("asr"):
            self.s.asr.set_partials(e.partial_interval_ms, self._partial_cpu_fraction if self.semantic else 0.0)

    def _stream_to_asr(self) -> None:
        """The endpointer's new frames to the recognizer; in semantic mode silence past
        ``speculate_after_ms`` waits until speech resumes (so it is never decoded at the end)."""
        frames = self._ep.frames
        n = len(frames)
        if self.semantic:
            hold = min(self.endpoint_settings.speculate_after_ms, self.endpoint_settings.semantic_silence_ms)
            n -= max(0, (self._ep.silence_ms - hold) // FRAME_MS)
        with stage("asr"):
            if self._fed == 0 and frames:
                self.s.asr.start()
            for f in frames[self._fed:n]:
                partial = self.s.asr.accept(f)
                if partial:
                    self.emit(ev.Partial(self.t_ms, self.turn_id, partial, self.s.asr.name))
        self._fed = max(self._fed, n)

    def _no_speech(self) -> None:
        self.emit(ev.NoSpeech(self.t_ms, self.turn_id, self.t_ms - self._wake_t))
        self.pending = None
        self._end({})

    def _end(self, latency: dict) -> None:
        self._drop_speculation()
        self.emit(ev.TurnEnd(self.t_ms, self.turn_id, latency))
        self._ep = None
        self._to(TurnState.LISTENING)

    def _fail(self, e: StageFailed, latency: dict) -> None:
        """One failed turn never stops the service: say which stage failed, end the turn. A failed
        store step (disk full, read-only, I/O error) is also said aloud: nothing was saved."""
        self.pending = None
        self._drop_speculation()  # its reply ("Logged 3 drill bits") is not what happened: no WAV left saying it
        self.emit(ev.Error(self.t_ms, self.turn_id, e.stage, str(e)))
        if e.stage == "store":
            self.store_failures.append(str(e.error))
            if self._say_not_saved(e.error):
                self.emit(ev.TurnEnd(self.t_ms, self.turn_id, latency))
                self._follow_speaker()  # speaking until the apology is played, then listening
                return
        self._end(latency)

    def _say_not_saved(self, error: Exception) -> bool:
        """Synthesize and play "nothing was saved" with the reason of ``error`` (a StoreError);
        emits its ``reply`` event. False when even that could not be said (a ``tts`` error event)."""
        text = reply.not_saved(getattr(error, "reason", None), self.language)
        self._to(TurnState.SPEAKING)
        try:
            with stage("tts"):
                wav = self.s.tts.synthesize(text, self.output_dir / f"reply-{self.turn_id}-{self.t_ms}.wav")
        except StageFailed as failed:
            self.emit(ev.Error(self.t_ms, self.turn_id, failed.stage, str(failed)))
            return False
        if self.speaker is not None:
            self.speaker.start(wav, self.t_ms)
        self.emit(ev.Reply(self.t_ms, self.turn_id, text, str(wav)))
        return True

    def _turn(self) -> None:
        """The endpointed turn, on ``turn_cpus`` when set (the audio loop's own mask comes back after)."""
        self._to(TurnState.TRANSCRIBING)
        self._lost = self.lost_audio() - self._lost  # > 0: what the recognizer has is not all that was said
        with pinned(self.turn_cpus):
            self._finish_turn()

    def _finish_turn(self) -> None:
        t0 = time.perf_counter()
        lat: dict[str, float] = {}
        failed: StageFailed | None = None
        # an LLM answer is spoken sentence by sentence while it is generated (nothing starts until then)
        early = EarlyReply(
            self.s.tts, self.output_dir, f"{self.turn_id}-{self.t_ms}", t0=t0,
            play=self._queue_play if self.speaker is not None else None)
        try:
            outcome = self._steps(t0, lat, early)
        except StageFailed as e:
            failed = e
        except Exception as e:  # the loop's own code: still one failed turn, not a stopped service
            failed = StageFailed("pipeline", e)
        finally:
            early.close()  # a turn that failed half-way leaves no synthesis thread behind
        if failed is not None:
            return self._fail(failed, lat)
        if outcome is None:  # nothing to say: the turn ended as no speech
            return
        self.pending = outcome.pending
        self.vocabulary.bias_answer(outcome.pending)
        if self.pending is None:
            self.emit(ev.TurnEnd(self.t_ms, self.turn_id, lat))
        self._follow_speaker()  # nothing playing (any more): on to listening, or the answer

    def _steps(self, t0: float, lat: dict, early: EarlyReply) -> dialog.Outcome | None:
        """Recognition, understanding, store and reply of the endpointed utterance; the outcome, or
        None when there was nothing to act on (then the turn has ended as no speech).

        Raises:
            StageFailed: a step raised.
        """
        with stage("asr"):
            rec = self.s.asr.finish()
        if rec.window_s is not None and not windowed_stands(*self._verdict(rec.text)):
            with stage("asr"):
                rec = self.s.asr.recheck() or rec
        t1 = time.perf_counter()
        lat["endpoint_to_transcript_ms"] = _ms(t0, t1)
        self.emit(ev.Transcript(self.t_ms, self.turn_id, rec.text, self.s.asr.name,
                                None if rec.confidence is None else round(rec.confidence, 3)))
        if not rec.text.strip():
            return self._no_speech()
        self._to(TurnState.UNDERSTANDING)
        if self.pending is not None and is_new_command(rec.text, self.s.understanding, self.language):
            log.info("%r is a command of its own, not the answer: the question is dropped", rec.text)
            self.pending = None
        if self._lost > 0:  # the capture ring dropped part of the utterance: nothing acted on, asked again
            log.warning("the capture dropped %d chunks of turn %s; it is asked again", self._lost, self.turn_id)
            outcome = dialog.Outcome(reply.text("missed_audio", self.language), self.pending)
        elif self.pending is not None:
            outcome = self._answer(rec.text)
        else:
            capped = self._ep is not None and self._ep.reason == "max_length"
            intent = self._understand(rec, early, t1, lat, llm=not capped)
            if intent is None and capped:  # endless speech (a TV?): no LLM call, no record, a short answer
                intent = Intent("other", source="grammar", text=rec.text,
                                answer=TOO_LONG_ZH if self.language == "zh" else TOO_LONG)
                self.emit(ev.IntentEvent(self.t_ms, self.turn_id, intent.intent, intent.slots(), intent.source))
            if intent is None:  # filler only ("the", "thank you"): not a command
                return self._no_speech()
            with stage("store"):
                outcome = dialog.act(intent, self.s.store, rec.text, self.turn_id, language=self.language,
                                     docs=self.s.docs.answer if self.s.docs is not None else None)
        t2 = time.perf_counter()
        self._to(TurnState.SPEAKING)
        with stage("tts"):
            wav = self._reply_audio(outcome.text, early, t0, lat)
        t3 = time.perf_counter()
        lat["intent_to_reply_audio_ms"] = _ms(t2, t3)
        lat["total_ms"] = _ms(t0, t3)
        self.emit(ev.Reply(self.t_ms, self.turn_id, outcome.text, str(wav)))
        return outcome

    def _understand(self, rec: Recognition, early: EarlyReply, t1: float, lat: dict, llm: bool = True) -> Intent | None:
        """The intent of the transcript (emitted), or None for filler only (or, ``llm=False``, for
        what the grammar does not understand)."""
        u = self.s.understanding
        with stage("nlu"):
            intent = u.understand(rec.text, confidence=rec.confidence, on_sentence=early.sentence, llm=llm)
        if intent is None:
            return None
        lat["transcript_to_intent_ms"] = _ms(t1, time.perf_counter())
        reload_ms = u.llm.take_reload_ms() if u.llm is not None else None
        if reload_ms is not None:  # the LLM had been unloaded while idle and was loaded again
            lat["llm_reload_ms"] = reload_ms
        self.emit(ev.IntentEvent(self.t_ms, self.turn_id, intent.intent, intent.slots(), intent.source))
        return intent

    def _reply_audio(self, text: str, early: EarlyReply | None, t0: float, lat: dict) -> Path:
        """The reply's WAV, spoken: the rest of an answer already being spoken sentence by sentence
        (``first_audio_ms`` goes to ``lat``), or the whole reply synthesized and played at once."""
        out = self.output_dir / f"reply-{self.turn_id}-{self.t_ms}.wav"
        spec, self._spec = self._spec, None
        if spec is not None:  # what preparing it during the silence took (the critical path's first part)
            lat.update(spec.timing)
        if spec is not None and spec.wav is not None and spec.reply_text == text and not (early and early.started):
            if self.speaker is not None:  # prepared during the tail for this very reply
                self.speaker.start(spec.wav, self.t_ms)
            return spec.wav
        if spec is not None:
            spec.discard()  # the final transcript decided otherwise
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
        if self.speaker is not None and self.speaker.realtime:
            # sentences played while the turn ran: the frames captured meanwhile (processed next)
            # hold the box's own voice, so the guard covers them too (C03)
            busy_ms = int(1000 * (time.perf_counter() - t0))
            self._guard_until = max(self._guard_until, self.t_ms + busy_ms + self.guard_ms)
        return wav

    def _queue_play(self, wav: Path) -> None:
        """Play ``wav`` after what the speaker is already playing (a streamed reply's next sentence)."""
        self.speaker.queue(wav, self.t_ms)

    def _answer(self, text: str) -> dialog.Outcome:
        """The answer to the pending question; emits the completed intent when there is one."""
        pending = self.pending
        with stage("store"):
            outcome = dialog.follow_up(pending, text, self.s.store, self.turn_id, self.language)
        if outcome.record is not None or (pending.kind == "choose_item" and outcome.pending is not None):
            i = pending.intent
            sku = outcome.record.sku if outcome.record else (outcome.pending.intent.sku or i.sku)
            self.emit(ev.IntentEvent(self.t_ms, self.turn_id, i.intent, {**i.slots(), "sku": sku}, "follow_up"))
        return outcome
