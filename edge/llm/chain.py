"""The LLM fallback chain: the NPU first, the CPU next, the grammar path last (issue 4, case C13).

A chain is an ordered list of steps from the config (``llm.chain``), for example::

    rkllm qwen2.5-3b-instruct-w8a8-rk3588 → llamacpp qwen2.5-3b-instruct-q4_k_m
        → llamacpp qwen2.5-1.5b-instruct-q4_k_m → grammar

Rules:

* **Start** (:meth:`EngineChain.start`): steps are loaded in order and each gets a one-token
  *smoke* inference under ``llm.smoke_timeout_s``; the first healthy step serves. Steps below it
  stay ``unloaded`` (loading every model at once would not fit a 4–8 GB board); one is loaded, and
  smoke-tested, when the chain first needs it.
* **Failure during a request**: an :class:`EngineError` (or a step producing no token for its
  ``timeout_s``: a hang, which the chain's watchdog turns into an error and cancels) marks the step
  ``unhealthy`` and the request is retried on the next step. Failures before the first token are
  invisible to the caller; after text was already streamed, :meth:`stream` raises
  :class:`EngineError` (the next request uses the next step) and :meth:`generate` retries the whole
  answer. :class:`ContextOverflow` and ``ValueError`` are the request's fault, not the engine's:
  they propagate and nobody moves.
* **Grammar only**: below the last LLM step; :meth:`stream` raises :class:`NoEngine`, callers
  answer from the grammar path.
* **Back up**: at the start of a request, when a step above the active one failed more than
  ``llm.cooldown_s`` ago, it is probed (reloaded if needed, smoke-tested); healthy → it serves from
  that request on and the steps below it are released (``unloaded``) to free memory.
* Steps that cannot constrain output to a JSON schema (RKLLM) are skipped, not failed, for
  requests with ``json_schema``.

Every move is logged (logger ``edge.llm.chain``) with its reason and kept in :attr:`moves`;
:meth:`status` lists each step's state (``healthy`` | ``unhealthy`` | ``unloaded``), reason and
whether it is active.
"""
from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from drivers.npu.node import as_node_list
from edge.llm.base import (
    CancelToken,
    ContextOverflow,
    EngineError,
    GenerationRequest,
    GenerationStats,
    LlmEngine,
)
from edge.llm.llamacpp import LlamaCppEngine
from edge.llm.npuworker import RkllmWorkerEngine
from edge.models.local import find_model

log = logging.getLogger(__name__)

#: Loading a model runs under this timeout (s): a 4 GB file read at 10 MB/s from a slow SD card
#: takes ~400 s; a runtime whose init never returns must not block the service forever.
LOAD_TIMEOUT_S = 600.0
#: Default ``timeout_s`` per engine (s without a token before a step counts as hung): RKLLM's own
#: run timeout (edge.llm.rkllm); for llama.cpp a hang is rare and a slow prompt is not one: 300 s
#: lets a 2,048-token prompt decode at 7 tokens/s (a 3B model on a busy 4-core board).
DEFAULT_TIMEOUT_S = {"rkllm": 60.0, "llamacpp": 300.0}
HEALTHY, UNHEALTHY, UNLOADED = "healthy", "unhealthy", "unloaded"


class NoEngine(EngineError):
    """Every LLM step of the chain is unhealthy: answer with the grammar path only."""


