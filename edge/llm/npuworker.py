"""The RKLLM engine in a worker process of its own, so that a job past its deadline can be killed.

A run that never calls back and does not return on ``rkllm_abort`` (a wedged NPU or runtime) would
otherwise keep a thread, the model and the NPU lock of the daemon for ever. :class:`RkllmWorkerEngine`
loads the model in a child process (``multiprocessing`` *spawn*: a fork of the multithreaded daemon
could inherit held locks) that runs :class:`edge.llm.rkllm.RkllmEngine`; requests, tokens, cancels
and stats cross a pipe. A job with no answer from the worker by its deadline (``wait_s`` for the
NPU + ``timeout_s`` + ``abort_grace_s`` + :data:`KILL_GRACE_S`, or ``abort_grace_s`` +
:data:`KILL_GRACE_S` after a cancel) or ending in a runtime error gets the worker killed
(SIGKILL): the kernel frees its NPU memory and drops its NPU ``flock``; the chain serves the
request on its next step (the CPU). The next call starts a new worker (the chain's probe after
``llm.cooldown_s``).
"""
from __future__ import annotations

import dataclasses
import logging
import multiprocessing as mp
import queue
import threading
import time
from pathlib import Path
from typing import Iterator

from edge.llm.base import (
    CancelToken,
    ContextOverflow,
    EngineError,
    GenerationRequest,
    GenerationStats,
    LlmEngine,
    ModelInUse,
    fit_messages,
)
from edge.llm.rkllm import QWEN_CHATML, estimate_tokens

log = logging.getLogger(__name__)

#: Extra s past a job's own limits before its worker is killed: the worker reports a timeout of
#: its own (``rkllm_abort`` worked) well within this on a busy board.
KILL_GRACE_S = 5.0
#: s a new worker may take to start and load the model (a 4 GB file from a slow SD card, ~400 s).
START_TIMEOUT_S = 600.0
POLL_S = 0.05  # how often the parent checks cancel and the deadline while waiting, s


def _serve(conn, kwargs: dict) -> None:
    """The worker: load the model, then run one request at a time until ``close`` or EOF."""
    from edge.llm.rkllm import RkllmEngine

    try:
        eng = RkllmEngine(**kwargs)
    except Exception as e:  # noqa: BLE001 - reported to the parent, which raises it
        conn.send(("failed", f"{e}"))
        return
    conn.send(("ready", None))
    inbox: queue.Queue = queue.Queue()
    tokens: dict[int, CancelToken] = {}  # job number -> its cancel token, made when the job arrives
    guard = threading.Lock()

    def token(job: int) -> CancelToken:
        with guard:
            return tokens.setdefault(job, CancelToken())

    def read():
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                inbox.put(("close", None, 0))
                return
            if msg[0] == "cancel":  # may come before the job is taken from the inbox
                token(msg[2]).cancel()
                continue
            token(msg[2])
            inbox.put(msg)
            if msg[0] == "close":
                return

    threading.Thread(target=read, name="rkllm-worker-read", daemon=True).start()
    while True:
        kind, arg, job = inbox.get()
        if kind == "close":
            eng.close()
            return
        cancel = token(job)
        try:
            if kind == "smoke":
                eng.smoke(arg)
            else:
                for piece in eng.stream(arg, cancel):
                    conn.send(("piece", piece))
            conn.send(("done", eng.last_stats))
        except ContextOverflow as e:
            conn.send(("overflow", (e.prompt_tokens, e.n_ctx, e.max_tokens)))
        except ValueError as e:
            conn.send(("value", str(e)))
        except Exception as e:  # noqa: BLE001 - EngineError or what a broken runtime raises
            conn.send(("error", f"{e}"))
        with guard:
            tokens.pop(job, None)


