"""The box behind the Wyoming services: the loaded stages, one instance of each model.

Every call to a stage runs on that stage's own single worker thread (recognition, speech, wake
word, turns), so calls to one model are serialized while the event loop keeps reading other
clients; each call also holds the :class:`~edge.service.wyoming.locks.StageLock` of every stage it
uses (:data:`NEEDS`), which the live service's voice loop holds for a whole turn when the two run in
one process.

Recognition runs in a worker process by default (``asr.worker.wyoming: process``,
:class:`edge.stages.asr.worker.AsrWorker`): this server runs for months and answers every satellite
of the house, so a recognizer that leaks a few KB per request would grow without end in the
service's own process; in a worker the governor's memory watch sees it (over its budget, or a
steady slope) and the worker is recycled between requests, none dropped. Requests stay serialized
on one model instance, and the biasing toward the inventory goes through the worker (and to every
fresh one). The recognizer is the stages' own when it already is a worker (``edge wyoming``, or a
voice loop with ``asr.worker.loop: process``: one model in the box); beside a voice loop whose
recognizer is inline, the Wyoming service gets a worker of its own, a second model instance
(~200 MiB resident with Whisper tiny.en here). ``inline``: the stages' recognizer as it is. A ``handle`` turn is the voice loop's turn on a text: the same understanding, store,
:func:`edge.stages.dialog.act` (records, undo, ask-back and read-back) and the same events
(:mod:`edge.events`) to ``emit``.
"""
from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np
import soundfile as sf
from wyoming.info import (
    AsrModel,
    AsrProgram,
    Attribution,
    HandleModel,
    HandleProgram,
    Info,
    TtsProgram,
    TtsVoice,
    WakeModel,
    WakeProgram,
)

from edge import __version__
from edge import events as ev
from edge.loop.inventory import InventoryWatch, same_items
from edge.loop.pipeline import apply_limits
from edge.loop.speculation import answer_verdict, is_new_command, windowed_stands
from edge.loop.stages import cpu_sets
from edge.service.wyoming.locks import StageLocks
from edge.stages import dialog, reply
from edge.stages.asr import Recognition
from edge.stages.asr.worker import AsrWorker
from edge.stages.nlu.grammar import COMPLETE
from edge.stages.tts.engine import VOICES
from edge.stages.wake import Detection, WakeWord, model_key
from edge.stock.store import StoreError

if TYPE_CHECKING:
    from edge.config import Settings
    from edge.loop.pipeline import Stages

log = logging.getLogger("edge.service.wyoming")

OWW = Attribution("David Scripka (openWakeWord; pre-trained models CC BY-NC-SA 4.0)",
                  "https://github.com/dscripka/openWakeWord")
MWW = Attribution("Kevin Ahrendt (microWakeWord; stock models Apache-2.0), pymicro-wakeword",
                  "https://github.com/kahrendt/microWakeWord")
WAKE_ATTRIBUTION = {"micro": MWW, "openwakeword": OWW}
ASR_ATTRIBUTION = {"whisper": Attribution("OpenAI (Whisper), SYSTRAN (faster-whisper)",
                                          "https://github.com/SYSTRAN/faster-whisper"),
                   "vosk": Attribution("Alpha Cephei (Vosk)", "https://alphacephei.com/vosk/")}
ESPEAK = Attribution("espeak-ng", "https://github.com/espeak-ng/espeak-ng")
EDGE = Attribution("edge (this box)", "")
#: s a new wake-word stream waits for a detector before it is refused (code busy)
WAKE_WAIT_S = 3.0
#: The shared stages each worker's calls use (their locks, :mod:`edge.service.wyoming.locks`):
#: recognition reads the inventory for its biasing; a turn understands and writes records. Wake-word
#: detectors are never shared with a voice loop (``share_wake=False``), so they need no lock.
NEEDS = {"asr": ("asr", "store"), "tts": ("tts",), "wake": (), "turn": ("understanding", "store")}


def _unique(phrases) -> list[str]:
    return list(dict.fromkeys(p.strip() for p in phrases if isinstance(p, str) and p.strip()))


@dataclass(frozen=True)
class HandleResult:
    """A ``handle`` turn: ``handled`` (False: not a command the box understood, or the store
    refused), the reply ``text`` to speak, the ``turn_id`` its records and events carry."""

    handled: bool
    text: str
    turn_id: str


