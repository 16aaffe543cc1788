"""The ``rkllm`` engine: an ``.rkllm`` model on the Rockchip NPU through ``drivers.npu.rkllm``
(librkllmrt.so 1.3.x).

One generation is one ``rkllm_run`` on a worker thread; the runtime calls the result callback on
that thread for every token, the callback puts the token on a queue, and :meth:`RkllmEngine.stream`
yields from the queue. ``RKLLM_RUN_FINISH`` ends the run (its ``RKLLMPerfStat`` gives prefill time
and decode rate), ``RKLLM_RUN_ERROR`` raises :class:`EngineError`.

* One NPU job at a time on the whole system (:class:`edge.llm.npulock.NpuArbiter`: a ``flock`` on
  ``llm.npu_lock``, voice turns before API requests): a second generation, of this or another
  process, *waits* for the first to end, up to ``wait_s`` seconds, and is then refused with
  :class:`EngineError` ("NPU busy"). The lock is released by the worker when ``rkllm_run``
  returns, so a run that never returns keeps the NPU marked busy; the chain therefore runs this
  engine in a worker process (:mod:`edge.llm.npuworker`) that is killed then, which drops the lock.
* A run longer than ``timeout_s`` is aborted with ``rkllm_abort``; the engine is marked unhealthy
  (``healthy`` False) and :class:`EngineError` raised. :meth:`RkllmEngine.smoke` (a one-token run
  under a timeout, case C13) decides health at start and after a cool-down.
* Cancel (:class:`CancelToken`) and stop strings abort the run the same way, without an error.
* Chat messages are rendered here with :class:`ChatTemplate` (Qwen2.5 ChatML by default) into one
  ``RKLLM_INPUT_PROMPT``; the runtime's own chat wrapping is switched off with
  ``rkllm_set_chat_template(h, "", "", "")`` (an empty template makes a 1.3.x runtime tokenise the
  prompt as given, measured on a 1.3.1 board by a third party; rkllm.h: "will disable the internal
  automatic chat template parsing").
* ``keep_history`` is 0: every request carries the whole conversation, so each run starts from an
  empty KV cache.
"""
from __future__ import annotations

import ctypes
import logging
import math
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from tokenizers import Tokenizer

from drivers.npu import rkllm as rk
from drivers.npu.node import NpuAccessError, check_node
from edge.llm.base import (
    CancelToken,
    EngineError,
    GenerationRequest,
    GenerationStats,
    LinkedCancel,
    LlmEngine,
    ModelInUse,
    fit_messages,
)
from edge.llm.npulock import arbiter_for
from edge.models.manifest import resolve

log = logging.getLogger(__name__)

POLL_S = 0.05  # how often the consumer checks cancel and the deadline while no token arrives, s
ABORT_REPEAT_S = 0.1  # rkllm_abort is repeated this often until the run returns, s
LETTERS_PER_TOKEN = 3  # ASCII letters and spaces: English BPE averages ~4 characters per token
NON_ASCII_BYTES_PER_TOKEN = 1.5  # CJK: 3 UTF-8 bytes -> 2 tokens per character


def estimate_tokens(text: str) -> int:
    """An over-estimate of the tokens of ``text`` for byte-level BPE tokenizers, used when no
    ``tokenizer.json`` is given: ASCII letters and spaces count 1/:data:`LETTERS_PER_TOKEN` each,
    every other ASCII character (digits, punctuation, newline; often single tokens) 1, other
    characters their UTF-8 bytes / :data:`NON_ASCII_BYTES_PER_TOKEN`. Over-counting trims context
    early; under-counting would overflow the window. Checked in tests to be at least the count of
    SmolLM2's tokenizer (49k vocabulary, weaker on Chinese than Qwen2.5's 151k) on English,
    Chinese, numbers and ChatML markup."""
    n = 0.0
    for c in text:
        if not c.isascii():
            n += len(c.encode("utf-8")) / NON_ASCII_BYTES_PER_TOKEN
        elif c.isalpha() or c == " ":
            n += 1 / LETTERS_PER_TOKEN
        else:
            n += 1
    return math.ceil(n)


