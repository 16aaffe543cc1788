"""The speech recognizer in its own process, watched for leaks and recycled between utterances (C16).

:class:`AsrWorker` is a :class:`~edge.stages.asr.base.Recognizer` whose recognizer
(:func:`edge.stages.asr.create`) runs in a spawned child process. Every method is one request over
a pipe (``start``, ``accept`` one frame → partial, ``speculate``, ``recheck``, ``finish``, ``transcribe``,
``set_partials``, ``set_vocabulary``, ``expect``), so the streaming state (the utterance's frames,
the partial budget, the speculation) lives in the child and the voice loop's partials and
speculation work through it unchanged. One model instance, one request at a time: calls from any
number of threads are serialized by a lock (4 concurrent ``transcribe`` callers take as long as the
same calls one after the other); a ``start`` … ``finish`` sequence belongs to one caller at a time
(the Wyoming box's single recognition thread and the stage locks see to that).

After each utterance (``finish``, ``transcribe``) the child's resident memory goes to a
:class:`edge.governor.memwatch.MemoryWatch`, at the next call that is not a ``recheck`` (which
decodes that utterance again, in the same child); when it is over its budget or grows steadily, the
child is stopped and a fresh one spawned before that call is sent, so the answer of the utterance
that revealed it is kept (no utterance dropped), the old child is gone before the new one loads
(never two models at once), and the call waits for the new one. The vocabulary, the question's answers
(``expect``) and a partial budget not yet taken are given to every new child. A child that dies
mid-call is replaced, given that state and the frames of the utterance so far (the rest of that
utterance then gets no partials), and the call tried once more.
"""
from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import threading
import time
from typing import Callable

import numpy as np

from drivers.cpu import pinned
from edge.config import AsrSettings
from edge.errors import EdgeError
from edge.governor.memwatch import MIB, MemoryWatch, anon_rss_of, rss_of
from edge.stages.asr import create
from edge.stages.asr.base import Recognition

__all__ = ["AsrWorker", "AsrWorkerError", "serve", "watch_from_settings"]

log = logging.getLogger("edge.stages.asr.worker")

FRAME = 1280
#: the requests the child answers (Recognizer methods); the first two end an utterance
UTTERANCE_ENDS = ("finish", "transcribe")
REQUESTS = (*UTTERANCE_ENDS, "start", "accept", "speculate", "recheck", "set_partials", "set_vocabulary", "expect")


class AsrWorkerError(EdgeError):
    """The recognizer worker could not start, or a request failed in it."""


def _answer(rec, method: str, args: tuple):  # pragma: no cover - child
    if method not in REQUESTS:
        raise AsrWorkerError(f"unknown request {method!r}")
    if method != "transcribe":
        return getattr(rec, method)(*args)
    (audio,) = args
    if hasattr(rec, "transcribe"):
        return rec.transcribe(audio)
    rec.start()  # a streaming engine (vosk): the audio as 80 ms frames
    for i in range(0, len(audio), FRAME):
        rec.accept(np.pad(audio[i:i + FRAME], (0, max(0, i + FRAME - len(audio)))))
    return rec.finish()