class RkllmWorkerEngine(LlmEngine):
    """:class:`edge.llm.rkllm.RkllmEngine` (same arguments) in a worker process that is killed
    when a job passes its deadline. ``count_tokens`` and trimming are computed here too (same
    rules). One job at a time per engine.

    Raises:
        EngineError: the worker could not load the model (the worker's message), or did not
            start within :data:`START_TIMEOUT_S`.
        ValueError: ``n_ctx`` not positive.
    """

    name = "rkllm"
    supports_json_schema = False

    def __init__(self, model: str | Path, n_ctx: int, **kwargs):
        if n_ctx <= 0:
            raise ValueError(f"n_ctx must be a positive number of tokens, got {n_ctx}")
        self.model = str(model)
        self.n_ctx = n_ctx
        self.timeout_s = float(kwargs.get("timeout_s", 60.0))
        self.wait_s = self.timeout_s if kwargs.get("wait_s") is None else float(kwargs["wait_s"])
        self.abort_grace_s = float(kwargs.get("abort_grace_s", 5.0))
        self.chat_template = kwargs.get("chat_template", QWEN_CHATML)
        self._tokenizer = None
        if kwargs.get("tokenizer") is not None:
            from tokenizers import Tokenizer

            self._tokenizer = Tokenizer.from_file(str(kwargs["tokenizer"]))
        self._kwargs = dict(kwargs, model=model, n_ctx=n_ctx)
        self.last_stats = GenerationStats()
        self.healthy = False
        self.last_error = ""
        self.kills = 0
        self._lock = threading.Lock()  # one job at a time
        self._inuse = ModelInUse(self.name)
        self._proc = self._conn = None
        self._jobs = 0
        self._start()

    # -- the worker ------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        """The worker's process id, or None when none runs."""
        return self._proc.pid if self._proc is not None and self._proc.is_alive() else None

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(child, self._kwargs), name="rkllm-worker", daemon=True)
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        kind, arg = self._recv(time.monotonic() + START_TIMEOUT_S) or ("failed", None)
        if kind != "ready":
            self._kill()
            why = arg or f"the worker did not start within {START_TIMEOUT_S:g} s"
            raise EngineError(why if why.startswith("rkllm") else f"rkllm worker: {why}")
        self.healthy = True

    def _recv(self, deadline: float):
        """The worker's next message, or None at ``deadline`` or when the worker is gone."""
        while time.monotonic() < deadline:
            try:
                if self._conn.poll(min(POLL_S, max(deadline - time.monotonic(), 0.001))):
                    return self._conn.recv()
            except (EOFError, OSError):
                return None
            if not self._proc.is_alive() and not self._conn.poll(0):
                return None
        return None

    def _kill(self) -> None:
        proc, conn, self._proc, self._conn = self._proc, self._conn, None, None
        if proc is not None and proc.is_alive():
            proc.kill()
            proc.join(KILL_GRACE_S)
            self.kills += 1
        if conn is not None:
            conn.close()

    # -- requests --------------------------------------------------------------------------------
    def stream(self, request: GenerationRequest, cancel: CancelToken | None = None) -> Iterator[str]:
        """As :meth:`edge.llm.rkllm.RkllmEngine.stream`, run by the worker.

        Raises (on the first ``next()``): as ``RkllmEngine.stream``; EngineError("... killed") when
        the worker passed the job's deadline or failed (the worker is killed).
        """
        with self._inuse.use(), self._lock:
            yield from self._job(("gen", request), cancel)

    def smoke(self, timeout_s: float | None = None) -> GenerationStats:
        """The worker's one-token smoke inference (a new worker when the last one was killed)."""
        with self._inuse.use(), self._lock:
            for _ in self._job(("smoke", timeout_s), None, timeout_s):
                pass
        return self.last_stats

    def _job(self, msg, cancel: CancelToken | None, timeout_s: float | None = None) -> Iterator[str]:
        if request_schema(msg):
            raise EngineError("rkllm cannot constrain output to a JSON schema; send schema requests to llamacpp")
        if self._proc is None or not self._proc.is_alive():
            self._kill()
            self._start()  # the last worker was killed: load the model again
        self._jobs += 1
        job = self._jobs
        self._conn.send((*msg, job))
        run_s = self.timeout_s if timeout_s is None else float(timeout_s)
        deadline = time.monotonic() + self.wait_s + run_s + self.abort_grace_s + KILL_GRACE_S
        cancelled = finished = False
        try:
            while True:
                if not cancelled and (self._inuse.closing or (cancel is not None and cancel.cancelled)):
                    cancelled = True
                    deadline = self._cancel(job, deadline)
                got = self._recv(min(deadline, time.monotonic() + POLL_S))
                if got is None:
                    if self._proc is not None and self._proc.is_alive() and time.monotonic() < deadline:
                        continue
                    finished = True
                    self._fail("its job passed its deadline" if self._proc is not None and self._proc.is_alive()
                               else "the worker died")
                kind, arg = got
                finished = kind != "piece"
                if kind == "piece":
                    if not cancelled:  # pieces the worker sent before it read the cancel are dropped
                        yield arg
                elif kind == "done":
                    self.last_stats = dataclasses.replace(arg, cancelled=True, finish_reason="cancelled") \
                        if cancelled and not arg.cancelled else arg
                    return
                elif kind == "overflow":
                    raise ContextOverflow(*arg)
                elif kind == "value":
                    raise ValueError(arg)
                else:
                    self._fail(arg)
        finally:
            if not finished:  # the consumer left mid-answer: stop the job, so the next one reads its own
                self._drain(self._cancel(job, deadline) if not cancelled else deadline)

    def _cancel(self, job: int, deadline: float) -> float:
        """Ask the worker to cancel job number ``job``; the deadline for it to say so."""
        try:
            self._conn.send(("cancel", None, job))
        except OSError:
            pass
        return min(deadline, time.monotonic() + self.abort_grace_s + KILL_GRACE_S)

    def _drain(self, deadline: float) -> None:
        """Read the rest of an abandoned job up to its end; kill the worker if it does not end."""
        while True:
            got = self._recv(deadline)
            if got is None:
                self._kill()
                return
            if got[0] != "piece":
                if got[0] == "done":
                    self.last_stats = got[1]
                return

    def _fail(self, why: str) -> None:
        self._kill()
        self.healthy = False
        self.last_error = f"{why}; worker killed"
        log.error("rkllm: %s; worker killed (the kernel frees its NPU memory and lock)", why)
        raise EngineError(f"rkllm: {why}; worker killed")

    def count_tokens(self, text: str) -> int:
        """As :meth:`edge.llm.rkllm.RkllmEngine.count_tokens` (no call to the worker)."""
        if self._tokenizer is not None:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
        return estimate_tokens(text)

    def prompt_tokens(self, messages: list[dict]) -> int:
        return self.count_tokens(self.chat_template.render(messages))

    def fit(self, messages: list[dict], max_tokens: int, cancel: CancelToken | None = None):
        """As :meth:`edge.llm.rkllm.RkllmEngine.fit`."""
        def measure(msgs):
            prompt = self.chat_template.render(msgs)
            return prompt, self.count_tokens(prompt)

        return fit_messages(messages, self.n_ctx, max_tokens, measure, cancel)

    def close(self, wait_s: float | None = None) -> None:
        """Cancel a running job and wait for it (up to ``wait_s`` s, default ``abort_grace_s`` +
        :data:`KILL_GRACE_S`), then let the worker free the model and end; killed if it does
        not end. Idempotent."""
        grace = self.abort_grace_s + KILL_GRACE_S if wait_s is None else wait_s
        self.healthy = False
        self._inuse.close(lambda: self._stop(grace), grace)

    def _stop(self, grace: float) -> None:
        proc, conn = self._proc, self._conn
        if proc is None:
            return
        try:
            conn.send(("close", None, 0))
        except OSError:
            pass
        proc.join(grace)
        self._kill()


def request_schema(msg) -> bool:
    """True for a generation request with a JSON schema (RKLLM cannot constrain output)."""
    return msg[0] == "gen" and msg[1].json_schema is not None