@dataclass(frozen=True)
class ChatTemplate:
    """How chat messages become one prompt string.

    ``message`` is formatted with ``role`` and ``content`` for every message; ``generation_prompt``
    is appended to open the assistant's turn. The default is Qwen2.5's ChatML
    (``<|im_start|>role\\ncontent<|im_end|>\\n``; Qwen2.5 tokenizer_config.json chat_template).
    ``default_system``: inserted as the first message when the request has no system message
    (``None`` = none).
    """

    message: str = "<|im_start|>{role}\n{content}<|im_end|>\n"
    generation_prompt: str = "<|im_start|>assistant\n"
    default_system: str | None = None

    def render(self, messages: list[dict]) -> str:
        """``[{"role", "content"}, ...]`` → the prompt string.

        Raises:
            ValueError: no messages, or a message without ``role``/``content`` strings.
        """
        if not messages:
            raise ValueError("no messages to render")
        msgs = list(messages)
        if self.default_system is not None and msgs[0].get("role") != "system":
            msgs.insert(0, {"role": "system", "content": self.default_system})
        parts = []
        for i, m in enumerate(msgs):
            role, content = m.get("role"), m.get("content")
            if not isinstance(role, str) or not isinstance(content, str):
                raise ValueError(f"message {i}: needs string 'role' and 'content', got {m!r}")
            parts.append(self.message.format(role=role, content=content))
        return "".join(parts) + self.generation_prompt


QWEN_CHATML = ChatTemplate()


@dataclass
class _Run:
    """What the consumer of one run has seen: first/last token times (``time.perf_counter`` s),
    tokens, the first error, the runtime's perf figures, text held back (``pending``, up to
    ``hold`` characters: it could still be the start of a stop string), whether it stopped."""

    hold: int = 0
    first: float | None = None
    last: float | None = None
    n_tokens: int = 0
    error: str = ""
    perf: tuple | None = None
    pending: str = ""
    stopped: bool = False


class _Job:
    """One run: the queue the callback fills, the C arguments it must keep alive, its outcome."""

    def __init__(self):
        self.events: queue.Queue = queue.Queue()
        self.done = threading.Event()
        self.rc: int | None = None
        self.args: tuple = ()
        self.npu = None  # the NpuArbiter job held until rkllm_run returns


