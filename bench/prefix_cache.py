"""First-turn vs second-turn TTFT of the llama.cpp engine with a ~300-token system prompt.

    .venv/bin/python bench/prefix_cache.py [--reps 5] [--out bench/results/llm_prefix_cache.json]

Per repetition, on one engine (SmolLM2-135M-Instruct Q4_1, n_ctx 2048, 2 threads), each a 4-token
answer to a different question:

``no_cache``  ``prefix_states=0`` engine with its KV cache cleared: the whole prompt is decoded
              (what every turn cost before; the baseline);
``cold``      first turn, KV cache and saved states cleared: the system prompt is decoded and its
              state saved (``prefix_cache: saved``), then the question;
``warm``      second turn, same system prompt, another question: llama-cpp-python's prefix reuse
              keeps the system prompt's KV cache (``reused``), only the question is decoded;
``restored``  after a request with another system prompt evicted the KV cache, the saved state is
              loaded (``restored``) instead of decoding the system prompt again.

Reports medians and the ratios warm/no_cache and restored/no_cache (lower is better). TTFT is from
the call to the first sampled token (edge.llm.llamacpp). The machine's load average is recorded:
on a shared 2-core machine other work inflates every figure.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from edge.llm.base import GenerationRequest, generate  # noqa: E402
from edge.llm.llamacpp import LlamaCppEngine  # noqa: E402

MODEL = "smollm2-135m-instruct-q4_1"
SYSTEM = (
    "You are the voice assistant of a workshop stock room. You answer questions from the people who work "
    "there, by voice, so every answer must be short, plain and easy to speak aloud: at most two sentences, "
    "no lists, no markdown, no emoji, no abbreviations that are hard to pronounce. The stock room keeps "
    "fasteners, tools, safety gear, electrical parts and consumables on shelves A to F and in numbered bins. "
    "When someone asks where something is, name the shelf or bin. When someone asks how many are left, say "
    "the number and the unit. If you do not know, say so in one sentence and suggest asking the store "
    "keeper. Never invent part numbers. Never promise deliveries. Be polite but brief. Examples of items: "
    "M8 bolts 30 mm in bin 12, M8 washers in bin 13, cable ties 200 mm on shelf B, nitrile gloves size L on "
    "shelf C, safety goggles on shelf C, 6 mm drill bits in bin 4, 5 A fuses in bin 22, white paint on "
    "shelf F, A4 paper on shelf E, 10 mm spanners in bin 7. Quantities are counted in pieces, boxes, pairs, "
    "litres or packs as the inventory says. The people you talk to are busy, wearing gloves, often in a "
    "noisy room, so keep it short and repeat the key number at the end when it helps. Answer in English.")
OTHER = "You are a poet. Answer every question with a short rhyme about the sea and its ships. " * 6
QUESTIONS = ["Where are the M8 bolts?", "Do we have safety goggles?", "What are cable ties for?",
             "How do I ask for more paint?", "Which shelf has the gloves?", "What is a spanner?",
             "Can you order drill bits?", "Where do fuses go?"]


def ttft(engine, system: str, question: str) -> tuple[float, str]:
    req = GenerationRequest([{"role": "system", "content": system}, {"role": "user", "content": question}],
                            max_tokens=4, temperature=0.0)
    _, stats = generate(engine, req)
    return stats.ttft_ms, stats.extra.get("prefix_cache", "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "llm_prefix_cache.json"))
    args = ap.parse_args(argv)

    load_before = os.getloadavg()
    eng = LlamaCppEngine(MODEL, n_ctx=2048, threads=args.threads, prefix_states=2)
    base = LlamaCppEngine(MODEL, n_ctx=2048, threads=args.threads, prefix_states=0)
    sys_tokens = len(eng.llm.tokenize(eng.render([{"role": "system", "content": SYSTEM}], False).encode(),
                                      add_bos=False, special=True))
    rows = []
    for r in range(args.reps):
        q = [QUESTIONS[(2 * r + i) % len(QUESTIONS)] for i in range(3)]
        base.llm.reset()
        no_cache, how0 = ttft(base, SYSTEM, q[0])
        eng.llm.reset()
        eng._states.clear()
        cold, how1 = ttft(eng, SYSTEM, q[0])
        warm, how2 = ttft(eng, SYSTEM, q[1])
        ttft(eng, OTHER, q[2])  # another system prompt evicts the KV cache
        restored, how3 = ttft(eng, SYSTEM, q[2])
        assert (how1, how2, how3) == ("saved", "reused", "restored"), (how1, how2, how3)
        rows.append({"no_cache_ms": round(no_cache, 1), "cold_ms": round(cold, 1), "warm_ms": round(warm, 1),
                     "restored_ms": round(restored, 1)})
        print(rows[-1], flush=True)
    med = {k: round(statistics.median(x[k] for x in rows), 1) for k in rows[0]}
    import llama_cpp

    result = {
        "what": "TTFT of SmolLM2-135M Q4_1 with a ~300-token system prompt: first turn vs later turns",
        "model": MODEL, "n_ctx": 2048, "threads": args.threads, "system_prompt_tokens": sys_tokens,
        "answer_tokens": 4, "reps": args.reps, "median_ms": med,
        "ratio_warm_vs_no_cache": round(med["warm_ms"] / med["no_cache_ms"], 3),
        "ratio_restored_vs_no_cache": round(med["restored_ms"] / med["no_cache_ms"], 3),
        "ratio_warm_vs_cold": round(med["warm_ms"] / med["cold_ms"], 3),
        "rows": rows,
        "machine": {"cpu": _cpu(), "cores": os.cpu_count(), "python": platform.python_version(),
                    "llama_cpp_python": llama_cpp.__version__,
                    "loadavg_before": [round(x, 2) for x in load_before],
                    "loadavg_after": [round(x, 2) for x in os.getloadavg()]},
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("median_ms", "ratio_warm_vs_no_cache", "ratio_restored_vs_no_cache",
                                             "system_prompt_tokens")}))
    eng.close()
    base.close()
    return 0


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    sys.exit(main())
