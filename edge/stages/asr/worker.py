"""The speech recognizer in its own process, watched for leaks and recycled between utterances (C16).

:class:`AsrWorker` runs the configured recognizer (:func:`edge.stages.asr.create`) in a spawned child
process: one model instance, one request at a time (calls from any number of threads are serialized by
a lock, so 4 concurrent callers take as long as the same calls one after the other). After each call
the child's resident set size goes to a :class:`edge.governor.memwatch.MemoryWatch`; when it is over
its budget or grows steadily, the child is replaced by a fresh one before the call returns, so the
answer of the call that revealed it is kept (no utterance dropped) and the next call runs in the new
process. A child that dies mid-call is restarted and the call tried once more.
"""
from __future__ import annotations

import logging
import multiprocessing as mp
import os
import threading
from typing import Callable

import numpy as np

from edge.config import AsrSettings
from edge.errors import EdgeError
from edge.governor.memwatch import MemoryWatch, rss_of
from edge.stages.asr import create
from edge.stages.asr.base import Recognition

__all__ = ["AsrWorker", "AsrWorkerError", "serve"]

log = logging.getLogger("edge.stages.asr.worker")

FRAME = 1280


class AsrWorkerError(EdgeError):
    """The recognizer worker could not start, or a request failed in it."""


def serve(conn, settings: dict, language: str, on_call: Callable[[], None] | None = None) -> None:  # pragma: no cover - child
    """The child: build the recognizer, answer ``("transcribe", audio (n,) int16, vocabulary | None)``
    with ``("ok", (text, confidence, audio_ms, decode_ms))`` until the pipe closes."""
    try:
        rec = create(AsrSettings(**settings), language)
    except Exception as e:
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return
    conn.send(("ready", os.getpid()))
    while True:
        try:
            _, audio, vocab = conn.recv()
        except EOFError:
            return
        try:
            if vocab is not None:
                rec.set_vocabulary(vocab)
            if hasattr(rec, "transcribe"):
                r = rec.transcribe(audio)
            else:
                rec.start()
                for i in range(0, len(audio), FRAME):
                    rec.accept(np.pad(audio[i:i + FRAME], (0, max(0, i + FRAME - len(audio)))))
                r = rec.finish()
            conn.send(("ok", (r.text, r.confidence, r.audio_ms, r.decode_ms)))
        except Exception as e:
            conn.send(("error", f"{type(e).__name__}: {e}"))
        if on_call is not None:
            on_call()


class AsrWorker:
    """See the module docstring.

    Args:
        settings: the ``asr`` settings (:class:`edge.config.AsrSettings`).
        language: ``en`` | ``zh``.
        watch: the memory watch (default: no budget, 1 KiB per call over 45 calls after 10).
        target: the child's function (default :func:`serve`; a test gives a leaking one).
        start_timeout_s: s for the child to load its model.
    Attributes:
        pid: the child's pid; ``recycles``: children replaced; ``reasons``: why; ``calls``: answered.
    Raises:
        AsrWorkerError: the child did not start.
    """

    def __init__(self, settings: AsrSettings, language: str = "en", *, watch: MemoryWatch | None = None,
                 target: Callable | None = None, start_timeout_s: float = 180.0):
        self.args = (settings.model_dump(mode="json"), language)
        self.target = target or serve
        self.watch = watch or MemoryWatch()
        self.start_timeout_s = start_timeout_s
        self._lock = threading.Lock()
        self.recycles, self.calls = 0, 0
        self.reasons: list[str] = []
        self._proc = self._conn = None
        self.pid = 0
        self._start()

    def _start(self) -> None:
        ctx = mp.get_context("spawn")  # no fork of a process holding model threads
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=self.target, args=(child, *self.args), name="edge-asr", daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent
        if not parent.poll(self.start_timeout_s):
            self._stop()
            raise AsrWorkerError(f"the speech recognizer worker did not start within {self.start_timeout_s} s")
        try:
            kind, msg = parent.recv()
        except (EOFError, OSError):
            self._stop()
            raise AsrWorkerError("the speech recognizer worker ended at start") from None
        if kind != "ready":
            self._stop()
            raise AsrWorkerError(f"the speech recognizer worker failed to start: {msg}")
        self.pid = int(msg)
        self.watch.reset()

    def _stop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._proc is not None:
            self._proc.join(2)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join(5)

    def rss_bytes(self) -> int | None:
        """The child's resident set size in bytes (None when unknown)."""
        return rss_of(self.pid)

    def transcribe(self, audio: np.ndarray, vocabulary: list[str] | None = None) -> Recognition:
        """``(n,)`` int16 16 kHz → :class:`Recognition`, in the child (serialized with other callers).

        Raises:
            AsrWorkerError: the recognizer failed on this audio, or the child died twice.
        """
        with self._lock:
            for attempt in (1, 2):
                try:
                    self._conn.send(("transcribe", np.asarray(audio, dtype=np.int16), vocabulary))
                    kind, payload = self._conn.recv()
                    break
                except (EOFError, OSError) as e:  # the child died: a new one, the call once more
                    log.warning("speech recognizer worker died (%s); restarting it", e)
                    self._stop()
                    self._start()
                    if attempt == 2:
                        raise AsrWorkerError(f"the speech recognizer worker died twice: {e}") from e
            if kind != "ok":
                raise AsrWorkerError(f"speech recognition failed: {payload}")
            self.calls += 1
            why = self.watch.observe(self.rss_bytes())
            if why:  # between utterances: this answer is kept, the next call gets a fresh process
                log.warning("speech recognizer worker %d recycled: %s", self.pid, why)
                self.reasons.append(why)
                self.recycles += 1
                self._stop()
                self._start()
            return Recognition(*payload)

    def close(self) -> None:
        """Stop the child. Idempotent."""
        with self._lock:
            self._stop()
            self._conn = self._proc = None
