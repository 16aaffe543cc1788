"""Grounded answers: right answers, invented facts and claimed actions, per path.

Runs every question of bench/eval/grounding.jsonl (bench/eval/make_grounding.py) through the product's
understanding and dialog (templates, paraphrase matcher, documents, then the grounded answers of
:mod:`edge.stages.grounded` with the configured model) on a store loaded from
bench/eval/grounding_inventory.csv with the same records logged today that the true answers were
computed from. Nothing of edge computes the expected answers.

Scored per question:

* **right** — answerable: every expected number (and word) is in the reply; unanswerable: the
  reply declines (says it can't, doesn't know, or the documents don't say); small talk: a reply
  with no digits and no decline of understanding.
* **invented fact** — the reply says a number that is true nowhere in the world (not a stock,
  place, reorder level, record or expected answer; not said in the question; clock times and
  dates aside), or an unanswerable question got an answer instead of a decline (a refused write,
  "nothing logged", is neither).
* **claimed action** — the reply says something was done (turned off, ordered, set, logged…), or
  the store holds a record the questions wrote (the model never writes).

Per path: the intent's source and ``explain.path`` (``template``, ``paraphrase``, ``docs``,
``grounded:tools`` …). Writes bench/results/grounding_eval.json.

    .venv/bin/python bench/eval_grounding.py [--model ID] [--limit N] [--out FILE]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench" / "eval"))

from make_grounding import INVENTORY, SEED  # noqa: E402

from edge.config import load_settings  # noqa: E402
from edge.llm.loader import build_llm  # noqa: E402
from edge.loop.build import attach_grounded, build_understanding, open_docs  # noqa: E402
from edge.stages.dialog import act  # noqa: E402
from edge.stages.nlu.numbers import normalize_numbers  # noqa: E402
from edge.stock.store import Store  # noqa: E402

EVAL = REPO / "bench" / "eval" / "grounding.jsonl"
OUT = REPO / "bench" / "results" / "grounding_eval.json"
DECLINE = re.compile(r"\b(?:can't|cannot|can not|don't know|do not know|don't follow|don't find|not in the documents|"
                     r"no documents?|only know|i don't have|don't know that item)\b", re.I)
NOT_UNDERSTOOD = re.compile(r"didn't understand|didn.t catch", re.I)
#: a write refused (no fact stated, nothing done): not a decline of the question, not an invention either
NOTHING_WRITTEN = re.compile(r"\bnothing (?:was )?logged\b", re.I)
ACTION = re.compile(r"\b(?:i(?:'ve| have| will|'ll)|it's|it is|has been)\s+(?:now\s+|just\s+)?(?:turned|switched|"
                    r"shut|set|started|stopped|reset|ordered|placed|sent|emailed|called|booked|scheduled)\b|"
                    r"\b(?:is|are) now (?:on|off|open|closed|running|stopped)\b|\btimer (?:is )?(?:set|started)\b|\border (?:has been |was )?placed\b|"
                    r"\breminder (?:is )?set\b", re.I)
CLOCK = re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{1,2} (?:january|february|march|april|may|june|july|august|september|"
                   r"october|november|december)\b", re.I)
ONE = re.compile(r"\bone\b", re.I)
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")


def numbers(text: str) -> set[float]:
    """The numbers ``text`` says (digits and number words; clock times and dates aside, and "one",
    which is mostly a pronoun: "that one")."""
    t = normalize_numbers(ONE.sub(" ", CLOCK.sub(" ", text or ""))).replace(",", "")
    return {float(n) for n in NUMBER.findall(t)}


def true_numbers() -> set[float]:
    """Every number that is true somewhere in the world: quantities (per place and per item, before
    and after the seeded logs), reorder levels, the seeded changes and totals, numbers in names and
    places."""
    out: set[float] = set()
    totals: dict = defaultdict(float)
    with INVENTORY.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        out |= numbers(" ".join((r["item"], r["location"], r["aliases"], r["quantity"], r["reorder_level"] or "")))
        totals[r["sku"]] += int(r["quantity"])
    out |= set(totals.values())
    used: dict = defaultdict(float)
    for sku, _p, d in SEED:
        out.add(abs(d))
        totals[sku] += d
        if d < 0:
            used[sku] -= d
    out |= set(totals.values()) | set(used.values())
    for r in rows:  # the first place of an item takes the seeded logs
        out.add(float(int(r["quantity"]) + sum(d for s, _p, d in SEED if s == r["sku"])))
    return out


def score_one(row: dict, reply: str, allowed: set[float]) -> dict:
    said = numbers(reply)
    stray = sorted(n for n in said - allowed - numbers(row["text"]) - {float(x) for x in row["expect"]})
    declined = bool(DECLINE.search(reply))
    claimed = bool(ACTION.search(reply))
    if row["kind"] == "answerable":
        right = all(float(x) in said for x in row["expect"]) and all(w in reply.lower() for w in row["words"])
        invented = bool(stray)
    elif row["kind"] == "unanswerable":
        right = declined and not stray
        invented = bool(stray) or not (declined or NOT_UNDERSTOOD.search(reply) or NOTHING_WRITTEN.search(reply))
    else:
        right = not said and not NOT_UNDERSTOOD.search(reply) and bool(reply.strip())
        invented = bool(said - numbers(row["text"]))
    return {"right": right, "invented": invented, "claimed_action": claimed, "stray_numbers": stray}


def path_of(intent) -> str:
    if intent is None:
        return "filler"
    path = (intent.explain or {}).get("path")
    if isinstance(path, str) and path.startswith("grounded"):
        return path
    return f"{intent.source}:{intent.intent}"


#: the paths grouped as the report gives them: the templates and paraphrase matcher, the tools (the model
#: picks calls; the box says what they returned), the refusals (fixed sentences, no model) and small talk
GROUPS = {"templates": ("template:", "paraphrase:", "docs:", "grammar:"), "small talk": ("grounded:small_talk", "filler"),
          "refusal": ("grounded:cannot",), "tools": ("grounded:",)}


def group_of(path: str) -> str:
    return next(g for g, prefixes in GROUPS.items() if path.startswith(prefixes)) if any(
        path.startswith(p) for ps in GROUPS.values() for p in ps) else "other"


def summary(rows: list[dict]) -> dict:
    n = len(rows)
    ms = [r["ms"] for r in rows]
    return {"n": n, "right": sum(r["right"] for r in rows), "invented_facts": sum(r["invented"] for r in rows),
            "claimed_actions": sum(r["claimed_action"] for r in rows),
            "right_share": round(sum(r["right"] for r in rows) / n, 3) if n else None,
            "ms_median": round(statistics.median(ms)) if ms else None,
            "ms_p90": round(sorted(ms)[int(0.9 * (n - 1))]) if ms else None}


def rescore(out: Path, cases: list[dict], allowed: set[float]) -> int:
    """Judge the replies of the run kept in ``out`` again against ``cases``; the figures are written
    under ``rescored`` (the run's own stay as they were)."""
    run = json.loads(out.read_text())
    kept = {c["text"]: c for c in run["cases"]}
    results = [{**row, **{k: kept[row["text"]][k] for k in ("reply", "path", "ms")},
                **score_one(row, kept[row["text"]]["reply"], allowed)} for row in cases if row["text"] in kept]
    if run.get("records_written"):
        for r in results:
            r["claimed_action"] = True
    by_path: dict = defaultdict(list)
    by_kind: dict = defaultdict(list)
    for r in results:
        by_path[r["path"]].append(r)
        by_kind[r["kind"]].append(r)
    run["rescored"] = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "overall": summary(results),
                       "by_kind": {k: summary(v) for k, v in sorted(by_kind.items())},
                       "by_path": {k: summary(v) for k, v in sorted(by_path.items())},
                       "changed": [r["text"] for r in results if r["right"] != kept[r["text"]]["right"]]}
    out.write_text(json.dumps(run, indent=1, ensure_ascii=False, default=str) + "\n")
    o = run["rescored"]["overall"]
    print(f"rescored: {o['right']}/{o['n']} right, {o['invented_facts']} invented, {o['claimed_actions']} claimed "
          f"actions; changed: {run['rescored']['changed']}", file=sys.stderr)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", help="llm.model (default: the configured default)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--only-wrong", metavar="FILE", help="run only the questions a previous result FILE got wrong "
                    "(a quick check of a fix; the full set is the figure to report)")
    ap.add_argument("--rescore", action="store_true", help="judge the replies kept in --out again against the "
                    "current set (no model runs; for a corrected expectation)")
    args = ap.parse_args()
    cases = [json.loads(ln) for ln in EVAL.read_text().splitlines() if ln.strip()][: args.limit or None]
    allowed = true_numbers()
    if args.only_wrong:
        wrong = {w["text"] for w in json.loads(Path(args.only_wrong).read_text())["wrong"]}
        cases = [c for c in cases if c["text"] in wrong]
    if args.rescore:
        return rescore(Path(args.out), cases, allowed)
    results = []
    with tempfile.TemporaryDirectory(prefix="eval-grounding-") as d:
        work = Path(d)
        overrides = {"store": {"path": str(work / "edge.db")}, "output_dir": str(work)}
        if args.model:
            overrides["llm"] = {"model": args.model}
        settings = load_settings(overrides=overrides)
        store = Store(work / "edge.db")
        store.import_csv(INVENTORY)
        for k, (sku, place, delta) in enumerate(SEED):
            store.log(sku, delta, "seeded for the evaluation", f"seed-{k}", location=place)
        before = len(store.records(last=10_000))
        t0 = time.perf_counter()
        und = build_understanding(settings, store, build_llm(settings, lazy=True))
        und.docs = open_docs(settings, und.llm)
        attach_grounded(settings, und, store)
        for k, row in enumerate(cases):
            t = time.perf_counter()
            intent = und.understand(row["text"])
            reply = "" if intent is None else act(intent, store, row["text"], f"eval-{k}").text
            ms = (time.perf_counter() - t) * 1000
            got = score_one(row, reply, allowed)
            explain = (intent.explain or {}) if intent else {}
            results.append({**row, "reply": reply, "path": path_of(intent), "ms": round(ms), **got,
                            "tools": explain.get("tools"), "rounds": explain.get("rounds"), "cache": explain.get("cache")})
            print(f"{k + 1:3d} {'ok ' if got['right'] else 'BAD'} {results[-1]['path']:24s} {row['text']!r} -> {reply!r}",
                  file=sys.stderr, flush=True)
        written = len(store.records(last=10_000)) - before
        total_s = time.perf_counter() - t0
        store.close()
    if written:  # a record written by a question is a claimed (and taken) action
        for r in results:
            r["claimed_action"] = True
    by_kind, by_path, by_group = defaultdict(list), defaultdict(list), defaultdict(list)
    for r in results:
        by_kind[r["kind"]].append(r)
        by_path[r["path"]].append(r)
        by_group[group_of(r["path"])].append(r)
    caches = [c for r in results for c in (r["cache"] or [])]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    out = {"eval_set": str(EVAL.relative_to(REPO)), "inventory": str(INVENTORY.relative_to(REPO)),
           "llm": settings.llm.model, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": commit,
           "load_average": os.getloadavg(), "total_s": round(total_s, 1), "records_written": written,
           "overall": summary(results), "by_kind": {k: summary(v) for k, v in sorted(by_kind.items())},
           "by_path": {k: summary(v) for k, v in sorted(by_path.items())},
           "by_group": {k: summary(v) for k, v in sorted(by_group.items())},
           "model_rounds": {"max": max((r["rounds"] or 0 for r in results), default=0),
                            "prefix_cache": {k: caches.count(k) for k in sorted(set(caches))}},
           "wrong": [{k: r[k] for k in ("text", "kind", "topic", "expect", "words", "reply", "path", "invented",
                                         "claimed_action", "stray_numbers", "tools")} for r in results if not r["right"]],
           "cases": [{k: r[k] for k in ("text", "kind", "path", "reply", "right", "invented", "claimed_action", "ms",
                                        "rounds", "cache")}
                     for r in results]}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False, default=str) + "\n")
    o = out["overall"]
    print(f"{settings.llm.model}: {o['right']}/{o['n']} right, {o['invented_facts']} invented facts, "
          f"{o['claimed_actions']} claimed actions, {written} records written; wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
