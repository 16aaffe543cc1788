"""The default LLM against SmolLM2 on this machine, side by side in one run: load time, resident memory,
prompt and decode tokens/s, and time to first token with the system prompt cached.

    .venv/bin/python bench/llm_default.py [--models qwen2.5-coder-1.5b-instruct-q4_k_m smollm2-135m-instruct-q4_1]
        [--rounds 2] [--threads 2] [--out bench/results/llm_default.json]

Each model runs in a fresh worker process (so its RSS is its own), models alternating for ``--rounds``
rounds (A B A B: the machine is shared and noisy, so both see the same load). A worker loads the model
with the product's engine (:class:`edge.llm.llamacpp.LlamaCppEngine`, n_ctx 2048) and sends the
understanding's real request (system prompt with a 5-item shortlist of the session inventory, the JSON
schema, ``Sentence: …\\nJSON:``) for six stock sentences that share one shortlist:

* the first request decodes the whole system prompt: ``prompt_tok_s`` = prompt tokens / TTFT;
* the next five reuse its KV state (prefix reuse): ``ttft_cached_ms`` is their median TTFT;
* ``decode_tok_s``: median decode rate after the first token (schema-constrained JSON);
* ``rss_mib``: VmRSS after load and after the requests (MiB); ``load_s``: engine construction.

Figures are wall clock on a shared machine: the load average before and after each worker is kept.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

INVENTORY = REPO.parent / "shared" / "audio" / "sessions" / "inventory.csv"
MODELS = ["qwen2.5-coder-1.5b-instruct-q4_k_m", "smollm2-135m-instruct-q4_1"]
#: stock sentences about the same item, so one shortlist (and one system prompt) serves them all
SENTENCES = ["how many M8 bolts do we have left", "we took three M8 bolts from bin twelve",
             "put ten M8 bolts back into bin twelve", "are there still M8 bolts in bin twelve",
             "I used five of the M8 bolts", "do we have enough M8 bolts for the job"]


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def load_items():
    from edge.stock.store import Item

    with INVENTORY.open(newline="", encoding="utf-8") as f:
        return [Item(r["sku"], r["item"], r["location"], int(r["quantity"]), r["unit"],
                     tuple(a.strip() for a in r["aliases"].split(";") if a.strip())) for r in csv.DictReader(f)]


def worker(model: str, threads: int) -> dict:
    from edge.llm.base import GenerationRequest
    from edge.llm.llamacpp import LlamaCppEngine
    from edge.stages.nlu.understand import Understanding

    base_rss = rss_mib()
    t = time.perf_counter()
    engine = LlamaCppEngine(model, n_ctx=2048, threads=threads, seed=7)
    load_s = time.perf_counter() - t
    rss_loaded = rss_mib()
    parser = Understanding(load_items(), engine).llm_intent
    shortlist = parser.default_shortlist(SENTENCES[0])
    runs = []
    for text in SENTENCES:
        msgs = parser.messages(text, shortlist)
        req = GenerationRequest(messages=msgs, max_tokens=parser.max_tokens, json_schema=parser.schema, temperature=0.0)
        out = "".join(engine.stream(req))
        s = engine.last_stats
        runs.append({"text": text, "prompt_tokens": s.prompt_tokens, "completion_tokens": s.completion_tokens,
                     "ttft_ms": round(s.ttft_ms, 1), "decode_tok_s": round(s.tokens_per_s, 2), "output": out})
    first, rest = runs[0], runs[1:]
    engine.close()
    return {"model": model, "file": str(engine.path), "load_s": round(load_s, 2),
            "rss_mib": {"before_load": round(base_rss, 1), "loaded": round(rss_loaded, 1), "after_requests": round(rss_mib(), 1)},
            "prompt_tokens": first["prompt_tokens"],
            "prompt_tok_s": round(first["prompt_tokens"] / (first["ttft_ms"] / 1000), 1),
            "ttft_uncached_ms": first["ttft_ms"],
            "ttft_cached_ms": statistics.median(r["ttft_ms"] for r in rest),
            "decode_tok_s": statistics.median(r["decode_tok_s"] for r in runs),
            "runs": runs}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=MODELS)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(REPO / "bench/results/llm_default.json"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.threads)))
        return 0
    results = []
    for rnd in range(args.rounds):
        for model in args.models:
            load_before = os.getloadavg()
            r = subprocess.run([sys.executable, __file__, "--worker", model, "--threads", str(args.threads)],
                               capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
            if r.returncode != 0:
                print(r.stderr[-2000:], file=sys.stderr)
                return 1
            res = json.loads(r.stdout.strip().splitlines()[-1])
            res.update(round=rnd + 1, load_average_before=[round(x, 2) for x in load_before],
                       load_average_after=[round(x, 2) for x in os.getloadavg()])
            print(f"round {rnd + 1} {model}: load {res['load_s']} s, RSS {res['rss_mib']['loaded']} MiB, prompt "
                  f"{res['prompt_tok_s']} tok/s, TTFT cached {res['ttft_cached_ms']} ms, decode {res['decode_tok_s']} tok/s",
                  file=sys.stderr, flush=True)
            results.append(res)
            write(args, results, complete=False)  # what has run so far survives an interrupted run
    write(args, results, complete=True)
    return 0


def write(args, results: list[dict], complete: bool) -> None:
    """The result JSON: per model the medians over its rounds so far (``complete``: all rounds ran)."""
    summary = {}
    for model in args.models:
        rs = [r for r in results if r["model"] == model]
        if not rs:
            continue
        summary[model] = {k: statistics.median(r[k] for r in rs) for k in
                          ("load_s", "prompt_tok_s", "ttft_uncached_ms", "ttft_cached_ms", "decode_tok_s")}
        summary[model]["rss_loaded_mib"] = statistics.median(r["rss_mib"]["loaded"] for r in rs)
        summary[model]["rss_after_requests_mib"] = statistics.median(r["rss_mib"]["after_requests"] for r in rs)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    out.write_text(json.dumps({"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": commit,
                               "machine": f"{platform.machine()}, {os.cpu_count()} cores", "threads": args.threads,
                               "n_ctx": 2048, "rounds": args.rounds, "complete": complete, "summary": summary,
                               "results": results}, indent=1) + "\n")
    if complete:
        print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    raise SystemExit(main())
