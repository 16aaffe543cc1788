"""The language-model engine interface every backend implements (llama.cpp on the CPU, RKLLM on
the NPU).

An engine generates from chat messages and *yields tokens as they come*; the final
:class:`GenerationStats` carries TTFT, decode rate and token counts. Generation can be cancelled
from another thread. ``n_ctx`` is always explicit (case C11: 0 would silently mean "the model's
training context" in llama.cpp and can exhaust memory).
"""
from __future__ import annotations

import contextlib
import logging
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterator, Protocol

from edge.errors import EdgeError


class EngineError(EdgeError):
    """An engine failed (load, init, inference or timeout); the chain moves to the next engine."""


class ContextOverflow(EngineError):
    """The prompt does not fit the context window even with every older turn trimmed: the system
    prompt plus the last user message need ``prompt_tokens`` but only ``budget`` tokens
    (``n_ctx`` minus the answer budget ``max_tokens``) are left (case C10). Not a fault of the
    engine: the chain does not move down for it; callers answer "that question is too long"."""

    def __init__(self, prompt_tokens: int, n_ctx: int, max_tokens: int):
        self.prompt_tokens = prompt_tokens
        self.n_ctx = n_ctx
        self.max_tokens = max_tokens
        self.budget = n_ctx - max_tokens
        super().__init__(
            f"the prompt needs {prompt_tokens} tokens but only {self.budget} fit (llm.n_ctx {n_ctx} "
            f"minus max_tokens {max_tokens}); shorten the question or raise llm.n_ctx")


#: :attr:`GenerationRequest.priority` values, lower first: a voice turn goes before queued HTTP API
#: generations on the NPU (:mod:`edge.llm.npulock`).
PRIORITY_VOICE, PRIORITY_API = 0, 1


@dataclass(frozen=True)
class GenerationRequest:
    """What to generate.

    ``messages``: OpenAI-style ``[{"role": "system"|"user"|"assistant", "content": str}]``.
    ``json_schema``: when set, output is constrained to JSON matching this schema (llama.cpp grammar).
    ``max_tokens``: answer budget in tokens. ``stop``: stop strings. ``temperature``: 0 = greedy.
    ``priority``: :data:`PRIORITY_VOICE` (default) or :data:`PRIORITY_API` (the HTTP API sets it).
    """

    messages: list[dict]
    max_tokens: int = 64
    json_schema: dict | None = None
    stop: tuple[str, ...] = ()
    temperature: float = 0.2
    priority: int = PRIORITY_VOICE


