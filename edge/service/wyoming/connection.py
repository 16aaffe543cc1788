"""One Wyoming client: its events in order, at most one audio stream at a time.

    describe                                   → info
    transcribe, audio-start, audio-chunk…, audio-stop → transcript
    detect, audio-start, audio-chunk…, audio-stop     → detection (when heard) …, not-detected (none)
    synthesize                                 → audio-start, audio-chunk…, audio-stop
    synthesize-start, synthesize-chunk…, synthesize-stop → audio-start, audio-chunk… per sentence,
                                                  audio-stop, synthesize-stopped
    transcript                                 → handled | not-handled
    ping                                       → pong

Text is bounded before any work: a ``transcript`` over
:data:`edge.stages.utterance.MAX_UTTERANCE_CHARS` is ``not-handled`` with a reply saying so (no turn
taken); a ``synthesize`` text, one ``synthesize-chunk`` text or the unspoken rest of a stream over
:data:`MAX_SYNTHESIZE_CHARS` is an ``error`` event (code ``too-long``), and the connection stays.
A new connection must start its first event within ``wyoming.header_timeout_s``.

Audio comes in any PCM format (rate Hz, width 1–4 bytes, channels) and is converted to the voice
loop's 16 kHz mono int16 frames. An ``audio-chunk`` without ``audio-start``, audio without a
``transcribe`` or ``detect`` before it, or a chunk whose format or length does not match closes the
connection after an ``error`` event; so does a malformed frame (:mod:`edge.service.wyoming.frames`).
A failure of a model (e.g. the speech engine) is an ``error`` event and the connection stays open.
"""
from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event, async_write_event
from wyoming.handle import Handled, NotHandled
from wyoming.ping import Pong
from wyoming.tts import SynthesizeStopped
from wyoming.wake import Detection, NotDetected

from drivers.audio import FRAME_SAMPLES, SAMPLE_RATE, FrameConverter
from edge.service.wyoming.frames import ProtocolError, read_event
from edge.stages.tts.stream import SentenceSplitter
from edge.stages.utterance import too_long

if TYPE_CHECKING:
    from edge.config import Settings
    from edge.service.wyoming.box import Box
    from edge.stages.wake import WakeWord

log = logging.getLogger("edge.service.wyoming")

FRAME_MS = 1000 * FRAME_SAMPLES // SAMPLE_RATE  # 80 ms
CHUNK_SAMPLES = 1024  # samples per audio-chunk of synthesized speech (Wyoming's usual size)
DTYPES = {1: np.uint8, 2: np.int16, 4: np.int32}
#: characters of text synthesized at once: about 100 s of espeak-ng speech (~20 characters a
#: second), held whole in memory; eight times the longest reply the box gives itself
#: (edge.stages.nlu.schema.ANSWER_MAX_CHARS). 20,000 characters made 16 min of audio and 927 MiB.
MAX_SYNTHESIZE_CHARS = 2000


def audio_format(data: dict, event_type: str) -> tuple[int, int, int]:
    """``(rate Hz, width bytes, channels)`` of an audio event's data.

    Raises:
        ProtocolError: a field missing or out of range (rate 1000–384000 Hz, width 1–4, channels 1–8).
    """
    rate, width, channels = data.get("rate"), data.get("width"), data.get("channels")
    for key, v, lo, hi in (("rate", rate, 1000, 384_000), ("width", width, 1, 4), ("channels", channels, 1, 8)):
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ProtocolError(f"{event_type}: '{key}' must be a whole number from {lo} to {hi}, got {v!r}")
    return rate, width, channels


def pcm_samples(payload: bytes, width: int, channels: int) -> np.ndarray:
    """Interleaved little-endian PCM bytes → ``(n, channels)`` integer samples (24-bit as int32).

    Raises:
        ProtocolError: the byte count is not a whole number of ``width × channels`` frames.
    """
    if len(payload) % (width * channels):
        raise ProtocolError(f"audio-chunk: {len(payload)} payload bytes are not whole samples of "
                            f"{width} bytes × {channels} channels")
    if width == 3:  # 24-bit: left-justify into int32
        b = np.frombuffer(payload, np.uint8).reshape(-1, 3)
        x = (b[:, 0].astype(np.int32) << 8) | (b[:, 1].astype(np.int32) << 16) | (b[:, 2].astype(np.int32) << 24)
    else:
        x = np.frombuffer(payload, np.dtype(DTYPES[width]).newbyteorder("<")).astype(DTYPES[width])
    return x.reshape(-1, channels)


