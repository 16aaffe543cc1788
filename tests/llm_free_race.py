"""Free the real SmolLM2 model while another thread still uses it, in its own process (a model
freed under a running decode is a segmentation fault that would take pytest down with it).

    python tests/llm_free_race.py SCENARIO

Scenarios (each prints ``OK <facts>`` and exits 0 when the process survived):

* ``engine``: :meth:`LlamaCppEngine.close` while a generation thread decodes.
* ``chain``: the consumer of :meth:`EngineChain.stream` leaves after its first piece (its producer
  thread still decodes) and the chain is closed at once (what the API's shutdown does).
* ``idle``: an idle unload (:class:`IdleUnloader` ``tick``) right after the consumer left.
* ``tokens``: ``count_tokens`` in a loop on another thread while the engine is closed.
"""
from __future__ import annotations

import sys
import threading
from pathlib import Path

MODEL = "smollm2-135m-instruct-q4_1"
STORY = [{"role": "user", "content": "Write a long story about a dragon who guards a workshop."}]


def _request(messages=STORY, max_tokens: int = 400):
    from edge.llm.base import GenerationRequest

    return GenerationRequest(messages, max_tokens=max_tokens, temperature=0.8)


def engine_close() -> str:
    from edge.llm.base import EngineError
    from edge.llm.llamacpp import LlamaCppEngine

    e = LlamaCppEngine(MODEL, n_ctx=1024, threads=2)
    first, out = threading.Event(), {}

    def run():
        pieces = 0
        for _ in e.stream(_request()):
            pieces += 1
            first.set()
        out["pieces"], out["finish"] = pieces, e.last_stats.finish_reason

    t = threading.Thread(target=run, name="gen")
    t.start()
    first.wait()
    e.close()
    ended_before_return = not t.is_alive()
    t.join()
    try:
        e.count_tokens("hello")
        after = "answered"
    except EngineError:
        after = "refused"
    return f"finish={out['finish']} ended_before_close_returned={ended_before_return} after_close={after}"


def _chain():
    from edge.llm.chain import EngineChain, StepSpec

    return EngineChain([StepSpec("llamacpp", MODEL, 1024)]).start()


def chain_close() -> str:
    chain = _chain()
    gen = chain.stream(_request())
    next(gen)
    gen.close()  # the consumer left: the chain's producer thread is still decoding (or trimming)
    chain.close()
    return f"status={chain.status()[0]['state']}"


def idle_unload() -> str:
    from edge.governor.idle import IdleUnloader
    from edge.llm.idle import IdleEngine

    now = [0.0]
    unloader = IdleUnloader(_chain, 1.0, clock=lambda: now[0])
    eng = IdleEngine(unloader)
    gen = eng.stream(_request())
    next(gen)
    gen.close()
    now[0] += 10.0
    unloaded = unloader.tick()
    return f"unloaded={unloaded}"


def tokens() -> str:
    from edge.llm.base import EngineError
    from edge.llm.llamacpp import LlamaCppEngine

    e = LlamaCppEngine(MODEL, n_ctx=1024, threads=2)
    text = "bolts and washers " * 2000
    counted, refused = [0], []
    started = threading.Event()

    def run():
        while True:
            try:
                e.count_tokens(text)
            except EngineError as err:
                refused.append(str(err))
                return
            counted[0] += 1
            started.set()

    t = threading.Thread(target=run)
    t.start()
    started.wait()
    e.close()
    t.join()
    return f"refused={bool(refused)}"


SCENARIOS = {"engine": engine_close, "chain": chain_close, "idle": idle_unload,
             "tokens": tokens}


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    print("OK", SCENARIOS[sys.argv[1]](), flush=True)