@dataclass(frozen=True)
class StepSpec:
    """What one step runs: ``engine`` (``rkllm`` | ``llamacpp`` | ``grammar``), ``model`` (manifest
    id or path), ``n_ctx`` (tokens), ``threads`` (llama.cpp CPU threads), ``lib`` (path of
    librkllmrt.so), ``timeout_s`` (s without a token before the step counts as hung),
    ``smoke_timeout_s`` (s for its smoke inference; None = the chain's), plus the shared ``seed``,
    ``prefix_states``, ``models_dir``, ``soc`` and the board's NPU node(s) and group (``npu_nodes``,
    ``npu_group``: checked before the NPU runtime starts, case C07) and the system-wide NPU lock file
    (``npu_lock``, :mod:`edge.llm.npulock`)."""

    engine: str
    model: str | None = None
    n_ctx: int | None = None
    threads: int = 1  # unplanned: one (a busy machine never has a thread pool spinning on it)
    lib: str | None = None
    timeout_s: float | None = None
    smoke_timeout_s: float | None = None
    seed: int = 7
    prefix_states: int = 2
    models_dir: Path | None = None
    soc: str | None = None
    npu_nodes: tuple[str, ...] = ()
    npu_group: str | None = None
    npu_lock: str | None = None

    @property
    def label(self) -> str:
        return self.engine if self.engine == "grammar" else f"{self.engine}:{self.model}"

    @property
    def watchdog_s(self) -> float:
        """``timeout_s``, or the engine's default (:data:`DEFAULT_TIMEOUT_S`)."""
        return self.timeout_s if self.timeout_s is not None else DEFAULT_TIMEOUT_S.get(self.engine, 300.0)


def default_factory(spec: StepSpec):
    """Build the engine of ``spec`` (loads the model).

    Raises:
        EngineError / FileNotFoundError / ValueError: as the engine's constructor does.
    """
    if spec.engine == "llamacpp":
        return LlamaCppEngine(spec.model, n_ctx=spec.n_ctx, threads=spec.threads, seed=spec.seed,
                              prefix_states=spec.prefix_states, models_dir=spec.models_dir)
    if spec.engine == "rkllm":
        kwargs = {"library": spec.lib, "timeout_s": spec.watchdog_s, "npu_lock": spec.npu_lock}
        if spec.soc:
            kwargs["soc"] = spec.soc
        if spec.npu_nodes:
            kwargs.update(npu_nodes=list(spec.npu_nodes), npu_group=spec.npu_group)
        # in a worker process: a job past its deadline is killed, not left holding the NPU
        return RkllmWorkerEngine(find_model(spec.model, spec.models_dir), spec.n_ctx, **kwargs)
    raise ValueError(f"unknown engine {spec.engine!r}; one of rkllm, llamacpp, grammar")


def specs_from_settings(settings) -> list[StepSpec]:
    """The chain's steps from :class:`edge.config.Settings`: ``llm.chain``, or, when it is empty,
    the single engine of ``llm.engine``/``llm.model``/``llm.n_ctx``. Steps after a ``grammar``
    step are dropped (the chain ends there). A ``llamacpp`` step without ``model``/``n_ctx`` takes
    ``llm.model``/``llm.n_ctx`` (a board's chain names its NPU model and leaves the CPU model to ``llm.model``)."""
    llm = settings.llm
    board = getattr(settings, "board", None)
    soc = getattr(board, "soc", None) if board is not None else None
    models_dir = getattr(getattr(settings, "models", None), "dir", None)
    npu = getattr(board, "npu", None) if board is not None else None
    npu = npu if isinstance(npu, dict) else {}
    nodes = as_node_list(npu.get("device_node")) + as_node_list(npu.get("alt_device_nodes"))
    common = dict(seed=llm.seed, prefix_states=llm.prefix_states, models_dir=models_dir, soc=soc,
                  npu_nodes=tuple(nodes), npu_group=npu.get("device_group"), npu_lock=getattr(llm, "npu_lock", None))
    if not llm.chain:
        if llm.engine == "none":
            return []
        return [StepSpec(llm.engine, llm.model, llm.n_ctx, threads=llm.threads, **common)]
    out = []
    for s in llm.chain:
        if s.engine == "grammar":
            break
        model, n_ctx = (s.model or llm.model, s.n_ctx or llm.n_ctx) if s.engine == "llamacpp" else (s.model, s.n_ctx)
        out.append(StepSpec(s.engine, model, n_ctx, threads=s.threads or llm.threads, lib=s.lib,
                            timeout_s=s.timeout_s, **common))
    return out