class WakePool:
    """Up to ``size`` wake-word detectors, one per audio stream; the first is ``first`` (the
    stages' own; None: built too), the others are built on first need by ``factory()``. Thread-safe."""

    def __init__(self, first: WakeWord | None, size: int, factory: Callable[[], WakeWord]):
        self._free = [first] if first is not None else []
        self._built = len(self._free)
        self.size = size
        self._factory = factory
        self._lock = threading.Lock()

    def lease(self) -> WakeWord | None:
        """A detector for one stream (flushed: no carry-over from the last one), or None when
        ``size`` streams hold one each. Blocks while a new detector loads."""
        with self._lock:
            if self._free:
                ww = self._free.pop()
            elif self._built < self.size:
                self._built += 1
                ww = None
            else:
                return None
        if ww is None:
            try:
                return self._factory()
            except BaseException:
                with self._lock:
                    self._built -= 1
                raise
        ww.flush()
        return ww

    def release(self, ww: WakeWord) -> None:
        """Give ``ww`` back for the next stream."""
        with self._lock:
            self._free.append(ww)

    @property
    def free(self) -> int:
        """Detectors free now, counting those not built yet."""
        with self._lock:
            return len(self._free) + self.size - self._built


class Box:
    """The services' models.

    Args:
        settings: the validated settings (language, asr, wake, dialog, wyoming).
        stages: loaded by :func:`edge.loop.build.build_stages`; ``stages.store`` is read at every call.
        emit: receives the :mod:`edge.events` of each ``handle`` turn.
        locks: the stage locks shared with a voice loop in the same process (a fresh set when None).
        share_wake: lend the stages' own wake-word detector to the first wake stream (False beside a
            voice loop, which scores every frame with it: the streams get their own detectors).
        asr: the recognizer of the asr service (closed by :meth:`close`); None = by
            ``asr.worker.wyoming`` (module docstring; a worker of its own loads in the background
            and the first request waits for it).
    Attributes:
        asr: the recognizer the asr service uses; ``worker``: it, when it is an :class:`AsrWorker`.
    """

    def __init__(self, settings: Settings, stages: Stages, emit: Callable[[ev.Event], None] | None = None,
                 locks: StageLocks | None = None, share_wake: bool = True, asr=None):
        self.settings = settings
        self.stages = stages
        self._own_asr = asr
        if asr is None and settings.asr.worker.wyoming == "process" and not isinstance(stages.asr, AsrWorker):
            self._own_asr = AsrWorker.from_settings(settings.asr, settings.language, cpus=cpu_sets(stages.governor)[1],
                                                    wait=False)
        self.asr = self._own_asr if self._own_asr is not None else stages.asr
        self.emit = emit or (lambda e: None)
        self.locks = locks if locks is not None else StageLocks()
        self._workers = {name: ThreadPoolExecutor(1, thread_name_prefix=f"edge-wyoming-{name}")
                         for name in ("asr", "tts", "wake", "turn")}
        self.wake_pool = WakePool(stages.wake if share_wake else None, settings.wyoming.wake_streams,
                                  lambda: WakeWord.from_settings(settings))
        self._tmp = Path(tempfile.mkdtemp(prefix="edge-wyoming-"))
        self._asr_watch = InventoryWatch(stages.store)  # the inventory the recognizer's biasing was built from
        self._asr_base: list[str] = []
        self._und_watch = InventoryWatch(stages.store)
        # the question asked in each conversation (a client connection, or Home Assistant's
        # conversation id): (question, monotonic s it is answered until); never answered from another
        self._pending: dict[str, tuple[dialog.Pending, float]] = {}

    async def _run(self, worker: str, fn, *args):
        def locked():
            with self.locks.hold("wyoming", NEEDS[worker]):
                return fn(*args)

        return await asyncio.get_running_loop().run_in_executor(self._workers[worker], locked)

    @property
    def worker(self) -> AsrWorker | None:
        """The recognizer's worker process, when recognition runs in one."""
        return self.asr if isinstance(self.asr, AsrWorker) else None

    def close(self) -> None:
        """Stop the worker threads (after the calls running now), the asr service's own recognizer
        and remove the temporary files."""
        for w in self._workers.values():
            w.shutdown(wait=True, cancel_futures=True)
        if self._own_asr is not None:
            self._own_asr.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    # -- describe ---------------------------------------------------------------------------
    def info(self) -> Info:
        """The ``info`` answer to ``describe``: the configured recognizer, voice, wake words and dialog."""
        s, lang = self.settings, self.settings.language
        model = s.asr.whisper.model if s.asr.engine == "whisper" else s.asr.vosk.model
        asr = AsrProgram(name=f"edge-{s.asr.engine}", attribution=ASR_ATTRIBUTION[s.asr.engine], installed=True,
                         description=f"{s.asr.engine} speech recognition biased toward the inventory",
                         version=__version__, models=[AsrModel(
                             name=model, attribution=ASR_ATTRIBUTION[s.asr.engine], installed=True,
                             description=f"{s.asr.engine} model {model}", version=None, languages=[lang])])
        voice = s.tts.voice or VOICES.get(lang, VOICES["en"])
        tts = TtsProgram(name="edge-espeak-ng", attribution=ESPEAK, installed=True, description="espeak-ng voice",
                         version=__version__, supports_synthesize_streaming=True, voices=[TtsVoice(
                             name=voice, attribution=ESPEAK, installed=True, description=f"espeak-ng {voice}",
                             version=None, languages=[lang])])
        engines = sorted({m.engine for m in s.wake.models})
        wake = WakeProgram(name="edge-wake", attribution=WAKE_ATTRIBUTION[engines[0]], installed=True,
                           description=f"wake words ({', '.join(engines)})", version=__version__, models=[WakeModel(
                               name=model_key(m.name), attribution=WAKE_ATTRIBUTION[m.engine], installed=True,
                               languages=["en"], version=None, phrase=model_key(m.name).replace("_", " "),
                               description=f"{model_key(m.name)} ({m.engine}), threshold "
                                           f"{'its own' if m.threshold is None else m.threshold}")
                               for m in s.wake.models])
        handle = HandleProgram(name="edge-stock", attribution=EDGE, installed=True,
                               description="stock room dialog: stock queries, logs, undo (the voice loop's turn)",
                               version=__version__, models=[HandleModel(
                                   name="edge-stock-dialog", attribution=EDGE, installed=True, languages=[lang],
                                   description="grammar first, then the configured LLM", version=None)])
        return Info(asr=[asr], tts=[tts], wake=[wake], handle=[handle])

    # -- asr --------------------------------------------------------------------------------
    async def transcribe(self, frames: list[np.ndarray], names=(), terms=()) -> Recognition:
        """The transcript of ``frames`` (16 kHz mono int16, 1280 samples each) by :attr:`asr`
        (module docstring) with the inventory's biasing plus ``terms`` and ``names`` (names last:
        they survive when Whisper's prompt is cut to its last tokens).

        Raises:
            edge.stages.asr.worker.AsrWorkerError: the worker did not start, or failed twice.
        """
        return await self._run("asr", self._transcribe, frames, _unique(names), _unique(terms))

    def _transcribe(self, frames, names: list[str], terms: list[str]) -> Recognition:
        asr = self.asr
        items = self._asr_watch.changed_items()
        phrases = self._asr_watch.vocabulary_if_changed(items is not None) if self.settings.asr.bias else None
        if phrases is not None:
            self._asr_base = phrases
            asr.set_vocabulary(phrases)
        base = self._asr_base
        extra = [p for p in terms + names if p not in base]
        if extra:
            asr.set_vocabulary(_unique(base + terms + names))
        try:
            asr.start()
            for f in frames:
                asr.accept(f)
            rec = asr.finish()
            if rec.window_s is not None and self._unusable(rec.text):
                rec = asr.recheck() or rec  # the short window may have misheard (as in the voice loop)
            return rec
        finally:
            if extra:
                asr.set_vocabulary(base)

    # -- tts --------------------------------------------------------------------------------
    async def synthesize(self, text: str) -> tuple[np.ndarray, int]:
        """``text`` spoken by the configured voice: ``(samples (n,) or (n, channels) int16, rate Hz)``.

        Raises:
            edge.stages.tts.engine.TtsError: the speech engine failed (after its watchdog restart).
        """
        return await self._run("tts", self._synthesize, text)

    def _synthesize(self, text: str) -> tuple[np.ndarray, int]:
        path = self._tmp / f"tts-{uuid.uuid4().hex[:12]}.wav"
        try:
            wav = self.stages.tts.synthesize(text, path)
            data, rate = sf.read(str(wav), dtype="int16")
            return data, int(rate)
        finally:
            path.unlink(missing_ok=True)

    # -- wake -------------------------------------------------------------------------------
    async def lease_wake(self, wait_s: float = WAKE_WAIT_S) -> WakeWord | None:
        """A flushed wake-word detector for one stream, or None when ``wyoming.wake_streams`` streams
        still hold one after ``wait_s`` s (a client that just went away may still have audio queued)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + wait_s
        while (ww := await self._run("wake", self.wake_pool.lease)) is None and loop.time() < end:
            await asyncio.sleep(0.05)
        return ww

    def release_wake(self, ww: WakeWord) -> None:
        """Give a detector from :meth:`lease_wake` back (its stream ended or its client went away)."""
        self.wake_pool.release(ww)

    async def detect(self, ww: WakeWord, frames: list[np.ndarray]) -> list[tuple[int, Detection]]:
        """``[(index into frames, Detection)]`` for each 80 ms frame that triggers ``ww``."""
        return await self._run("wake", lambda: [(i, d) for i, f in enumerate(frames) if (d := ww.process(f))])

    # -- handle -----------------------------------------------------------------------------
    async def handle(self, text: str, conversation: str = "") -> HandleResult:
        """One turn on ``text`` (a transcript from Home Assistant), as the voice loop takes it.
        ``conversation``: whose turn it is (a connection, or the conversation id Home Assistant
        sends); only a turn of the same conversation answers the question the box asked there."""
        return await self._run("turn", self._handle, text, conversation)

    def _refresh_understanding(self) -> None:
        items = self._und_watch.changed_items()
        if items is not None and not same_items(items, self.stages.understanding.items):  # an import elsewhere
            self.stages.understanding.rebuild(items)
            log.info("inventory changed: grammar and LLM prompt rebuilt (%d items)", len(items))

    def _apply_limits(self) -> None:
        """The thermal level decides what the LLM may do this turn, as at a wake word in the voice
        loop (warm: shorter answers; hot: the grammar path only, with the cooling notice)."""
        apply_limits(self.stages)

    def _handle(self, text: str, conversation: str = "") -> HandleResult:
        turn = uuid.uuid4().hex[:12]
        t0 = time.perf_counter()
        self._refresh_understanding()
        self._apply_limits()
        now = time.monotonic()
        self._pending = {k: v for k, v in self._pending.items() if v[1] > now}  # expired questions go
        asked = self._pending.pop(conversation, None)
        pending = asked[0] if asked is not None and not self._new_command(asked[0], text) else None
        handled = True
        try:
            if pending is not None:
                outcome = self._follow_up(pending, text, turn)
            else:
                intent = self.stages.understanding.understand(text)
                if intent is None:  # filler only: not a command
                    self.emit(ev.NoSpeech(0, turn, 0))
                    self.emit(ev.TurnEnd(0, turn, {}))
                    return HandleResult(False, "", turn)
                self.emit(ev.IntentEvent(0, turn, intent.intent, intent.slots(), intent.source))
                docs = self.stages.docs.answer if self.stages.docs is not None else None
                outcome = dialog.act(intent, self.stages.store, text, turn, language=self.settings.language, docs=docs)
                # answered unless the reply is "not understood" (a records question is intent
                # "other" with an answer from the records)
                handled = intent.intent != "other" or outcome.text != reply.text("not_understood", self.settings.language)
        except StoreError as e:
            self.emit(ev.Error(0, turn, "store", f"{type(e).__name__}: {e}"))
            self.emit(ev.TurnEnd(0, turn, {}))
            return HandleResult(False, "Sorry, the stock records could not be written; nothing was logged.", turn)
        except Exception as e:  # logged as the voice loop logs a failed turn, then an error event to the client
            self.emit(ev.Error(0, turn, "pipeline", f"{type(e).__name__}: {e}"))
            self.emit(ev.TurnEnd(0, turn, {}))
            raise
        total = round(1000 * (time.perf_counter() - t0), 1)
        self.emit(ev.Reply(0, turn, outcome.text, None))
        self.emit(ev.TurnEnd(0, turn, {"transcript_to_reply_ms": total, "total_ms": total}))
        if outcome.pending is not None:  # the conversation's next transcript within the follow-up window answers it
            self._pending[conversation] = (outcome.pending,
                                           time.monotonic() + self.settings.dialog.follow_up_window_ms / 1000)
        return HandleResult(handled, outcome.text, turn)

    def _unusable(self, text: str) -> bool:
        """Whether ``text`` is neither a whole command that names its item (:func:`windowed_stands`)
        nor an answer to a question the box has asked (then a windowed transcript is decoded again
        in the full window)."""
        u = self.stages.understanding
        if windowed_stands(*u.completeness(text)):
            return False
        asked = [p for p, _until in list(self._pending.values())]
        return not any(answer_verdict(p, text, u.items, self.settings.language) == COMPLETE for p in asked)

    def _new_command(self, pending: dialog.Pending, text: str) -> bool:
        """Whether ``text`` is a new command rather than an answer to ``pending`` (as a new wake
        word starts one in the voice loop): :func:`edge.loop.speculation.is_new_command`."""
        return is_new_command(text, self.stages.understanding, self.settings.language)

    def _follow_up(self, pending: dialog.Pending, text: str, turn: str) -> dialog.Outcome:
        outcome = dialog.follow_up(pending, text, self.stages.store, turn, self.settings.language)
        if outcome.record is not None or (pending.kind == "choose_item" and outcome.pending is not None):
            i = pending.intent
            sku = outcome.record.sku if outcome.record else (outcome.pending.intent.sku or i.sku)
            self.emit(ev.IntentEvent(0, turn, i.intent, {**i.slots(), "sku": sku}, "follow_up"))
        return outcome
