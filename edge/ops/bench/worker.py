"""The child process of one LLM side of ``edge bench`` (``ours`` or ``plain``), and its protocol.

    python -m edge.ops.bench.worker SPEC_JSON

``SPEC_JSON``: ``{"side": "ours"|"plain", "model": GGUF path, "n_ctx", "threads", "n_batch",
"max_tokens", "temperature", "seed"}``. The worker loads its side, then speaks JSON lines:

- it writes ``{"ready": true, "load_ms", "peak_rss_bytes", "pid"}`` once loaded;
- each request line ``{"messages": [...]}`` gets one line with that generation's figures
  (``ttft_ms``, ``decode_tokens_per_s``, ``completion_tokens``, ``prompt_tokens``, ``total_ms``,
  ``finish_reason``, ``prefix_cache``, ``text_chars``, ``peak_rss_bytes``);
- ``{"quit": true}`` (or the end of stdin) gets ``{"bye": true, "peak_rss_bytes"}``, then it exits.

stdout carries only the protocol; llama.cpp's own prints go to stderr.
"""
from __future__ import annotations

import json
import os
import sys
import time
from typing import Callable

from drivers.sensors.procinfo import peak_rss_bytes
from edge.llm.base import GenerationRequest, generate
from edge.llm.llamacpp import MIN_P, REPEAT_PENALTY, TOP_K, TOP_P, LlamaCppEngine

Runner = Callable[[list[dict]], dict]


def ours_runner(spec: dict) -> Runner:
    """Load our engine path (:class:`LlamaCppEngine` through :func:`generate`); returns messages → figures."""
    engine = LlamaCppEngine(spec["model"], n_ctx=spec["n_ctx"], threads=spec["threads"], seed=spec["seed"],
                            n_batch=spec["n_batch"])

    def run(messages: list[dict]) -> dict:
        text, st = generate(engine, GenerationRequest(messages, max_tokens=spec["max_tokens"],
                                                      temperature=spec["temperature"]))
        return {"ttft_ms": st.ttft_ms, "decode_tokens_per_s": st.tokens_per_s,
                "completion_tokens": st.completion_tokens, "prompt_tokens": st.prompt_tokens,
                "total_ms": st.total_ms, "finish_reason": st.finish_reason,
                "prefix_cache": st.extra.get("prefix_cache"), "text_chars": len(text)}

    return run


def plain_runner(spec: dict) -> Runner:
    """Load plain llama-cpp-python (``Llama.create_chat_completion(stream=True)``, our sampling
    settings); returns messages → figures."""
    from llama_cpp import Llama

    llm = Llama(model_path=spec["model"], n_ctx=spec["n_ctx"], n_threads=spec["threads"],
                n_threads_batch=spec["threads"], n_batch=spec["n_batch"], seed=spec["seed"], use_mmap=True,
                verbose=False)

    def run(messages: list[dict]) -> dict:
        t = time.perf_counter()
        first = None
        parts: list[str] = []
        finish = None
        for chunk in llm.create_chat_completion(
                messages=messages, stream=True, max_tokens=spec["max_tokens"], temperature=spec["temperature"],
                top_k=TOP_K, top_p=TOP_P, min_p=MIN_P, repeat_penalty=REPEAT_PENALTY, seed=spec["seed"]):
            choice = chunk["choices"][0]
            piece = choice["delta"].get("content")
            if piece:
                if first is None:
                    first = time.perf_counter()
                parts.append(piece)
            finish = choice.get("finish_reason") or finish
        end = time.perf_counter()
        text = "".join(parts)
        # the stream gives text, not token ids: count by re-tokenizing the answer
        n = len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else 0
        return {"ttft_ms": 1000 * ((first or end) - t),
                "decode_tokens_per_s": (n - 1) / (end - first) if first and n > 1 and end > first else 0.0,
                "completion_tokens": n, "prompt_tokens": None, "total_ms": 1000 * (end - t),
                "finish_reason": finish, "prefix_cache": None, "text_chars": len(text)}

    return run


RUNNERS: dict[str, Callable[[dict], Runner]] = {"ours": ours_runner, "plain": plain_runner}


def main(argv: list[str] | None = None) -> int:
    """Serve the protocol of the module doc on stdin/stdout; ``argv`` = ``[SPEC_JSON]``.

    Raises:
        SystemExit: an unknown side.
    """
    spec = json.loads((sys.argv[1:] if argv is None else argv)[0])
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything a C library prints to stdout lands on stderr
    side = spec["side"]
    if side not in RUNNERS:
        raise SystemExit(f"unknown side {side!r}")
    t0 = time.perf_counter()
    run = RUNNERS[side](spec)
    load_ms = 1000 * (time.perf_counter() - t0)
    proto.write(json.dumps({"ready": True, "load_ms": load_ms, "peak_rss_bytes": peak_rss_bytes(),
                            "pid": os.getpid()}) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("quit"):
            break
        res = run(req["messages"])
        res["peak_rss_bytes"] = peak_rss_bytes()
        proto.write(json.dumps(res) + "\n")
    proto.write(json.dumps({"bye": True, "peak_rss_bytes": peak_rss_bytes()}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