def serve(conn, settings: dict, language: str, on_call: Callable[[], None] | None = None) -> None:  # pragma: no cover - child
    """The child: build the recognizer, send ``("ready", (pid, engine name))``, then answer each
    ``(method, args)`` (:data:`REQUESTS`) with ``("ok", result)`` or ``("error", text)`` until the
    pipe closes. ``on_call`` runs after each utterance (``finish``, ``transcribe``), before the answer.
    Ctrl-C is the parent's to handle: the child ignores SIGINT and ends when the parent closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        rec = create(AsrSettings(**settings), language)
    except Exception as e:
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return
    conn.send(("ready", (os.getpid(), rec.name)))
    while True:
        try:
            method, args = conn.recv()
        except EOFError:
            return
        try:
            reply = ("ok", _answer(rec, method, args))
        except Exception as e:
            reply = ("error", f"{type(e).__name__}: {e}")
        if on_call is not None and method in UTTERANCE_ENDS:
            on_call()
        conn.send(reply)


def watch_from_settings(settings: AsrSettings) -> MemoryWatch:
    """The :class:`MemoryWatch` of ``settings.worker`` (MiB and KiB there, bytes here)."""
    w = settings.worker
    return MemoryWatch(budget_bytes=None if w.budget_mib is None else int(w.budget_mib * MIB),
                       growth_bytes=None if w.growth_mib is None else int(w.growth_mib * MIB),
                       slope_bytes_per_call=w.leak_kib_per_call * 1024, window=w.window, warmup=w.warmup,
                       min_growth_bytes=int(w.leak_min_mib * MIB))


class AsrWorker:
    """See the module docstring.

    Args:
        settings: the ``asr`` settings (:class:`edge.config.AsrSettings`).
        language: ``en`` | ``zh``.
        watch: the memory watch (default: no budget, 1 KiB per call over 45 calls after 10;
            :func:`watch_from_settings` gives the configured one).
        target: the child's function (default :func:`serve`; a test gives a leaking one).
        start_timeout_s: s for a child to load its model.
        cpus: CPUs the children run on (spawned from a thread pinned to them); None = as the caller.
        wait: wait for the first child's model here (False: at the first call).
    Attributes:
        name: the engine (``whisper`` | ``vosk``); ``pid``: the child's pid; ``recycles``: children
        replaced for their memory; ``reasons``: why; ``restarts``: children replaced after dying;
        ``calls``: utterances answered.
    Raises:
        AsrWorkerError: the child did not start (with ``wait``).
    """

    def __init__(self, settings: AsrSettings, language: str = "en", *, watch: MemoryWatch | None = None,
                 target: Callable | None = None, start_timeout_s: float = 180.0,
                 cpus: tuple[int, ...] | None = None, wait: bool = True):
        self.args = (settings.model_dump(mode="json"), language)
        self.name = settings.engine
        self.target = target or serve
        self.watch = watch or MemoryWatch()
        self.start_timeout_s = start_timeout_s
        self.cpus = cpus
        self.lock = threading.RLock()
        self.recycles, self.restarts, self.calls = 0, 0, 0
        self.reasons: list[str] = []
        self._proc = self._conn = None
        self._ready = False
        self.pid = 0
        # what a new child is given (see the module docstring)
        self._vocabulary: list[str] | None = None
        self._answers: list[str] | None = None
        self._budget: tuple[int, float] | None = None
        self._utterance: list[np.ndarray] | None = None  # frames since start, until finish
        self._check_due = False  # an utterance ended: the memory check comes with the next call
        self._spawn()
        if wait:
            self.wait_ready()

    @classmethod
    def from_settings(cls, settings: AsrSettings, language: str = "en", *, cpus: tuple[int, ...] | None = None,
                      wait: bool = True) -> AsrWorker:
        """A worker with the memory watch and start timeout of ``settings.worker``."""
        return cls(settings, language, watch=watch_from_settings(settings),
                   start_timeout_s=settings.worker.start_timeout_s, cpus=cpus, wait=wait)

    # -- the child ----------------------------------------------------------------------------
    def _spawn(self) -> None:
        ctx = mp.get_context("spawn")  # no fork of a process holding model threads
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=self.target, args=(child, *self.args), name="edge-asr", daemon=True)
        with pinned(self.cpus):  # the child inherits this thread's CPU mask
            proc.start()
        child.close()
        self._proc, self._conn, self.pid, self._ready = proc, parent, proc.pid, False
        self._spawned = time.monotonic()

    def _await_ready(self) -> None:
        """Wait for the child's model, then give it the state (vocabulary, answers, budget, the
        utterance so far). Raises AsrWorkerError (it did not start), EOFError/OSError (it died)."""
        conn = self._conn
        if not conn.poll(self.start_timeout_s):
            self._stop()
            raise AsrWorkerError(f"the speech recognizer worker did not start within {self.start_timeout_s} s")
        try:
            kind, msg = conn.recv()
        except (EOFError, OSError):
            self._stop()
            raise AsrWorkerError("the speech recognizer worker ended at start") from None
        if kind != "ready":
            self._stop()
            raise AsrWorkerError(f"the speech recognizer worker failed to start: {msg}")
        self.pid, self.name = int(msg[0]), str(msg[1])
        self._ready = True
        log.info("speech recognizer worker %d (%s) ready %.1f s after its start", self.pid, self.name,
                 time.monotonic() - self._spawned)
        self.watch.reset()
        if self._vocabulary is not None:
            self._request("set_vocabulary", self._vocabulary)
        if self._answers is not None:
            self._request("expect", self._answers)
        if self._budget is not None:
            self._request("set_partials", *self._budget)
        if self._utterance is not None:
            self._request("start")
            for f in self._utterance:
                self._request("accept", f)

    def _stop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._proc is not None:
            self._proc.join(2)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join(5)
        self._ready = False

    def _request(self, method: str, *args):
        self._conn.send((method, args))
        kind, payload = self._conn.recv()
        if kind != "ok":
            raise AsrWorkerError(f"speech recognition failed ({method}): {payload}")
        return payload

    def _call(self, method: str, *args):
        with self.lock:
            if self._proc is None:
                raise AsrWorkerError("the speech recognizer worker is closed")
            if self._check_due and method != "recheck":  # a recheck still needs the utterance's child
                self._check_due = False
                self._check_memory()
            for attempt in (1, 2):
                try:
                    if not self._ready:
                        self._await_ready()
                    result = self._request(method, *args)
                    break
                except (EOFError, OSError) as e:  # the child died: a new one, the call once more
                    if attempt == 2:
                        raise AsrWorkerError(f"the speech recognizer worker died twice: {e}") from e
                    log.warning("speech recognizer worker %d died (%s); restarting it", self.pid, e)
                    self.restarts += 1
                    if method == "start":
                        self._utterance = None  # the one before is over
                    self._stop()
                    self._spawn()
            self._note(method, args)
            if method in UTTERANCE_ENDS:
                self.calls += 1
                self._check_due = True
            return result

    def _note(self, method: str, args: tuple) -> None:
        """Keep what a new child must be given."""
        if method == "set_vocabulary":
            self._vocabulary = list(args[0])
        elif method == "expect":
            self._answers = None if args[0] is None else list(args[0])
        elif method == "set_partials":
            self._budget = (args[0], args[1])
        elif method == "start":
            self._budget, self._utterance = None, []
        elif method == "accept" and self._utterance is not None:
            self._utterance.append(args[0])
        elif method == "finish":
            self._utterance = None

    def _check_memory(self) -> None:
        why = self.watch.observe(self.anon_bytes())
        if why:  # between utterances: this answer is kept, the next call gets a fresh process
            log.warning("speech recognizer worker %d recycled: %s", self.pid, why)
            self.reasons.append(why)
            self.recycles += 1
            self._stop()
            self._spawn()

    def wait_ready(self) -> None:
        """Wait until the current child has loaded its model.

        Raises:
            AsrWorkerError: it did not start, or it died.
        """
        with self.lock:
            if self._proc is None:
                raise AsrWorkerError("the speech recognizer worker is closed")
            if not self._ready:
                try:
                    self._await_ready()
                except (EOFError, OSError) as e:
                    raise AsrWorkerError(f"the speech recognizer worker died at start: {e}") from e

    def rss_bytes(self) -> int | None:
        """The child's resident set size in bytes (None when unknown)."""
        return rss_of(self.pid) if self.pid else None

    def anon_bytes(self) -> int | None:
        """The child's anonymous resident memory in bytes, what the memory watch reads
        (:func:`edge.governor.memwatch.anon_rss_of`; None when unknown)."""
        return anon_rss_of(self.pid) if self.pid else None

    def status(self) -> dict:
        """``pid``, ``rss_bytes``, ``anon_bytes`` (None when unknown), ``peak_rss_bytes`` (of the
        anonymous part, over every child),
        ``budget_bytes`` (in force now; None: none yet), ``calls`` (utterances), ``recycles``,
        ``restarts``, ``last_reason``. JSON-ready; never blocks on a call."""
        return {"pid": self.pid, "rss_bytes": self.rss_bytes(), "anon_bytes": self.anon_bytes(),
                "peak_rss_bytes": self.watch.peak or None,
                "budget_bytes": self.watch.limit(), "calls": self.calls, "recycles": self.recycles,
                "restarts": self.restarts, "last_reason": self.reasons[-1] if self.reasons else ""}

    # -- the recognizer -----------------------------------------------------------------------
    def start(self) -> None:
        """A new utterance (:meth:`edge.stages.asr.base.Recognizer.start`), in the child."""
        self._call("start")

    def accept(self, frame: np.ndarray) -> str | None:
        """One ``(1280,)`` int16 frame; a new partial transcript or None."""
        return self._call("accept", np.asarray(frame, dtype=np.int16))

    def speculate(self) -> Recognition:
        """The decode of the utterance so far, kept in the child for :meth:`finish`."""
        return self._call("speculate")

    def recheck(self) -> Recognition | None:
        """The last decode again in the full window, in the child (:meth:`edge.stages.asr.base.Recognizer.recheck`)."""
        return self._call("recheck")

    def finish(self) -> Recognition:
        """The utterance's final transcript (then the memory check, see the module docstring).

        Raises:
            AsrWorkerError: the recognizer failed, or the child died twice.
        """
        return self._call("finish")

    def set_partials(self, interval_ms: int, cpu_fraction: float) -> None:
        """Partial re-decodes for the next utterance (``interval_ms`` ms, ``cpu_fraction`` 0..1)."""
        self._call("set_partials", int(interval_ms), float(cpu_fraction))

    def set_vocabulary(self, phrases: list[str]) -> None:
        """Bias recognition toward ``phrases``; kept for every later child."""
        self._call("set_vocabulary", list(phrases))

    def expect(self, answers: list[str] | None) -> None:
        """The next utterances answer the box's question offering ``answers`` (None: no question)."""
        self._call("expect", None if answers is None else list(answers))

    def transcribe(self, audio: np.ndarray, vocabulary: list[str] | None = None) -> Recognition:
        """``(n,)`` int16 16 kHz → :class:`Recognition`, in the child (serialized with other
        callers); ``vocabulary``: set first, and kept (:meth:`set_vocabulary`).

        Raises:
            AsrWorkerError: the recognizer failed on this audio, or the child died twice.
        """
        with self.lock:
            if vocabulary is not None:
                self.set_vocabulary(vocabulary)
            return self._call("transcribe", np.asarray(audio, dtype=np.int16))

    def close(self) -> None:
        """Stop the child. Idempotent."""
        with self.lock:
            self._stop()
            self._conn = self._proc = None