@dataclass
class Stream:
    """An open audio stream: what it is for, its format and what came in so far."""

    purpose: str  # "asr" | "wake"
    fmt: tuple[int, int, int]
    converter: FrameConverter
    frames: list[np.ndarray] = field(default_factory=list)  # asr: the 16 kHz frames kept
    n_frames: int = 0  # frames converted so far (wake: for timestamps)
    dropped: int = 0  # asr: frames past endpoint.max_utterance_ms


class Connection:
    """Serve one client on ``reader``/``writer`` with ``box`` until it closes; :meth:`run`.
    ``on_over`` is called once when the conversation is over (before the last error's linger,
    else at the close): the server's client slot is free from then on."""

    def __init__(self, box: Box, settings: Settings, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, peer: str = "?", on_over: Callable[[], None] | None = None):
        self.box, self.settings, self.reader, self.writer, self.peer = box, settings, reader, writer, peer
        self._on_over = on_over
        self.conversation = f"connection:{uuid.uuid4().hex}"  # whose question a transcript answers
        self.request: Event | None = None  # the transcribe or detect the next audio stream is for
        self.stream: Stream | None = None
        self.detector: WakeWord | None = None
        self.detected = False
        self.tts_split: SentenceSplitter | None = None  # an open synthesize-start … synthesize-stop
        self.tts_started = False
        self.tts_refused = False  # the open stream was refused (too long): its chunks are dropped
        self.max_asr_frames = settings.endpoint.max_utterance_ms // FRAME_MS
        self.handlers = {
            "describe": self.on_describe, "transcribe": self.on_request, "detect": self.on_request,
            "audio-start": self.on_audio_start, "audio-chunk": self.on_audio_chunk, "audio-stop": self.on_audio_stop,
            "synthesize": self.on_synthesize, "synthesize-start": self.on_synthesize_start,
            "synthesize-chunk": self.on_synthesize_chunk, "synthesize-stop": self.on_synthesize_stop,
            "transcript": self.on_transcript, "ping": self.on_ping,
        }

    async def send(self, event: Event) -> None:
        """Write one event to the client.

        Raises:
            ConnectionError: the client went away, or took none of it for ``wyoming.header_timeout_s``
                s (a client that stops reading would otherwise hold its slot for ever).
        """
        timeout_s = self.settings.wyoming.header_timeout_s
        try:
            await asyncio.wait_for(async_write_event(event, self.writer), timeout_s)
        except asyncio.TimeoutError:
            raise ConnectionError(f"the client read nothing for {timeout_s:g} s (wyoming.header_timeout_s)") from None

    async def run(self) -> None:
        """Read and answer events until the client closes, a protocol error, or cancellation."""
        w = self.settings.wyoming
        try:
            first = True  # the first event comes at once (header_timeout_s); then the client may idle
            while True:
                wait_s, setting = self._next_event_wait(first)
                event = await read_event(self.reader, wait_s, w.frame_timeout_s, w.header_timeout_s, first, setting)
                if event is None:
                    break
                first = False
                await self.dispatch(event)
        except ProtocolError as e:
            log.warning("wyoming client %s: %s; connection closed", self.peer, e)
            await self._try_send(Error(text=f"{e}; connection closed", code=e.code).event())
            self._over()  # the client may reconnect as soon as it reads the error
            await self._linger()
        except (ConnectionError, asyncio.IncompleteReadError):
            log.info("wyoming client %s went away", self.peer)
        finally:
            self.close()

    def _next_event_wait(self, first: bool) -> tuple[float, str]:
        """s to wait for the next event, and the setting that says so. Inside an open audio stream the
        audio comes in real time, so silence for ``header_timeout_s`` (the stall deadline) means the
        client is stalled or gone (it would hold a wake-word detector or a recognizer for the whole
        idle timeout)."""
        w = self.settings.wyoming
        if first:
            return w.header_timeout_s, "wyoming.header_timeout_s"
        if self.stream is not None:
            return w.header_timeout_s, "wyoming.header_timeout_s, inside an audio stream"
        return w.idle_timeout_s, "wyoming.idle_timeout_s"

    async def dispatch(self, event: Event) -> None:
        """Answer one event; unknown types are dropped, as the protocol asks.

        Raises:
            ProtocolError: the event breaks the protocol (the connection is closed by :meth:`run`).
        """
        handler = self.handlers.get(event.type)
        if handler is None:
            log.debug("wyoming client %s: %s ignored", self.peer, event.type)  # the protocol: drop unknown events
            return
        try:
            await handler(event)
        except (ProtocolError, ConnectionError):
            raise
        except Exception as e:  # a model failed: the client hears it, the connection stays
            log.exception("wyoming client %s: %s failed", self.peer, event.type)
            await self.send(Error(text=f"{event.type} failed: {type(e).__name__}: {e}", code="failed").event())

    async def _try_send(self, event: Event) -> None:
        try:
            await asyncio.wait_for(self.send(event), 1.0)
        except (ConnectionError, asyncio.TimeoutError, RuntimeError):
            pass

    async def _linger(self, timeout_s: float = 1.0, max_bytes: int = 1024 * 1024) -> None:
        """Half-close and read what the client still sends (at most ``max_bytes`` bytes, ``timeout_s``
        s): closing with unread bytes would reset the connection and lose the error event."""
        try:
            if self.writer.can_write_eof():
                self.writer.write_eof()
            loop = asyncio.get_running_loop()
            end, got = loop.time() + timeout_s, 0
            while got < max_bytes and (left := end - loop.time()) > 0:
                data = await asyncio.wait_for(self.reader.read(65536), left)
                if not data:
                    break
                got += len(data)
        except (ConnectionError, asyncio.TimeoutError, OSError, ValueError):
            pass

    def _over(self) -> None:
        if self._on_over is not None:
            on_over, self._on_over = self._on_over, None
            on_over()

    def close(self) -> None:
        """Give the wake-word detector back and close the socket (idempotent)."""
        self._over()
        if self.detector is not None:
            self.box.release_wake(self.detector)
            self.detector = None
        self.stream = None
        self.writer.close()

    # -- describe, ping ----------------------------------------------------------------------
    async def on_describe(self, event: Event) -> None:
        await self.send(self.box.info().event())

    async def on_ping(self, event: Event) -> None:
        await self.send(Pong(text=event.data.get("text")).event())

    # -- audio streams -------------------------------------------------------------------------
    async def on_request(self, event: Event) -> None:
        if self.stream is not None:
            raise ProtocolError(f"{event.type} inside an open audio stream; send audio-stop first")
        self.request = event

    async def on_audio_start(self, event: Event) -> None:
        if self.stream is not None:
            raise ProtocolError("audio-start inside an open audio stream; send audio-stop first")
        if self.request is None:
            raise ProtocolError("audio-start without a transcribe or detect before it")
        rate, width, channels = audio_format(event.data, event.type)
        purpose = "asr" if self.request.type == "transcribe" else "wake"
        if purpose == "wake":
            self.detector = await self.box.lease_wake()
            if self.detector is None:
                raise ProtocolError(f"all {self.box.wake_pool.size} wake-word detectors are in use; raise "
                                    f"wyoming.wake_streams to serve more streams at once", "busy")
            self.detected = False
        self.stream = Stream(purpose, (rate, width, channels), FrameConverter(rate, channels))

    async def on_audio_chunk(self, event: Event) -> None:
        st = self.stream
        if st is None:
            raise ProtocolError("audio-chunk without audio-start")
        fmt = audio_format(event.data, event.type)
        if fmt != st.fmt:
            raise ProtocolError(f"audio-chunk format {fmt} (rate, width, channels) differs from audio-start's {st.fmt}")
        frames = st.converter.push(pcm_samples(event.payload or b"", fmt[1], fmt[2]))
        await self._frames(st, frames)

    async def _frames(self, st: Stream, frames: list[np.ndarray]) -> None:
        first = st.n_frames
        st.n_frames += len(frames)
        if st.purpose == "asr":
            room = max(0, self.max_asr_frames - len(st.frames))
            st.frames.extend(frames[:room])
            st.dropped += len(frames) - min(room, len(frames))
            return
        names = self.request.data.get("names") or None
        for i, det in await self.box.detect(self.detector, frames):
            if names is not None and det.wake_word not in names:
                continue
            self.detected = True
            await self.send(Detection(name=det.wake_word, timestamp=(first + i) * FRAME_MS).event())

    async def on_audio_stop(self, event: Event) -> None:
        st = self.stream
        if st is None:
            raise ProtocolError("audio-stop without audio-start")
        await self._frames(st, st.converter.flush())
        request, self.request, self.stream = self.request, None, None
        if st.purpose == "wake":
            if self.detector is not None:
                self.box.release_wake(self.detector)
                self.detector = None
            if not self.detected:
                await self.send(NotDetected().event())
            return
        if st.dropped:
            log.info("wyoming client %s: %d ms of audio past endpoint.max_utterance_ms not transcribed",
                     self.peer, st.dropped * FRAME_MS)
        t = Transcribe.from_event(request)
        rec = await self.box.transcribe(st.frames, t.transcript_names or (), t.transcript_terms or ())
        await self.send(Transcript(text=rec.text, language=self.settings.language).event())

    # -- speech ---------------------------------------------------------------------------------
    async def _speak(self, text: str, start: bool, stop: bool) -> None:
        """Synthesize ``text`` and send it; ``audio-start`` first when ``start``, ``audio-stop`` after when ``stop``."""
        samples, rate = await self.box.synthesize(text) if text.strip() else (np.zeros(0, np.int16), 22050)
        channels = 1 if samples.ndim == 1 else samples.shape[1]
        if start:
            await self.send(AudioStart(rate=rate, width=2, channels=channels, timestamp=0).event())
        for i in range(0, len(samples), CHUNK_SAMPLES):
            await self.send(AudioChunk(rate=rate, width=2, channels=channels,
                                       audio=samples[i:i + CHUNK_SAMPLES].astype("<i2").tobytes()).event())
        if stop:
            await self.send(AudioStop().event())

    async def on_synthesize(self, event: Event) -> None:
        if self.tts_split is not None:  # sent for compatibility inside a streamed request: the chunks count
            return
        text = event.data.get("text")
        if not isinstance(text, str):
            raise ProtocolError("synthesize needs a 'text' string")
        if len(text) > MAX_SYNTHESIZE_CHARS:
            await self._too_long("synthesize", len(text))
            return
        await self._speak(text, start=True, stop=True)

    async def _too_long(self, what: str, n: int) -> None:
        log.info("wyoming client %s: %s of %d characters refused", self.peer, what, n)
        await self.send(Error(text=f"{what}: {n:,} characters of text is over the limit of {MAX_SYNTHESIZE_CHARS:,} "
                                   f"characters (about 100 s of speech); nothing was spoken: send it in parts, or "
                                   f"stream it with synthesize-start, -chunk and -stop (sentence by sentence)",
                              code="too-long").event())

    async def on_synthesize_start(self, event: Event) -> None:
        self.tts_split, self.tts_started, self.tts_refused = SentenceSplitter(), False, False

    async def on_synthesize_chunk(self, event: Event) -> None:
        if self.tts_refused:
            return
        if self.tts_split is None:
            raise ProtocolError("synthesize-chunk without synthesize-start")
        text = event.data.get("text")
        if not isinstance(text, str):
            raise ProtocolError("synthesize-chunk needs a 'text' string")
        unspoken = len(self.tts_split.buffer) + len(text)
        if unspoken > MAX_SYNTHESIZE_CHARS:  # one sentence that long would be spoken whole: refused
            self.tts_split, self.tts_refused = None, True
            await self._too_long("synthesize-chunk (the text not yet spoken)", unspoken)
            return
        for sentence in self.tts_split.feed(text):  # each complete sentence is spoken at once
            await self._speak(sentence, start=not self.tts_started, stop=False)
            self.tts_started = True

    async def on_synthesize_stop(self, event: Event) -> None:
        if self.tts_refused:  # the refusal was the answer
            self.tts_refused = False
            return
        if self.tts_split is None:
            raise ProtocolError("synthesize-stop without synthesize-start")
        rest = " ".join(self.tts_split.flush())
        await self._speak(rest, start=not self.tts_started, stop=True)
        self.tts_split = None
        await self.send(SynthesizeStopped().event())

    # -- handle ---------------------------------------------------------------------------------
    async def on_transcript(self, event: Event) -> None:
        text = event.data.get("text")
        if not isinstance(text, str):
            raise ProtocolError("transcript needs a 'text' string")
        refusal = too_long(text, self.settings.language)
        if refusal is not None:  # answered before the turn's locks are taken
            log.info("wyoming client %s: a transcript of %d characters refused", self.peer, len(text))
            await self.send(NotHandled(text=refusal).event())
            return
        context = event.data.get("context")
        said = context.get("conversation_id") if isinstance(context, dict) else None
        # a question belongs to Home Assistant's conversation when it names one, else to this connection
        r = await self.box.handle(text, f"conversation:{said}" if isinstance(said, str) and said else self.conversation)
        context = {"edge_turn_id": r.turn_id}
        await self.send((Handled(text=r.text, context=context) if r.handled
                         else NotHandled(text=r.text or None, context=context)).event())