class RkllmEngine(LlmEngine):
    """Chat generation on the NPU with an ``.rkllm`` model.

    Args:
        model: ``.rkllm`` file, or a manifest id resolved with :func:`edge.models.manifest.resolve`.
        n_ctx: context window in tokens (``max_context_len``); always explicit (case C11).
        library: ``librkllmrt.so``; default :func:`drivers.npu.rkllm.find_library`.
        soc: the board's SoC (``board.soc``); RK3566/RK3568 and non-Rockchip SoCs are refused.
        runtime_version: the runtime's version if it cannot be read from the file (see
            :func:`drivers.npu.rkllm.read_runtime_version`); still checked to be 1.3.x.
        timeout_s: a generation running longer than this is aborted, seconds. Default 60: a 3B w8a8
            model decodes ~10 tokens/s on the RK3588 with ~0.6 s TTFT at 128 prompt tokens
            (rknn-llm benchmark.md, TeleChat2-3B), so a 256-token answer takes ~26 s.
        wait_s: how long a generation waits for another NPU job to end, seconds (default
            ``timeout_s``); 0 = refuse at once.
        abort_grace_s: after ``rkllm_abort``, how long to wait for ``rkllm_run`` to return, s.
        max_new_tokens: default answer budget passed at init (a request's ``max_tokens`` wins).
        top_k, top_p, repeat_penalty: sampling (defaults: Qwen2.5-Instruct generation_config.json);
            the request's ``temperature`` is used per run.
        chat_template: see :class:`ChatTemplate`.
        tokenizer: a HuggingFace ``tokenizer.json`` of the model for exact :meth:`count_tokens`;
            without it counts are over-estimated (:func:`estimate_tokens`).
        cpu_mask: ``enabled_cpus_mask`` bits for the runtime's CPU threads (e.g. ``0xF0`` = the
            RK3588's four Cortex-A76 cores 4–7); ``None`` keeps the runtime default.
        npu_lock: the system-wide NPU lock file (``llm.npu_lock``); None = the process's
            :data:`edge.llm.npulock.DEFAULT` arbiter (:func:`edge.llm.npulock.default_lock_path`).
        npu_nodes, npu_group: the board's ``npu.device_node`` (+ ``alt_device_nodes``) and
            ``npu.device_group``; when given, the node must open read-write before ``rkllm_init``
            (:func:`drivers.npu.node.check_node`), else EngineError naming the group to join.
    Raises:
        EngineError: SoC refused, runtime missing or not 1.3.x, model missing, ``rkllm_init``
            failed; the message says which and what to do. ``__cause__`` holds the driver error.
        ValueError: ``n_ctx`` not positive.
    """

    name = "rkllm"

    def __init__(self, model: str | Path, n_ctx: int, *, library: str | Path | None = None,
                 soc: str | None = None, runtime_version: str | None = None, timeout_s: float = 60.0,
                 wait_s: float | None = None, abort_grace_s: float = 5.0, max_new_tokens: int = 256,
                 top_k: int = 20, top_p: float = 0.8, repeat_penalty: float = 1.05,
                 chat_template: ChatTemplate = QWEN_CHATML, tokenizer: str | Path | None = None,
                 cpu_mask: int | None = None, npu_nodes: list[str] | None = None,
                 npu_group: str | None = None, npu_lock: str | Path | None = None):
        if n_ctx <= 0:
            raise ValueError(f"n_ctx must be a positive number of tokens, got {n_ctx}")
        self.n_ctx = n_ctx
        self.timeout_s = float(timeout_s)
        self.wait_s = self.timeout_s if wait_s is None else float(wait_s)
        self.abort_grace_s = float(abort_grace_s)
        self.top_k, self.top_p, self.repeat_penalty = top_k, top_p, repeat_penalty
        self.chat_template = chat_template
        self.last_stats = GenerationStats()
        self.healthy = False
        self.last_error = ""
        self._handle = None
        self._job: _Job | None = None
        self._job_lock = threading.Lock()
        self._inuse = ModelInUse(self.name)  # the consumer and the rkllm_run thread of each job
        self.arbiter = arbiter_for(npu_lock)
        self._tokenizer = None
        if tokenizer is not None:
            self._tokenizer = Tokenizer.from_file(str(tokenizer))

        try:
            self.lib = rk.RkllmLibrary(library, soc=soc, runtime_version=runtime_version)
        except rk.RkllmError as e:
            raise EngineError(f"rkllm engine unavailable: {e}") from e
        self.model_path = self._model_path(model)
        if npu_nodes:  # the runtime would only print an error: say which node, group and fix (C07)
            try:
                check_node(npu_nodes, npu_group)
            except NpuAccessError as e:
                raise EngineError(f"rkllm engine unavailable: {e}") from e

        param = self.lib.create_default_param()
        self._model_bytes = str(self.model_path).encode()  # the runtime may keep the pointer
        param.model_path = self._model_bytes
        param.max_context_len = n_ctx
        param.max_new_tokens = max_new_tokens
        param.top_k, param.top_p, param.repeat_penalty = top_k, top_p, repeat_penalty
        param.skip_special_token = True
        param.is_async = False
        if cpu_mask is not None:
            param.extend_param.enabled_cpus_mask = cpu_mask
            param.extend_param.enabled_cpus_num = bin(cpu_mask).count("1")
        self._c_callback = rk.LLMResultCallback(self._on_result)  # kept for the handle's whole life
        self._callbacks = rk.RKLLMCallback()
        self._callbacks.result_callback = self._c_callback
        rc, handle = self.lib.init(param, self._callbacks)
        if rc != 0 or not handle:
            raise EngineError(
                f"rkllm_init failed (status {rc}) for {self.model_path}: the runtime printed why on stderr; "
                f"check that the model was converted with rkllm-toolkit {self.lib.version} for this SoC "
                f"and that n_ctx={n_ctx} fits the model")
        self._handle = handle
        rc = self.lib.set_chat_template(handle, "", "", "")
        if rc != 0:
            self.lib.destroy(handle)
            self._handle = None
            raise EngineError(f"rkllm_set_chat_template failed (status {rc}) for {self.model_path}")
        self.healthy = True
        log.info("rkllm: %s loaded (runtime %s, n_ctx %d)", self.model_path, self.lib.version, n_ctx)

    @property
    def handle(self):
        """The runtime's ``LLMHandle`` of this model, or ``None`` once closed."""
        return self._handle

    @staticmethod
    def _model_path(model: str | Path) -> Path:
        p = Path(model).expanduser()
        if p.is_file():
            return p
        try:
            return resolve(str(model))
        except Exception as e:  # noqa: BLE001 - a manifest miss and a missing file read the same to the user
            raise EngineError(f"rkllm model '{model}': neither an existing .rkllm file nor an installed "
                              f"manifest model ({e})") from e

    # ------------------------------------------------------------ the C callback (worker thread)

    def _on_result(self, result, _userdata, state) -> int:
        job = self._job
        if job is None:
            return 0
        try:
            if state == rk.LLMCallState.RKLLM_RUN_NORMAL:
                r = result.contents
                text = r.text.decode("utf-8", "replace") if r.text else ""
                job.events.put(("token", text))
            elif state == rk.LLMCallState.RKLLM_RUN_FINISH:
                p = result.contents.perf
                job.events.put(("finish", (p.prefill_time_ms, p.prefill_tokens, p.generate_time_ms,
                                           p.generate_tokens, p.memory_usage_mb)))
            elif state == rk.LLMCallState.RKLLM_RUN_ERROR:
                job.events.put(("error", "the runtime reported RKLLM_RUN_ERROR"))
            # RKLLM_RUN_WAITING: half a UTF-8 character, no text; the next NORMAL event has it whole
        except Exception as e:  # noqa: BLE001 - an exception must not cross the C frame
            job.events.put(("error", f"result callback failed: {type(e).__name__}: {e}"))
        return 0

    # ------------------------------------------------------------ generation

    def stream(self, request: GenerationRequest, cancel: CancelToken | None = None) -> Iterator[str]:
        """Yield the answer's token texts; :attr:`last_stats` holds the figures afterwards. Nothing
        runs until the first ``next()``; closing the iterator early aborts the run.

        Raises (on the first ``next()``):
            ContextOverflow: the question does not fit ``n_ctx - max_tokens`` even after trimming
                the oldest turns (case C10).
            EngineError: closed engine; a JSON-schema request (RKLLM cannot constrain output; use
                llama.cpp); NPU busy longer than ``wait_s``; ``rkllm_run`` failed or reported
                ``RKLLM_RUN_ERROR`` (engine marked unhealthy); timeout (aborted, unhealthy).
            ValueError: ``max_tokens`` not positive, or a malformed message.
        """
        return self._generate(request, cancel, self.timeout_s)

    def _generate(self, request: GenerationRequest, cancel: CancelToken | None, timeout_s: float) -> Iterator[str]:
        with self._inuse.use():
            if self._handle is None:
                raise EngineError("rkllm engine is closed")
            yield from self._generate_in_use(request, LinkedCancel(cancel, lambda: self._inuse.closing), timeout_s)

    def _generate_in_use(self, request: GenerationRequest, cancel: CancelToken, timeout_s: float) -> Iterator[str]:
        if request.json_schema is not None:
            raise EngineError("rkllm cannot constrain output to a JSON schema; send schema requests to llamacpp")
        if request.max_tokens <= 0:
            raise ValueError(f"max_tokens must be positive, got {request.max_tokens}")
        t0 = time.perf_counter()
        stats = GenerationStats()
        self.last_stats = stats
        fitted = self.fit(list(request.messages), request.max_tokens, cancel)
        if fitted is None:  # cancelled while the history was trimmed
            stats.finish_reason, stats.cancelled = "cancelled", True
            return
        _, prompt, n_prompt, dropped = fitted
        stats.prompt_tokens = n_prompt
        stats.trimmed_messages = dropped
        npu = self.arbiter.job(request.priority, self.wait_s, cancel)
        if not npu.__enter__():  # cancelled (or the engine closed) while waiting: nothing ran
            npu.__exit__(None, None, None)
            stats.finish_reason, stats.cancelled = "cancelled", True
            return
        job = _Job()
        job.npu = npu
        try:
            inp = rk.RKLLMInput()
            prompt_bytes = prompt.encode("utf-8")
            inp.role = b"user"
            inp.enable_thinking = False
            inp.input_type = rk.RKLLMInputType.RKLLM_INPUT_PROMPT
            inp.prompt_input = prompt_bytes
            sampling = rk.RKLLMSamplingParam(top_k=self.top_k, top_p=self.top_p, temperature=request.temperature,
                                             repeat_penalty=self.repeat_penalty, mirostat=0, mirostat_tau=5.0,
                                             mirostat_eta=0.1)
            infer = rk.RKLLMInferParam()
            infer.mode = rk.RKLLMInferMode.RKLLM_INFER_GENERATE
            infer.sampling_params = ctypes.pointer(sampling)
            infer.keep_history = 0
            infer.max_new_tokens = request.max_tokens
            job.args = (inp, prompt_bytes, sampling, infer)  # alive until the run returns
            with self._job_lock:
                self._job = job
            self._inuse.enter(inside=True)  # the run uses the handle until rkllm_run returns
            try:
                threading.Thread(target=self._worker, args=(job, inp, infer), name="rkllm-run", daemon=True).start()
            except BaseException:
                self._inuse.leave()
                raise
        except BaseException:
            npu.__exit__(None, None, None)
            raise
        yield from self._consume(job, request, cancel, timeout_s, stats, t0)

    def prompt_tokens(self, messages: list[dict]) -> int:
        """Tokens of ``messages`` rendered with the chat template (see :meth:`count_tokens`)."""
        return self.count_tokens(self.chat_template.render(messages))

    def fit(self, messages: list[dict], max_tokens: int,
            cancel: CancelToken | None = None) -> tuple[list[dict], str, int, int] | None:
        """Trim the oldest non-system turns until the prompt fits ``n_ctx - max_tokens`` (case C10),
        by the rules of the llama.cpp engine: leading ``system`` messages and the last message are
        kept; a history that would start with an ``assistant`` turn loses that turn too.

        Returns:
            ``(messages kept, prompt text, prompt tokens, messages dropped)``, or None when
            ``cancel`` was set meanwhile.
        Raises:
            ContextOverflow: even the system prompt plus the last message do not fit.
            ValueError: no messages, or a message without string ``role``/``content``.
        """
        def measure(msgs):
            prompt = self.chat_template.render(msgs)
            return prompt, self.count_tokens(prompt)

        return fit_messages(messages, self.n_ctx, max_tokens, measure, cancel)

    def _worker(self, job: _Job, inp, infer) -> None:
        try:
            job.rc = self.lib.run(self._handle, inp, infer)
        except Exception as e:  # noqa: BLE001
            job.events.put(("error", f"rkllm_run raised {type(e).__name__}: {e}"))
            job.rc = -1
        finally:
            job.done.set()
            job.events.put(("done", None))
            job.npu.__exit__(None, None, None)  # the NPU is free once rkllm_run returned
            self._inuse.leave()

    def _consume(self, job: _Job, request: GenerationRequest, cancel: CancelToken | None, timeout_s: float,
                 stats: GenerationStats, t0: float) -> Iterator[str]:
        """Yield the run's text from the callback's queue until ``rkllm_run`` returns; cancel, stop
        strings, the deadline and an early close abort the run. Raises EngineError as :meth:`stream`."""
        deadline = t0 + timeout_s
        run = _Run(hold=max((len(s) for s in request.stop), default=0))
        try:
            while True:
                now = self._watch(job, run, cancel, stats, deadline, timeout_s)
                try:
                    kind, value = job.events.get(timeout=min(POLL_S, max(deadline - now, 0.001)))
                except queue.Empty:
                    continue
                if kind == "done":
                    break
                piece = self._take(job, run, request, kind, value)
                if piece:
                    yield piece
            if run.pending and not run.error:
                yield run.pending
        finally:
            self._end_run(job, run, request, stats, t0)
        if run.error or (job.rc not in (0, None) and not stats.cancelled and not run.stopped):
            reason = run.error or f"rkllm_run returned {job.rc} without output (prompt longer than n_ctx={self.n_ctx}?)"
            if run.error:
                self.healthy = False
                self.last_error = reason
            raise EngineError(f"rkllm: {reason}")

    def _watch(self, job: _Job, run: _Run, cancel: CancelToken | None, stats: GenerationStats, deadline: float,
               timeout_s: float) -> float:
        """Abort on cancel (no error) or past the deadline (EngineError, engine unhealthy); returns now."""
        if cancel is not None and cancel.cancelled and not run.stopped:
            stats.cancelled = True
            run.stopped = True
            self._abort_until_done(job)
        now = time.perf_counter()
        if now >= deadline and not job.done.is_set():
            self._abort_until_done(job)
            self.healthy = False
            self.last_error = f"generation exceeded its timeout of {timeout_s:g} s"
            raise EngineError(f"rkllm: generation exceeded its timeout of {timeout_s:g} s; aborted with "
                              f"rkllm_abort, engine marked unhealthy")
        return now

    def _take(self, job: _Job, run: _Run, request: GenerationRequest, kind: str, value) -> str:
        """One callback event into ``run``; returns the text that can be shown now ("" if none).
        Text that could still be the start of a stop string is held back; a stop string aborts the run."""
        if kind == "error":
            run.error = run.error or value
        elif kind == "finish":
            run.perf = value
        elif kind == "token" and not run.stopped:
            run.n_tokens += 1
            run.last = time.perf_counter()
            if run.first is None:
                run.first = run.last
            if not value:
                return ""
            run.pending += value
            cut = _find_stop(run.pending, request.stop)
            if cut is not None:
                run.pending = run.pending[:cut]
                run.stopped = True
                self._abort_until_done(job)
            if run.stopped or not run.hold:
                emit, run.pending = run.pending, ""
            else:
                emit, run.pending = run.pending[:-run.hold], run.pending[-run.hold:]
            return emit
        return ""

    def _end_run(self, job: _Job, run: _Run, request: GenerationRequest, stats: GenerationStats, t0: float) -> None:
        """After the consumer stopped (normally, raised, or closed early): abort a run still going,
        forget the job once it returned, fill ``stats``."""
        if not job.done.is_set():  # the consumer left early (generator closed) or raised
            self._abort_until_done(job)
        if job.done.is_set():
            with self._job_lock:
                if self._job is job:
                    self._job = None
        self._fill_stats(stats, t0, run.first, run.last, run.n_tokens, run.perf)
        stats.finish_reason = ("cancelled" if stats.cancelled else
                               "length" if run.n_tokens >= request.max_tokens and not run.stopped else "stop")

    def _abort_until_done(self, job: _Job) -> None:
        """``rkllm_abort`` until ``rkllm_run`` returns or ``abort_grace_s`` passes."""
        end = time.perf_counter() + self.abort_grace_s
        while not job.done.is_set() and time.perf_counter() < end:
            self.lib.abort(self._handle)
            job.done.wait(ABORT_REPEAT_S)
        if not job.done.is_set():
            self.healthy = False
            self.last_error = f"rkllm_run did not return within {self.abort_grace_s:g} s of rkllm_abort"
            log.error("rkllm: %s; the NPU stays marked busy", self.last_error)

    def _fill_stats(self, stats: GenerationStats, t0: float, first: float | None, last: float | None,
                    n_tokens: int, perf: tuple | None) -> None:
        stats.completion_tokens = n_tokens
        stats.total_ms = 1000 * (time.perf_counter() - t0)
        stats.ttft_ms = 1000 * (first - t0) if first is not None else 0.0
        if first is not None and last is not None and n_tokens > 1 and last > first:
            stats.tokens_per_s = (n_tokens - 1) / (last - first)
        if perf is not None:
            prefill_ms, prefill_tokens, generate_ms, generate_tokens, memory_mb = perf
            stats.extra.update(prefill_ms=prefill_ms, generate_ms=generate_ms, generate_tokens=generate_tokens,
                               memory_mib=memory_mb, ttft_wall_ms=stats.ttft_ms, tokens_per_s_wall=stats.tokens_per_s)
            if prefill_tokens > 0:
                stats.prompt_tokens = prefill_tokens
            if prefill_ms > 0:
                stats.ttft_ms = prefill_ms  # NPU prefill = time to the first token's logits
            if generate_ms > 0 and generate_tokens > 0:
                stats.tokens_per_s = generate_tokens / (generate_ms / 1000)

    # ------------------------------------------------------------ health, tokens, close

    def smoke(self, timeout_s: float | None = None) -> GenerationStats:
        """A one-token generation under ``timeout_s`` seconds (default ``timeout_s`` of the engine),
        the chain's health check at start and after a cool-down (case C13: an init that succeeded
        but fails on the first token). Sets :attr:`healthy` and :attr:`last_error`.

        Returns:
            the stats of the one-token run.
        Raises:
            EngineError: the run failed, reported ``RKLLM_RUN_ERROR``, or timed out (aborted).
        """
        req = GenerationRequest(messages=[{"role": "user", "content": "Hi"}], max_tokens=1, temperature=0.0)
        try:
            for _ in self._generate(req, None, self.timeout_s if timeout_s is None else float(timeout_s)):
                pass
        except EngineError as e:
            self.healthy = False
            self.last_error = str(e)
            raise EngineError(f"rkllm smoke inference failed: {e}") from e
        self.healthy = True
        self.last_error = ""
        return self.last_stats

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text``: exact with a ``tokenizer.json``, else :func:`estimate_tokens`."""
        if self._tokenizer is not None:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
        return estimate_tokens(text)

    def close(self, wait_s: float | None = None) -> None:
        """Abort a running generation, wait for its ``rkllm_run`` to return (up to ``wait_s`` s,
        default ``abort_grace_s`` + 1), then free the model (``rkllm_destroy``). A run that has
        not returned by then keeps the model: it is destroyed when that run returns (never under
        it). Later calls raise :class:`EngineError`. Idempotent."""
        inuse = getattr(self, "_inuse", None)
        if inuse is None:  # the constructor failed before the model was loaded
            return
        self.healthy = False
        inuse.close(self._free, self.abort_grace_s + 1.0 if wait_s is None else wait_s)

    def _free(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            self.lib.destroy(handle)

    def __del__(self):  # a forgotten close() must not leave the runtime's threads and NPU memory behind
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


def _find_stop(text: str, stops: tuple[str, ...]) -> int | None:
    """Index where the earliest stop string starts in ``text``, or ``None``."""
    hits = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return min(hits) if hits else None
