"""Understanding accuracy on the written evaluation set, per path and per model.

    .venv/bin/python bench/eval_nlu_sample.py [--model smollm2-135m-instruct-q4_1 ...] [--threads 2]
        [--out bench/results/nlu_eval.json] [--markdown] [--limit N]

``bench/eval/utterances.jsonl``: one utterance a line — ``text``, the expected ``intent``
(``query_stock`` | ``log_record`` | ``undo`` | ``other``) and slots ``sku``, ``quantity``,
``direction``, ``location`` (null when not said), and ``kind``: ``grammar`` (a phrasing the
grammar path is built for) or ``paraphrase`` (one it is not). Over the sample inventory
(../shared/audio/sessions/inventory.csv).

Paths:

* ``grammar`` — :meth:`edge.stages.nlu.grammar.Grammar.parse` alone (None counts as ``other``).
* ``grammar+llm`` — :meth:`edge.stages.nlu.understand.Understanding.understand`, what the box runs.
* ``llm`` — :meth:`edge.stages.nlu.llm_intent.LlmIntentParser.parse` on every utterance (JSON constrained
  by the schema, validated, one retry; the SKU still has to be named in the sentence, see
  :mod:`edge.stages.nlu.llm_intent`).

Scores: ``intent_accuracy`` (intent right), ``slots_accuracy`` (intent and all four slots right),
each overall and per ``kind``; ``wrong_records``: predicted logs with a SKU and quantity that
differ from the expected log (what would be written wrongly); ``failed_validation``; ``ms_per_utterance``
(mean, median, p95 of the wall clock on this machine, which is shared: compare ratios).
Each model's run replaces the earlier one of the same model in the output file.
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

from edge.stages.nlu.grammar import Grammar  # noqa: E402
from edge.stock.store import Item  # noqa: E402

EVAL = REPO / "bench" / "eval" / "utterances.jsonl"
INVENTORY = REPO.parent / "shared" / "audio" / "sessions" / "inventory.csv"
SLOTS = ("sku", "quantity", "direction", "location")


def load_items(path: Path = INVENTORY) -> list[Item]:
    with path.open(newline="", encoding="utf-8") as f:
        return [Item(r["sku"], r["item"], r["location"], int(r["quantity"]), r["unit"],
                     tuple(a.strip() for a in r["aliases"].split(";") if a.strip())) for r in csv.DictReader(f)]


def load_eval(path: Path = EVAL) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _pred(intent) -> dict:
    if intent is None:
        return {"intent": "other", **{s: None for s in SLOTS}}
    return {"intent": intent.intent, **intent.slots(), "failed_validation": bool(intent.extra.get("failed_validation"))}


def score(rows: list[dict], preds: list[dict], ms: list[float]) -> dict:
    """Accuracy figures for one path (see module doc)."""
    def acc(idx):
        n = len(idx)
        if not n:
            return {"n": 0}
        ok_i = sum(preds[i]["intent"] == rows[i]["intent"] for i in idx)
        ok_s = sum(preds[i]["intent"] == rows[i]["intent"] and all(preds[i][s] == rows[i][s] for s in SLOTS)
                   for i in idx)
        return {"n": n, "intent_accuracy": round(ok_i / n, 4), "slots_accuracy": round(ok_s / n, 4)}

    every = range(len(rows))
    out = {**acc(list(every)),
           "by_kind": {k: acc([i for i in every if rows[i]["kind"] == k]) for k in ("grammar", "paraphrase")},
           "by_intent": {k: acc([i for i in every if rows[i]["intent"] == k])
                         for k in ("query_stock", "log_record", "undo", "other")}}
    out["wrong_records"] = sum(
        1 for i in every if preds[i]["intent"] == "log_record" and preds[i]["sku"] and preds[i]["quantity"]
        and (rows[i]["intent"] != "log_record" or any(preds[i][s] != rows[i][s] for s in ("sku", "quantity", "direction"))))
    out["failed_validation"] = sum(1 for p in preds if p.get("failed_validation"))
    if ms:
        q = sorted(ms)
        out["ms_per_utterance"] = {"mean": round(statistics.fmean(ms), 1), "median": round(statistics.median(ms), 1),
                                   "p95": round(q[min(len(q) - 1, int(0.95 * len(q)))], 1)}
    out["mistakes"] = [{"text": rows[i]["text"], "expected": {k: rows[i][k] for k in ("intent", *SLOTS)},
                        "got": {k: preds[i][k] for k in ("intent", *SLOTS)}}
                       for i in every if preds[i]["intent"] != rows[i]["intent"]
                       or any(preds[i][s] != rows[i][s] for s in SLOTS)]
    return out


def run_path(name: str, fn, rows: list[dict]) -> dict:
    preds, ms = [], []
    for k, r in enumerate(rows):
        t = time.perf_counter()
        preds.append(_pred(fn(r["text"])))
        ms.append(1000 * (time.perf_counter() - t))
        if name != "grammar" and (k + 1) % 10 == 0:
            print(f"  {name}: {k + 1}/{len(rows)}", file=sys.stderr, flush=True)
    return score(rows, preds, ms)


def machine() -> dict:
    cpu = ""
    try:
        cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name")), "")
    except OSError:
        pass
    return {"platform": platform.platform(), "machine": platform.machine(), "cpu": cpu, "cores": os.cpu_count(),
            "python": platform.python_version()}


def markdown(result: dict) -> str:
    lines = ["| model | path | intent acc. | slots acc. | in-grammar intent / slots | paraphrase intent / slots "
             "| wrong records | failed validation | ms/utt. mean (median) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for run in result["runs"]:
        for path, s in run["paths"].items():
            g, p = s["by_kind"]["grammar"], s["by_kind"]["paraphrase"]
            lines.append(
                f"| {run['model']} | {path} | {s['intent_accuracy']:.1%} | {s['slots_accuracy']:.1%} | "
                f"{g['intent_accuracy']:.1%} / {g['slots_accuracy']:.1%} | {p['intent_accuracy']:.1%} / "
                f"{p['slots_accuracy']:.1%} | {s['wrong_records']} | {s['failed_validation']} | "
                f"{s['ms_per_utterance']['mean']:.0f} ({s['ms_per_utterance']['median']:.0f}) |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", help="LLM manifest id or .gguf path (repeatable); "
                    "default smollm2-135m-instruct-q4_1; 'none' = grammar path only")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-ctx", type=int, default=2048)
    ap.add_argument("--limit", type=int, default=0, help="only the first N utterances (a quick look)")
    ap.add_argument("--out", default=str(REPO / "bench/results/nlu_eval.json"))
    ap.add_argument("--markdown", action="store_true", help="print the table for the README")
    args = ap.parse_args()

    items = load_items()
    rows = load_eval()[: args.limit or None]
    out = Path(args.out)
    result = json.loads(out.read_text()) if out.exists() else {"runs": []}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    result.update({"machine": machine(), "eval_set": str(EVAL.relative_to(REPO)), "utterances": len(rows),
                   "inventory": "shared/audio/sessions/inventory.csv"})

    def save(run):
        result["runs"] = [r for r in result["runs"] if r["model"] != run["model"]] + [run]
        result["runs"].sort(key=lambda r: (r["model"] != "none", r["model"]))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")

    grammar = Grammar(items)
    base = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": commit,
            "load_average_start": os.getloadavg()}
    save({**base, "model": "none", "paths": {"grammar": run_path("grammar", grammar.parse, rows)}})
    for model in args.model or ["smollm2-135m-instruct-q4_1"]:
        if model == "none":
            continue
        from edge.llm.llamacpp import LlamaCppEngine
        from edge.stages.nlu.llm_intent import LlmIntentParser
        from edge.stages.nlu.understand import Understanding

        print(f"model {model}", file=sys.stderr, flush=True)
        t = time.perf_counter()
        engine = LlamaCppEngine(model, n_ctx=args.n_ctx, threads=args.threads, seed=7)
        run = {**base, "model": model, "model_file": str(engine.path), "load_s": round(time.perf_counter() - t, 2),
               "threads": args.threads, "n_ctx": args.n_ctx, "paths": {}}
        und = Understanding(items, engine)
        run["prompt_tokens"] = engine.count_tokens(und.llm_intent.system_prompt)
        run["paths"]["grammar+llm"] = run_path("grammar+llm", und.understand, rows)
        llm = LlmIntentParser(engine, items, grammar=grammar)
        run["paths"]["llm"] = run_path("llm", llm.parse, rows)
        run["load_average_end"] = os.getloadavg()
        engine.close()
        save(run)
    if args.markdown:
        print(markdown(result))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
