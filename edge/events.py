"""The events a turn emits: one definition, used by the CLI's ``--json``, logs and tests.

Every event is a frozen dataclass with a ``type`` class attribute; :func:`to_dict` gives the JSON
object written one per line by ``edge run --json``. Times (``t_ms``) are milliseconds of *audio*
from the start of the stream, so a recorded session gives the same events on every run.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class Event:
    type: ClassVar[str] = "event"
    t_ms: int  # audio time in ms from stream start when the event was emitted
    turn_id: str

    def to_dict(self) -> dict[str, Any]:
        d = {"type": self.type}
        d.update(dataclasses.asdict(self))
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def human(self) -> str:
        """One readable line for a terminal."""
        body = ", ".join(f"{k}={v}" for k, v in dataclasses.asdict(self).items() if k not in ("t_ms", "turn_id"))
        return f"[{self.t_ms / 1000:8.2f}s] {self.type:<10} {body}"


@dataclass(frozen=True)
class Wake(Event):
    type: ClassVar[str] = "wake"
    wake_word: str
    score: float


@dataclass(frozen=True)
class Partial(Event):
    """A partial transcript while the user speaks (vosk natively; whisper by re-decoding)."""

    type: ClassVar[str] = "partial"
    text: str
    engine: str


@dataclass(frozen=True)
class EndpointEvent(Event):
    """Why the utterance ended: ``reason`` ``complete`` (the grammar took the latest transcript as
    a whole command after ``endpoint.semantic_silence_ms``), ``incomplete`` (it was not, and the
    longer ``incomplete_silence_ms`` passed), ``vad_tail`` (``trailing_silence_ms``),
    ``max_length`` (``max_utterance_ms``) or ``stream_end`` (the input ended). ``silence_ms``: the
    trailing silence then; ``text``: the transcript decided on ("" when none was decoded)."""

    type: ClassVar[str] = "endpoint"
    reason: str
    silence_ms: int
    text: str = ""


@dataclass(frozen=True)
class Transcript(Event):
    """The final transcript of one endpointed utterance."""

    type: ClassVar[str] = "transcript"
    text: str
    engine: str
    confidence: float | None = None  # 0..1 where the engine gives one


@dataclass(frozen=True)
class IntentEvent(Event):
    type: ClassVar[str] = "intent"
    intent: str  # query_stock | log_record | undo | other
    slots: dict[str, Any]  # sku, quantity, direction, location
    source: str  # grammar | llm


@dataclass(frozen=True)
class Reply(Event):
    type: ClassVar[str] = "reply"
    text: str
    audio: str | None  # path of the WAV written into the output folder


@dataclass(frozen=True)
class NoSpeech(Event):
    type: ClassVar[str] = "no_speech"
    waited_ms: int


@dataclass(frozen=True)
class TurnEnd(Event):
    """Per-stage latencies of one turn, in ms of wall-clock processing time.

    ``endpoint_to_transcript_ms``: recognition after the endpoint; ``transcript_to_intent_ms``:
    understanding; ``intent_to_reply_audio_ms``: store, reply text and TTS until the WAV is
    written; ``total_ms``: from the endpoint to reply audio ready; ``first_audio_ms`` (an LLM answer
    spoken sentence by sentence): from the endpoint to the first sentence's audio. When the loop
    prepared the turn during the silence before the endpoint (semantic endpointing,
    :mod:`edge.loop.speculation`): ``speculation_decode_ms`` (its decode), ``speculation_nlu_ms``
    (grammar and the previewed store step), ``speculation_tts_ms`` (the reply's audio, when prepared).
    """

    type: ClassVar[str] = "turn_end"
    latency_ms: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Error(Event):
    """A step of the turn failed; the service goes on listening. ``stage``: the step that raised
    (``asr``, ``nlu``, ``store``, ``tts``; ``pipeline`` for the loop's own code)."""

    type: ClassVar[str] = "error"
    stage: str
    message: str


@dataclass(frozen=True)
class StateChange(Event):
    """The turn state changed (values of :class:`edge.loop.state.TurnState`: ``listening``,
    ``awake``, ``transcribing``, ``understanding``, ``speaking``, ``follow_up``): ``state`` is the
    one entered, ``previous`` the one left."""

    type: ClassVar[str] = "state"
    state: str
    previous: str


EVENT_TYPES = {c.type: c for c in (Wake, Partial, EndpointEvent, Transcript, IntentEvent, Reply, NoSpeech, TurnEnd, Error,
                                   StateChange)}