@dataclass
class GenerationStats:
    """Figures of one generation: ``prompt_tokens``, ``completion_tokens``; ``ttft_ms`` from the
    call to the first token; ``tokens_per_s`` decode rate after the first token; ``cancelled``;
    ``trimmed_messages``: how many oldest turns were dropped to fit n_ctx."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    ttft_ms: float = 0.0
    tokens_per_s: float = 0.0
    cancelled: bool = False
    trimmed_messages: int = 0
    extra: dict = field(default_factory=dict)
    #: why generation ended: ``stop`` (end-of-generation token or a stop string), ``length``
    #: (max_tokens reached), ``cancelled``; engines that do not set it leave ``stop``.
    finish_reason: str = "stop"
    #: ms from the call to the end of generation (0 when the engine does not measure it)
    total_ms: float = 0.0


class CancelToken:
    """Set from any thread to stop a running generation at the next token."""

    def __init__(self):
        self._ev = threading.Event()

    def cancel(self) -> None:
        self._ev.set()

    @property
    def cancelled(self) -> bool:
        return self._ev.is_set()


class LinkedCancel(CancelToken):
    """Cancelled when ``outer`` (the caller's token, may be None) is, or when ``also()`` is true
    (e.g. the engine is being closed)."""

    def __init__(self, outer: CancelToken | None, also: Callable[[], bool]):
        super().__init__()
        self._outer, self._also = outer, also

    @property
    def cancelled(self) -> bool:
        return self._ev.is_set() or self._also() or (self._outer is not None and self._outer.cancelled)


log = logging.getLogger(__name__)


class ModelInUse:
    """Who is using a loaded model, so that freeing it never pulls it from under a running call.

    Every call that touches the native model (generation, tokenizing, thread settings) runs inside
    :meth:`use`; :meth:`close` marks the model closing (generations see it through
    :attr:`closing` and stop at their next token, as if cancelled), waits up to ``wait_s`` s for
    the calls inside to leave, then runs ``free``. Calls still inside after ``wait_s`` (a decode that
    does not return) do not block the caller longer: the last of them to leave runs ``free``. Freeing
    a llama.cpp model while another thread decodes with it is a segmentation fault of the process.

    ``what``: the engine's name, for the error of a call made after :meth:`close`.
    """

    def __init__(self, what: str):
        self.what = what
        self._cond = threading.Condition()
        self._users = 0
        self._closing = False
        self._free: Callable[[], None] | None = None

    @property
    def closing(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closing

    @property
    def users(self) -> int:
        """Calls inside :meth:`use` now."""
        return self._users

    @contextlib.contextmanager
    def use(self) -> Iterator[None]:
        """``with inuse.use():`` around a call that touches the model.

        Raises:
            EngineError: the engine was closed (the model is freed or being freed).
        """
        self.enter()
        try:
            yield
        finally:
            self.leave()

    def enter(self, *, inside: bool = False) -> None:
        """One more call uses the model; :meth:`leave` when it ends. ``inside``: the caller is
        already inside :meth:`use` and hands the model to a thread of its own (allowed even while
        closing, so that the handover cannot fail half-way).

        Raises:
            EngineError: the engine was closed (unless ``inside``).
        """
        with self._cond:
            if self._closing and not inside:
                raise EngineError(f"{self.what} engine is closed (its model was freed)")
            self._users += 1

    def leave(self) -> None:
        """The end of a call counted by :meth:`enter`; the last one out after a timed-out
        :meth:`close` frees the model."""
        free = None
        with self._cond:
            self._users -= 1
            if self._users == 0:
                self._cond.notify_all()
                free, self._free = self._free, None
        if free is not None:  # close() gave up waiting: the last call out frees the model
            free()

    def close(self, free: Callable[[], None], wait_s: float) -> bool:
        """Mark closing, wait up to ``wait_s`` s for the calls inside :meth:`use`, then ``free()``.
        True when freed now; False when calls were still running (the last one frees on its way
        out) or the model was closed before (idempotent)."""
        with self._cond:
            if self._closing:
                return False
            self._closing = True
            if not self._cond.wait_for(lambda: self._users == 0, wait_s):
                self._free = free
                log.warning("%s: %d call(s) still use the model %g s after close; the last one frees it",
                            self.what, self._users, wait_s)
                return False
        free()
        return True


class Engine(Protocol):
    """``stream(request, cancel) -> Iterator[str]`` yields token texts; afterwards ``last_stats``
    holds the :class:`GenerationStats` of that call. ``n_ctx``: context window in tokens.
    ``name``: ``llamacpp`` | ``rkllm``. ``smoke(timeout_s)``: a one-token generation (raises when
    the engine does not answer). ``close()`` frees the model."""

    name: str
    n_ctx: int
    last_stats: GenerationStats

    def stream(self, request: GenerationRequest, cancel: CancelToken | None = None) -> Iterator[str]: ...

    def count_tokens(self, text: str) -> int: ...

    def smoke(self, timeout_s: float | None = None) -> GenerationStats | None: ...

    def close(self) -> None: ...


#: The one-token request of a smoke inference: proof that an engine loaded and answers.
SMOKE_REQUEST = GenerationRequest([{"role": "user", "content": "Hi"}], max_tokens=1, temperature=0.0)


class LlmEngine:
    """Base class of every engine: the runtimes (:class:`edge.llm.llamacpp.LlamaCppEngine`,
    :class:`edge.llm.rkllm.RkllmEngine`) and what the voice loop and the service hold
    (:class:`edge.llm.chain.EngineChain`, :class:`edge.llm.idle.IdleEngine`): the :class:`Engine` calls plus the life-cycle calls the loop
    makes, with the defaults of an engine that is simply loaded. Subclasses implement
    :meth:`stream` and :meth:`count_tokens` and set ``name``, ``n_ctx`` and ``last_stats``."""

    name: str = "engine"
    model: str = ""  # what was loaded (a model id or path), for status
    n_ctx: int = 0
    last_stats: GenerationStats

    def stream(self, request: GenerationRequest, cancel: CancelToken | None = None) -> Iterator[str]:
        raise NotImplementedError

    def count_tokens(self, text: str) -> int:
        raise NotImplementedError

    def close(self) -> None:
        """Free the model (nothing to free here)."""

    def smoke(self, timeout_s: float | None = None) -> GenerationStats | None:
        """One token through the engine (:data:`SMOKE_REQUEST`); its stats, or None when nothing had
        to be generated now (a chain whose steps were smoke-tested as they were brought up).
        ``timeout_s``: for engines that bound it themselves (here: not bounded).

        Raises:
            EngineError (or what the runtime raises): the engine did not answer.
        """
        for _ in self.stream(SMOKE_REQUEST):
            pass
        return self.last_stats

    @property
    def serving(self) -> str:
        """What answers requests now, for the service's READY line (here: ``name``)."""
        return self.name

    def status(self) -> list[dict]:
        """The steps that can answer, for ``/healthz`` and the console: one dict per step
        (``index``, ``engine``, ``model``, ``n_ctx``, ``state``, ``reason``, ``active``, ``failures``).
        Here: this engine, loaded and healthy."""
        return [{"index": 0, "engine": self.name, "model": self.model, "n_ctx": self.n_ctx,
                 "state": "healthy", "reason": "", "active": True, "failures": 0}]

    def tick(self) -> bool:
        """Called about once a second while the loop listens; True when it unloaded the model
        (:class:`edge.llm.idle.IdleEngine`). Here: nothing to do, False."""
        return False

    def take_reload_ms(self) -> float | None:
        """ms the requests since the last call spent loading the model again after an idle
        unload, or None (here: always None, the model stays loaded); clears it."""
        return None


def generate(engine: Engine, request: GenerationRequest, cancel: CancelToken | None = None) -> tuple[str, GenerationStats]:
    """Run :meth:`Engine.stream` to the end; the whole text and its stats."""
    text = "".join(engine.stream(request, cancel))
    return text, engine.last_stats


def fit_messages(messages: list[dict], n_ctx: int, max_tokens: int, measure, cancel: CancelToken | None = None):
    """Trim the oldest non-system turns until the prompt fits ``n_ctx - max_tokens`` (case C10).

    Leading ``system`` messages and the last message are always kept; after a drop, a history
    that would start with an ``assistant`` turn loses that turn too. ``measure(messages)`` returns
    ``(prompt, n_tokens)`` for the engine's own rendering and tokenizer; fewer messages never
    measure more. A user or assistant turn with text is one token at least, so the turns beyond the
    budget's count are dropped unmeasured; the fewest further drops are found by bisection: about
    log2(messages) + 1 measures, each linear in the prompt kept, so 10,000 short messages in a
    1,024-token context cost some 10 renderings of at most ~1,000 messages. Returns
    ``(messages kept, prompt, n_tokens, number of messages dropped)``, or None when ``cancel``
    was set between two measures.

    Raises:
        ContextOverflow: even the system prompt plus the last message do not fit.
        ValueError: ``messages`` is empty.
    """
    if not messages:
        raise ValueError("a generation request needs at least one message")
    n_sys = 0
    while n_sys < len(messages) - 1 and messages[n_sys].get("role") == "system":
        n_sys += 1
    system, rest = list(messages[:n_sys]), list(messages[n_sys:])
    budget = n_ctx - max_tokens

    def start(k: int) -> int:  # where the history begins after dropping k turns (and assistant turns after them)
        while 0 < k < len(rest) - 1 and rest[k].get("role") == "assistant":
            k += 1
        return k

    # a user or assistant turn with text renders one token at least: a history of more such turns than
    # the budget cannot fit, so those drops are decided without rendering 10,000 messages
    spoken = [m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str) and m["content"] != ""
              for m in rest]
    must, left = 0, sum(spoken)
    while left > budget and must < len(rest) - 1:
        left -= spoken[must]
        must += 1
    if must == 0:
        prompt, n = measure(system + rest)
        if n <= budget:
            return system + rest, prompt, n, 0
    else:
        n = left
    lo, hi = max(1, must), len(rest) - 1  # the fewest drops that fit lie in [lo, hi]; hi is tried last
    best = None
    while lo <= hi:
        if cancel is not None and cancel.cancelled:
            return None
        mid = (lo + hi) // 2
        first = start(mid)
        prompt_m, n_m = measure(system + rest[first:])
        if n_m <= budget:
            best, hi = (first, prompt_m, n_m), mid - 1
        else:
            lo = mid + 1
            n = n_m
    if best is None:
        raise ContextOverflow(n, n_ctx, max_tokens)
    first, prompt, n = best
    return system + rest[first:], prompt, n, first
