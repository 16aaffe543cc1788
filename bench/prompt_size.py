"""LLM intent prompt size against the inventory size: the prompt lists a shortlist, never the
inventory, so 10, 200 and 2,000 items give prompts of about the same size, and a short question
always fits ``n_ctx``.

For each inventory size and each question, the first attempt's chat (system prompt + question,
through SmolLM2's chat template) is counted with the real SmolLM2-135M tokenizer (llama-cpp-python,
the GGUF the tests use), with the default shortlist (the grammar resolver's items filled up with the
nearest names). The old prompt (the whole inventory) is counted for comparison. Then one real
constrained decode per size checks the question is answered, not "too long".

    python bench/prompt_size.py [--out bench/results/prompt_size.json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from edge.llm.base import ContextOverflow  # noqa: E402
from edge.stages.nlu.llm_intent import JSON_OVERHEAD_TOKENS, SHORTLIST_MAX, LlmIntentParser  # noqa: E402
from tests.big_inventory import big_inventory  # noqa: E402

MODEL = "smollm2-135m-instruct-q4_1"
N_CTX = 2048
SIZES = (10, 200, 2000)
QUESTIONS = [
    "the supplier dropped off ten boxes of nitrile gloves",
    "how many fuses are still around",
    "grab me the count of m8 bolts in bin twelve",
    "what's the capital of France",
    "we used 4 of the M6 x 30 hex bolts",
]


def whole_inventory_prompt(items) -> str:
    """The prompt as it was: one line per item of the whole inventory (for comparison)."""
    return "\n".join(f"{it.sku}: {it.item}; {', '.join(it.aliases) or '-'}; {it.location}" for it in items)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "prompt_size.json"))
    args = ap.parse_args()
    from edge.llm.llamacpp import LlamaCppEngine

    engine = LlamaCppEngine(MODEL, n_ctx=N_CTX, threads=1, seed=7)
    inventory = big_inventory(max(SIZES))
    result = {"model": MODEL, "n_ctx": N_CTX, "shortlist_max": SHORTLIST_MAX, "questions": QUESTIONS, "sizes": {}}
    for n in SIZES:
        items = inventory[:n]
        parser = LlmIntentParser(engine, items)
        rows = []
        for q in QUESTIONS:
            t0 = time.perf_counter()
            messages = parser.messages(q)
            shortlist_ms = (time.perf_counter() - t0) * 1000
            tokens = len(engine.prompt_tokens(messages))
            rows.append({"question": q, "prompt_tokens": tokens, "shortlist": parser.skus,
                         "fits": tokens + parser.max_tokens <= N_CTX, "shortlist_ms": round(shortlist_ms, 1)})
        q = QUESTIONS[1]
        t0 = time.perf_counter()
        try:
            intent = parser.parse(q)
            answered = {"intent": intent.intent, "sku": intent.sku, "answer": intent.answer,
                        "too_long": False, "s": round(time.perf_counter() - t0, 2),
                        "attempts": [{"output": a["output"], "errors": a["errors"]} for a in parser.attempts]}
        except ContextOverflow as e:
            answered = {"too_long": True, "error": str(e)}
        old = engine.count_tokens(whole_inventory_prompt(items))
        result["sizes"][str(n)] = {
            "items": n, "rows": rows,
            "prompt_tokens_median": statistics.median(r["prompt_tokens"] for r in rows),
            "prompt_tokens_max": max(r["prompt_tokens"] for r in rows),
            "whole_inventory_lines_tokens": old,
            "whole_inventory_fits": old + JSON_OVERHEAD_TOKENS < N_CTX,
            "decode": {"question": q, **answered},
        }
        print(n, result["sizes"][str(n)]["prompt_tokens_median"], result["sizes"][str(n)]["prompt_tokens_max"],
              "old", old, answered, flush=True)
    med = [result["sizes"][str(n)]["prompt_tokens_median"] for n in SIZES]
    result["spread_of_medians"] = round((max(med) - min(med)) / min(med), 3)
    result["all_fit"] = all(r["fits"] for s in result["sizes"].values() for r in s["rows"])
    engine.close()
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print("spread", result["spread_of_medians"], "all fit", result["all_fit"], "wrote", args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