@dataclass
class Step:
    """A step's live state (see :meth:`EngineChain.status`)."""

    index: int
    spec: StepSpec
    state: str = UNLOADED
    reason: str = "not loaded yet"
    engine: object | None = None
    failed_at: float | None = None
    since: float = 0.0
    busy: threading.Thread | None = None  # a hung load/smoke/generation still running
    failures: int = 0


class _LinkedCancel(CancelToken):
    """Cancelled when either the caller's token or the chain's watchdog says so."""

    def __init__(self, outer: CancelToken | None):
        super().__init__()
        self._outer = outer

    @property
    def own_cancelled(self) -> bool:
        """Cancelled by the chain (its watchdog, or the consumer stopped), not by the caller."""
        return super().cancelled

    @property
    def cancelled(self) -> bool:
        return self.own_cancelled or (self._outer is not None and self._outer.cancelled)


_DONE = object()


class EngineChain(LlmEngine):
    """Engines in fallback order; itself an :class:`edge.llm.base.LlmEngine`.

    Args:
        specs: the LLM steps, best first (the grammar step is implicit at the end).
        factory: ``StepSpec -> engine`` (default :func:`default_factory`).
        cooldown_s: s after a step failed before it is probed again.
        smoke_timeout_s: s for a step's one-token smoke inference.
        clock: monotonic seconds (tests may pass their own).
    """

    name = "chain"

    def __init__(self, specs: list[StepSpec], *, factory: Callable[[StepSpec], object] | None = None,
                 cooldown_s: float = 60.0, smoke_timeout_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic):
        self.steps = [Step(i, s) for i, s in enumerate(specs)]
        self.factory = factory or default_factory
        self.cooldown_s = float(cooldown_s)
        self.smoke_timeout_s = float(smoke_timeout_s)
        self.clock = clock
        self.moves: deque[dict] = deque(maxlen=200)
        self.last_stats = GenerationStats()
        self._active: Step | None = None
        self._lock = threading.RLock()
        self._started = False

    @classmethod
    def from_settings(cls, settings, factory=None) -> "EngineChain":
        """A chain for :class:`edge.config.Settings` (not started)."""
        return cls(specs_from_settings(settings), factory=factory, cooldown_s=settings.llm.cooldown_s,
                   smoke_timeout_s=settings.llm.smoke_timeout_s)

    # -- state -----------------------------------------------------------------------------------
    @property
    def active(self) -> Step | None:
        """The serving step, or None for grammar only."""
        return self._active

    @property
    def active_engine(self):
        """The serving engine object (e.g. for ``set_threads``), or None."""
        return self._active.engine if self._active else None

    def set_threads(self, threads: int) -> bool:
        """The serving engine's ``set_threads`` (llama.cpp); True when applied or nothing to apply
        (grammar only, an engine without CPU threads), False when it is decoding right now."""
        eng = self.active_engine
        setter = getattr(eng, "set_threads", None)
        return setter(threads) if setter is not None else True

    @property
    def n_ctx(self) -> int:
        eng = self.active_engine
        return eng.n_ctx if eng is not None else 0

    @property
    def serving(self) -> str:
        """The active step's label (``llamacpp:<model>``), or ``grammar``."""
        return self._active.spec.label if self._active else "grammar"

    def smoke(self, timeout_s: float | None = None) -> GenerationStats | None:
        """Start the chain if it was not started: each step gets its one-token smoke inference as it
        is brought up (under its own smoke timeout; ``timeout_s`` is not used). Returns None (no
        token generated now).

        Raises:
            NoEngine: no LLM step passed its smoke inference (the grammar path answers alone).
        """
        with self._lock:
            if not self._started:
                self.start()
            if self._active is None:
                raise NoEngine("no LLM step of the chain passed its smoke inference")
        return None

    def status(self) -> list[dict]:
        """One dict per step, grammar last: ``index``, ``engine``, ``model``, ``n_ctx``, ``state``
        (``healthy`` | ``unhealthy`` | ``unloaded``), ``reason``, ``active``, ``failures``."""
        out = []
        for st in self.steps:
            out.append({"index": st.index, "engine": st.spec.engine, "model": st.spec.model, "n_ctx": st.spec.n_ctx,
                        "state": st.state, "reason": st.reason, "active": st is self._active,
                        "failures": st.failures})
        out.append({"index": len(self.steps), "engine": "grammar", "model": None, "n_ctx": None, "state": HEALTHY,
                    "reason": "always available", "active": self._active is None, "failures": 0})
        return out

    def _set(self, st: Step, state: str, reason: str) -> None:
        st.state, st.reason, st.since = state, reason, self.clock()
        if state == UNHEALTHY:
            st.failed_at = st.since
            st.failures += 1

    def _move(self, to: Step | None, reason: str) -> None:
        frm = self._active
        if frm is to:
            return
        self._active = to
        rec = {"from": frm.spec.label if frm else "grammar", "to": to.spec.label if to else "grammar",
               "reason": reason, "at": self.clock()}
        self.moves.append(rec)
        log.warning("llm chain: %s -> %s: %s", rec["from"], rec["to"], reason)

    # -- loading and health ----------------------------------------------------------------------
    def _in_thread(self, fn, timeout_s: float, what: str, st: Step):
        """Run ``fn`` on a daemon thread; its result, or EngineError on an exception or timeout."""
        box: dict = {}

        def run():
            try:
                box["value"] = fn()
            except BaseException as e:  # noqa: BLE001 - reported to the caller below
                box["error"] = e

        t = threading.Thread(target=run, daemon=True, name=f"llm-{what}-{st.index}")
        t.start()
        t.join(timeout_s)
        if t.is_alive():
            st.busy = t
            raise EngineError(f"{what} did not finish within {timeout_s:g} s (hung)")
        if "error" in box:
            e = box["error"]
            raise EngineError(f"{what} failed: {type(e).__name__}: {e}") from e
        return box.get("value")

    def _smoke(self, st: Step) -> None:
        eng = st.engine
        timeout = st.spec.smoke_timeout_s if st.spec.smoke_timeout_s is not None else self.smoke_timeout_s

        def run():
            return eng.smoke(timeout)

        # Engines with their own timeout (RKLLM aborts the run) get a grace period to report it.
        self._in_thread(run, timeout + max(1.0, 0.25 * timeout), "smoke inference", st)

    def _bring_up(self, st: Step) -> bool:
        """Load (if needed) and smoke-test ``st``; True when healthy. Never raises."""
        if st.busy is not None and st.busy.is_alive():
            self._set(st, UNHEALTHY, "a hung job of this engine is still running; not probed")
            return False
        st.busy = None
        if st.engine is None:
            try:
                st.engine = self._in_thread(lambda: self.factory(st.spec), LOAD_TIMEOUT_S, "load", st)
            except EngineError as e:
                self._set(st, UNHEALTHY, str(e))
                log.warning("llm chain: %s: %s", st.spec.label, e)
                return False
        try:
            self._smoke(st)
        except EngineError as e:
            self._set(st, UNHEALTHY, str(e))
            log.warning("llm chain: %s: %s", st.spec.label, e)
            if st.busy is None:  # a failed (not hung) engine is closed to free its memory
                self._release(st, UNHEALTHY, str(e))
            return False
        self._set(st, HEALTHY, "smoke inference ok")
        return True

    def _release(self, st: Step, state: str, reason: str) -> None:
        eng, st.engine = st.engine, None
        if eng is not None:
            try:
                eng.close()
            except Exception as e:  # noqa: BLE001 - releasing must not fail the chain
                log.warning("llm chain: closing %s failed: %s", st.spec.label, e)
        st.state, st.reason = state, reason

    def start(self) -> "EngineChain":
        """Bring up steps in order until one is healthy; it serves. Returns self."""
        with self._lock:
            self._started = True
            for st in self.steps:
                if self._bring_up(st):
                    self._move(st, f"start: {st.spec.label} passed its smoke inference")
                    return self
            why = "no LLM step passed its smoke inference" if self.steps else "no LLM step configured"
            self.moves.append({"from": "start", "to": "grammar", "reason": f"start: {why}; grammar only",
                               "at": self.clock()})
            log.warning("llm chain: start: %s; grammar only", why)
        return self

    def _next_after(self, failed: Step | None, need_schema: bool) -> Step | None:
        start = failed.index + 1 if failed else 0
        for st in self.steps[start:]:
            if need_schema and not _supports_schema(st):
                continue
            if st.state == HEALTHY and st.engine is not None:
                return st
            if st.state == UNLOADED and self._bring_up(st):
                return st
        return None

    def probe(self) -> bool:
        """Smoke-test steps above the active one whose cool-down has passed; move up to the first
        healthy one (releasing the steps below it). True when the chain moved."""
        with self._lock:
            top = self._active.index if self._active else len(self.steps)
            now = self.clock()
            for st in self.steps[:top]:
                if st.state == HEALTHY and st.engine is not None:
                    target = st
                elif st.failed_at is not None and now - st.failed_at < self.cooldown_s:
                    continue
                elif self._bring_up(st):
                    target = st
                else:
                    continue
                self._move(target, f"probe: {target.spec.label} passed its smoke inference after the cool-down")
                for lower in self.steps[target.index + 1:]:
                    if lower.engine is not None and (lower.busy is None or not lower.busy.is_alive()):
                        self._release(lower, UNLOADED, f"released after moving up to {target.spec.label}")
                return True
            return False

    def _due_probe(self) -> bool:
        top = self._active.index if self._active else len(self.steps)
        now = self.clock()
        return any(st.failed_at is not None and now - st.failed_at >= self.cooldown_s for st in self.steps[:top])

    def fail(self, st: Step, reason: str) -> None:
        """Mark ``st`` unhealthy and move the chain past it (also used by the governor)."""
        with self._lock:
            self._set(st, UNHEALTHY, reason)
            if st is self._active:
                nxt = self._next_after(st, need_schema=False)
                self._move(nxt, f"{st.spec.label} failed: {reason}")

    # -- generation ------------------------------------------------------------------------------
    def _watched(self, st: Step, request: GenerationRequest, cancel: CancelToken | None) -> Iterator[str]:
        """The step's stream, produced on a worker thread; EngineError when no piece arrives for
        ``timeout_s`` (the job is cancelled and the thread left to end on its own)."""
        eng = st.engine
        inner = _LinkedCancel(cancel)
        q: queue.Queue = queue.Queue()

        def produce():
            try:
                for piece in eng.stream(request, inner):
                    q.put(("piece", piece))
                    if inner.own_cancelled:
                        break
                q.put(("done", None))
            except BaseException as e:  # noqa: BLE001 - handed to the consumer
                q.put(("error", e))

        t = threading.Thread(target=produce, daemon=True, name=f"llm-gen-{st.index}")
        t.start()
        try:
            while True:
                try:
                    kind, val = q.get(timeout=st.spec.watchdog_s)
                except queue.Empty:
                    inner.cancel()
                    st.busy = t
                    raise EngineError(f"no token for {st.spec.watchdog_s:g} s (hung); cancelled") from None
                if kind == "piece":
                    yield val
                elif kind == "done":
                    return
                else:
                    raise val
        finally:
            inner.cancel()  # the consumer stopped early, or we are done: let the producer end

    def stream(self, request: GenerationRequest, cancel: CancelToken | None = None) -> Iterator[str]:
        """Yield the answer from the first healthy step, moving down the chain on failures.

        Raises:
            NoEngine: no LLM step is healthy (grammar only).
            ContextOverflow: the question does not fit (case C10); nobody moves.
            ValueError: a malformed request; nobody moves.
            EngineError: a step failed after text was already yielded (the chain has moved).
        """
        with self._lock:
            if not self._started:
                self.start()
            if self._due_probe():
                self.probe()
            st = self._active
            need_schema = request.json_schema is not None
            if st is not None and need_schema and not _supports_schema(st):
                st = self._next_after(st, need_schema=True)
        fallbacks = 0
        while True:
            if st is None:
                raise NoEngine("no healthy LLM engine in the chain; answering from the grammar path only")
            emitted = 0
            try:
                for piece in self._watched(st, request, cancel):
                    emitted += 1
                    yield piece
            except (ContextOverflow, ValueError):
                raise
            except Exception as e:  # EngineError, or anything a broken runtime throws
                reason = f"request failed: {type(e).__name__}: {e}" if not isinstance(e, EngineError) else f"request failed: {e}"
                with self._lock:
                    self._set(st, UNHEALTHY, reason)
                    nxt = self._next_after(st, need_schema)
                    if st is self._active:
                        self._move(nxt, f"{st.spec.label} {reason}")
                if emitted:
                    raise EngineError(f"{st.spec.label} failed after {emitted} pieces of the answer ({e}); "
                                      f"the next request uses {nxt.spec.label if nxt else 'the grammar path'}") from e
                st = nxt
                fallbacks += 1
                continue
            stats = dataclasses.replace(st.engine.last_stats)
            stats.extra = dict(stats.extra, engine=st.spec.engine, model=st.spec.model, step=st.index,
                               fallbacks=fallbacks)
            self.last_stats = stats
            return

    def generate(self, request: GenerationRequest, cancel: CancelToken | None = None) -> tuple[str, GenerationStats]:
        """The whole answer and its stats; a step failing mid-answer is retried on the next step
        from the start (nothing was shown to anyone yet)."""
        while True:
            parts: list[str] = []
            try:
                for piece in self.stream(request, cancel):
                    parts.append(piece)
            except NoEngine:
                raise
            except (ContextOverflow, ValueError):
                raise
            except EngineError:
                if parts:
                    continue  # the chain moved; start the answer again on the next step
                raise
            return "".join(parts), self.last_stats

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` for the active engine. Raises :class:`NoEngine` when grammar only."""
        eng = self.active_engine
        if eng is None:
            raise NoEngine("no healthy LLM engine in the chain")
        return eng.count_tokens(text)

    def close(self) -> None:
        """Close every loaded engine (hung ones are left to their threads)."""
        with self._lock:
            for st in self.steps:
                if st.engine is not None and (st.busy is None or not st.busy.is_alive()):
                    self._release(st, UNLOADED, "closed")
            self._active = None


def _supports_schema(st: Step) -> bool:
    eng = st.engine
    if eng is not None and hasattr(eng, "supports_json_schema"):
        return bool(eng.supports_json_schema)
    return st.spec.engine != "rkllm"  # RKLLM samples on the NPU; no grammar constraint there


def build_chain(settings, factory=None) -> EngineChain | None:
    """A started chain for the settings, or None for ``llm.engine: none`` without a chain."""
    specs = specs_from_settings(settings)
    if not specs and not settings.llm.chain:
        return None
    return EngineChain(specs, factory=factory, cooldown_s=settings.llm.cooldown_s,
                       smoke_timeout_s=settings.llm.smoke_timeout_s).start()


__all__ = ["EngineChain", "NoEngine", "Step", "StepSpec", "build_chain", "default_factory", "specs_from_settings",
           "HEALTHY", "UNHEALTHY", "UNLOADED", "LOAD_TIMEOUT_S"]
