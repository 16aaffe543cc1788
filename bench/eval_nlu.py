"""The stock-room evaluation: every case of ``bench/eval/nlu.jsonl`` through the product's own turn
(understanding → dialog → store), each from a fresh store, scored on what the store holds after.

    .venv/bin/python bench/eval_nlu.py [--no-llm] [--set dev|holdout|holdout2] [--limit N] [--only KIND] [--out FILE]
                                       [--markdown]

The store is built once from ``bench/eval/inventory.csv`` (``make_inventory.py``: 2,065 items, some in
2–3 places) and copied per case. Each case runs as ``edge ask`` does: ``Understanding.understand``
(built by ``edge.loop.build.build_understanding`` with the configured LLM, or none with
``--no-llm``), then ``edge.stages.dialog.act``; its ``before`` utterances run first as earlier turns;
while the box asks (``Outcome.pending``), ``answers`` go to ``dialog.follow_up``. A case is right
(*all fields*) when the first utterance's intent is the expected one, the records written equal
``expect.records`` (SKU, delta, place, kind; in any order), the box asked iff ``expect.asks`` says
so, and the replies contain ``expect.reply_contains``. A *wrong record* is a written record that
matches no expected one (any field wrong, or a record where none should be); a missing record is
only a failed case.

A store whose records have no ``place`` (the schema before stock per place) gives each record the
item's location; one that refuses repeated SKUs gets the inventory collapsed to one row per SKU
(first place, summed quantity), said in the results (``inventory_collapsed``). A record ``kind`` is
read from ``Record.kind`` when the store has it (synonyms mapped), else ``undo`` for a compensating
record and ``log`` otherwise.

Per path (the first intent's ``source``: ``template``, ``paraphrase``, ``llm``, ``grammar``, or
``none`` when nothing was understood): cases, all-fields accuracy, intent accuracy, wrong records
with the case ids, median and p95 of the understanding time and of the whole case (ms, this
machine, shared: compare ratios); per kind; and a confusion table (expected × got intent).
``--set holdout`` runs ``bench/eval/nlu_holdout.jsonl`` instead (``make_holdout.py``: cases nobody
tuned the understanding against, so its figure is the one to quote; the default ``dev`` set was used to
find and fix failures); ``--set holdout2`` runs ``bench/eval/nlu_holdout2.jsonl`` (``make_holdout2.py``:
200 more, written blind to the code). Writes ``bench/results/eval_nlu.json`` (one entry per configuration, ``no_llm``
or ``llm``, the held-out set as ``no_llm holdout``, a partial run as e.g. ``no_llm only=fraction``; a
run replaces the earlier one of its configuration only) and prints the markdown tables with ``--markdown``.
"""
from __future__ import annotations

import argparse
import csv
import inspect
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from edge.config import load_settings  # noqa: E402
from edge.llm.loader import build_llm  # noqa: E402
from edge.loop.build import attach_grounded, build_understanding  # noqa: E402
from edge.stages import dialog  # noqa: E402
from edge.stages.nlu.types import INTENTS  # noqa: E402
from edge.stock.store import Store, StoreError  # noqa: E402

EVAL = REPO / "bench" / "eval" / "nlu.jsonl"
SETS = {"dev": EVAL, "holdout": REPO / "bench" / "eval" / "nlu_holdout.jsonl",
        "holdout2": REPO / "bench" / "eval" / "nlu_holdout2.jsonl"}
INVENTORY = REPO / "bench" / "eval" / "inventory.csv"
OUT = REPO / "bench" / "results" / "eval_nlu.json"
KIND_SYNONYMS = {"log": "log", "move": "log", "movement": "log", "in": "log", "out": "log", "use": "log",
                 "receive": "log", "transfer": "transfer", "transfer_out": "transfer", "transfer_in": "transfer",
                 "count": "count", "stock_count": "count", "stocktake": "count", "undo": "undo"}


def load_cases(path: Path = EVAL) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def collapsed_csv(src: Path, dst: Path) -> None:
    """One row per SKU: its first place and the summed quantity (for a store without places)."""
    with src.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    by: dict[str, dict] = {}
    for r in rows:
        if r["sku"] in by:
            by[r["sku"]]["quantity"] = str(int(by[r["sku"]]["quantity"]) + int(r["quantity"]))
        else:
            by[r["sku"]] = dict(r)
    with dst.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, list(rows[0]))
        w.writeheader()
        w.writerows(by.values())


def build_base(work: Path, inventory: Path = INVENTORY) -> tuple[Path, bool]:
    """The store every case starts from, and whether the inventory had to be collapsed."""
    db = work / "base.db"
    with Store(db) as store:
        try:
            store.import_csv(inventory)
            return db, False
        except StoreError as e:
            if not any(w in str(e).lower() for w in ("repeat", "duplicate", "already appears", "one row per sku")):
                raise
        flat = work / "inventory-one-row-per-sku.csv"
        collapsed_csv(inventory, flat)
        store.import_csv(flat)
    return db, True


def first_places(inventory: Path = INVENTORY) -> dict[str, str]:
    out: dict[str, str] = {}
    with inventory.open(newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            out.setdefault(r["sku"], r["location"])
    return out


def norm_place(place) -> str | None:
    return " ".join(str(place).split()).casefold() if place else None


def record_view(r, places: dict[str, str]) -> dict:
    """A store record as ``{sku, delta, place, kind}`` (see module doc for a store without places)."""
    place = getattr(r, "place", None) or getattr(r, "location", None)
    if place is None and not hasattr(r, "place"):
        place = places.get(r.sku)
    kind = getattr(r, "kind", None)
    if kind is None:
        kind = "undo" if getattr(r, "undoes", None) is not None else "log"
    kind = KIND_SYNONYMS.get(str(kind).lower(), str(kind).lower())
    delta = r.delta
    return {"sku": r.sku, "delta": delta, "place": place, "kind": kind}


def same(a: dict, b: dict) -> bool:
    return (a["sku"] == b["sku"] and abs(float(a["delta"]) - float(b["delta"])) < 1e-9
            and norm_place(a["place"]) == norm_place(b["place"]) and a["kind"] == b["kind"])


def match_records(expected: list[dict], got: list[dict]) -> tuple[list[dict], list[dict]]:
    """``(wrong, missing)``: written records matching no expected one, expected ones not written."""
    left = list(expected)
    wrong = []
    for g in got:
        k = next((i for i, e in enumerate(left) if same(e, g)), None)
        if k is None:
            wrong.append(g)
        else:
            left.pop(k)
    return wrong, left


def contains(replies: list[str], word: str) -> bool:
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", " ".join(replies)).casefold()
    w = re.sub(r"(?<=\d),(?=\d{3}\b)", "", word).casefold()
    # a word expected may be said in the plural ("sprocket" in "I don't have sprockets")
    return re.search(rf"(?<![0-9a-z]){re.escape(w)}(?:s|es)?(?![0-9a-z])", text) is not None


def _call(fn, *args, **kwargs):
    """``fn`` with the keyword arguments it takes (the dialog's signature grows on other branches)."""
    params = inspect.signature(fn).parameters
    if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        kwargs = {k: v for k, v in kwargs.items() if k in params}
    return fn(*args, **kwargs)


def turn(und, store: Store, text: str, turn_id: str, confidence=None, language: str = "en"):
    """One utterance as ``edge ask`` runs it: ``(intent, outcome, understand_ms)``; None outcome for
    filler. ``language``: the case's (``en`` unless it says ``language``)."""
    t = time.perf_counter()
    intent = und.understand(text, confidence=confidence) if confidence is not None else und.understand(text)
    ms = 1000 * (time.perf_counter() - t)
    if intent is None:
        return None, None, ms
    return intent, _call(dialog.act, intent, store, text, turn_id, language=language, understanding=und), ms


def asked(outcome) -> bool:
    return outcome is not None and (outcome.pending is not None or outcome.text.rstrip().endswith("?"))


#: the store of the case running now (the grounded answers read it)
CURRENT: dict = {}


def run_case(case: dict, und, base_db: Path, work: Path, places: dict[str, str]) -> dict:
    db = work / "case.db"
    for p in (db, db.with_name("case.db-wal"), db.with_name("case.db-shm")):
        p.unlink(missing_ok=True)
    shutil.copyfile(base_db, db)
    out: dict = {"id": case["id"], "kind": case["kind"], "paraphrase": case["paraphrase"], "replies": []}
    t0 = time.perf_counter()
    with Store(db) as store:
        CURRENT["store"] = store
        n0 = len(store.records())
        try:
            language = case.get("language", "en")
            for k, utt in enumerate(case.get("before", [])):
                _, o, _ = turn(und, store, utt, f"{case['id']}-b{k}", language=language)
                out["replies"].append(o.text if o else "")
            tid = f"{case['id']}-t"
            intent, outcome, ms = turn(und, store, case["text"], tid, case.get("confidence"), language)
            out.update(intent=intent.intent if intent else "none", source=(intent.source if intent else "none"),
                       slots=intent.slots() if intent else None, understand_ms=round(ms, 3), asked=asked(outcome))
            out["replies"].append(outcome.text if outcome else "")
            for ans in case.get("answers", []):
                if outcome is None or outcome.pending is None:
                    break
                outcome = _call(dialog.follow_up, outcome.pending, ans, store, tid, language=language, understanding=und)
                out["replies"].append(outcome.text)
        except Exception as e:  # a crash is that case's failure, not the run's
            out["error"] = f"{type(e).__name__}: {e}"
            out["traceback"] = traceback.format_exc(limit=4)
            out.setdefault("intent", "error")
            out.setdefault("source", "error")
        out["records"] = [record_view(r, places) for r in store.records()[n0:]]
    out["case_ms"] = round(1000 * (time.perf_counter() - t0), 3)
    return judge(case, out)


def judge(case: dict, out: dict) -> dict:
    exp = case["expect"]
    wrong, missing = match_records(exp["records"], out["records"])
    checks = {"intent": out.get("intent") == exp["intent"], "records": not wrong and not missing,
              "asks": "asks" not in exp or out.get("asked") == exp["asks"],
              "reply": all(contains(out["replies"], w) for w in exp.get("reply_contains", []))}
    out.update(checks=checks, ok=all(checks.values()) and "error" not in out, wrong_records=wrong,
               missing_records=missing)
    return out


def _pct(q: list[float], f: float) -> float:
    s = sorted(q)
    return round(s[min(len(s) - 1, int(f * len(s)))], 2) if s else 0.0


def summarize(results: list[dict]) -> dict:
    n = len(results)
    if not n:
        return {"n": 0}
    und_ms = [r.get("understand_ms", 0.0) for r in results]
    case_ms = [r["case_ms"] for r in results]
    wrong_ids = [r["id"] for r in results if r["wrong_records"]]
    return {"n": n, "all_fields": round(sum(r["ok"] for r in results) / n, 4),
            "intent": round(sum(r["checks"]["intent"] for r in results) / n, 4),
            "records": round(sum(r["checks"]["records"] for r in results) / n, 4),
            "wrong_records": sum(len(r["wrong_records"]) for r in results), "wrong_record_cases": wrong_ids,
            "errors": sum("error" in r for r in results),
            "understand_ms": {"median": round(statistics.median(und_ms), 2), "p95": _pct(und_ms, 0.95)},
            "case_ms": {"median": round(statistics.median(case_ms), 2), "p95": _pct(case_ms, 0.95)}}


def score(cases: list[dict], results: list[dict]) -> dict:
    by_path, by_kind = defaultdict(list), defaultdict(list)
    for r in results:
        by_path[r.get("source", "none")].append(r)
        by_kind[r["kind"]].append(r)
    confusion: dict[str, Counter] = defaultdict(Counter)
    for c, r in zip(cases, results, strict=True):
        confusion[c["expect"]["intent"]][r.get("intent", "none")] += 1
    return {"overall": summarize(results),
            "paraphrases": summarize([r for r in results if r["paraphrase"]]),
            "by_path": {k: summarize(v) for k, v in sorted(by_path.items())},
            "by_kind": {k: summarize(v) for k, v in sorted(by_kind.items())},
            "confusion": {k: dict(v) for k, v in sorted(confusion.items())},
            "failures": [{**{k: r.get(k) for k in ("id", "kind", "intent", "source", "checks", "records",
                                                   "wrong_records", "missing_records", "error")},
                          "replies": [x if len(x) <= 240 else x[:237] + "..." for x in r["replies"]]}
                         for r in results if not r["ok"]]}


def machine() -> dict:
    cpu = ""
    try:
        cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                    if ln.startswith("model name")), "")
    except OSError:
        pass
    return {"platform": platform.platform(), "machine": platform.machine(), "cpu": cpu, "cores": os.cpu_count(),
            "python": platform.python_version()}


def markdown(result: dict) -> str:
    lines = ["| config | path | cases | all fields | intent | records | wrong records | understand ms median (p95) "
             "| case ms median |", "|---|---|---|---|---|---|---|---|---|"]
    for name, run in sorted(result["configs"].items()):
        for path, s in [("all", run["scores"]["overall"]), ("paraphrases", run["scores"]["paraphrases"]),
                        *run["scores"]["by_path"].items()]:
            if not s.get("n"):
                continue
            lines.append(f"| {name} | {path} | {s['n']} | {s['all_fields']:.1%} | {s['intent']:.1%} | "
                         f"{s['records']:.1%} | {s['wrong_records']} | {s['understand_ms']['median']:.1f} "
                         f"({s['understand_ms']['p95']:.1f}) | {s['case_ms']['median']:.1f} |")
    for name, run in sorted(result["configs"].items()):
        sc = run["scores"]
        got = sorted({g for row in sc["confusion"].values() for g in row})
        lines += ["", f"Confusion ({name}; rows expected, columns got):", "",
                  "| expected \\ got | " + " | ".join(got) + " |", "|---|" + "---|" * len(got)]
        for exp, row in sc["confusion"].items():
            lines.append(f"| {exp} | " + " | ".join(str(row.get(g, "")) for g in got) + " |")
        lines += ["", f"By kind ({name}):", "", "| kind | cases | all fields | wrong records |", "|---|---|---|---|"]
        for kind, s in sc["by_kind"].items():
            lines.append(f"| {kind} | {s['n']} | {s['all_fields']:.1%} | {s['wrong_records']} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-llm", action="store_true", help="templates and paraphrase matcher only (llm.engine none)")
    ap.add_argument("--set", choices=sorted(SETS), default="dev", dest="case_set",
                    help="dev: nlu.jsonl (default); holdout: nlu_holdout.jsonl; holdout2: nlu_holdout2.jsonl "
                         "(each held-out set written under its own config name)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N cases (after --only)")
    ap.add_argument("--only", help="only the cases of this kind (e.g. fraction)")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--markdown", action="store_true", help="print the tables for the README")
    ap.add_argument("--failures", help="write every failing case (text, expected, got, replies, records) as "
                                       "JSON lines to this file")
    args = ap.parse_args()
    eval_path = SETS[args.case_set]
    cases = [c for c in load_cases(eval_path) if not args.only or c["kind"] == args.only][: args.limit or None]
    assert set(INTENTS) >= {c["expect"]["intent"] for c in cases}, "a case expects an intent types.py lacks"
    with tempfile.TemporaryDirectory(prefix="eval-nlu-") as d:
        work = Path(d)
        overrides = {"store": {"path": str(work / "unused.db")}, "output_dir": str(work)}
        if args.no_llm:
            overrides["llm"] = {"engine": "none"}
        settings = load_settings(board="x86-dev", overrides=overrides)
        built, collapsed = build_base(work)
        pristine = work / "pristine.db"  # closed, so one file holds it all: each case copies it
        shutil.copyfile(built, pristine)
        t = time.perf_counter()
        with Store(built) as base:  # open for the run: the understanding may keep reading it
            und = build_understanding(settings, base, None if args.no_llm else build_llm(settings))
            attach_grounded(settings, und, lambda: CURRENT.get("store", base))  # questions: the product's path
            build_s = time.perf_counter() - t
            places = first_places()
            results = []
            for k, case in enumerate(cases):
                results.append(run_case(case, und, pristine, work, places))
                if (k + 1) % 50 == 0:
                    print(f"  {k + 1}/{len(cases)}", file=sys.stderr, flush=True)
    out = Path(args.out)
    result = json.loads(out.read_text()) if out.exists() else {}
    result.setdefault("configs", {})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    name = "no_llm" if args.no_llm else "llm"
    if args.case_set != "dev":
        name += f" {args.case_set}"
    if args.only or args.limit:  # a partial run never replaces the whole set's figures
        name += "".join(f" {k}={v}" for k, v in (("only", args.only), ("limit", args.limit)) if v)
    if args.case_set == "dev":  # the top-level fields describe the dev set's entries
        result.update(eval_set=str(EVAL.relative_to(REPO)), inventory=str(INVENTORY.relative_to(REPO)),
                      machine=machine())
    result["configs"][name] = {
        "eval_set": str(eval_path.relative_to(REPO)), "machine": machine(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": commit,
        "llm": None if args.no_llm else settings.llm.model, "cases": len(cases), "only": args.only,
        "limit": args.limit or None, "inventory_collapsed": collapsed, "understanding_build_s": round(build_s, 2),
        "load_average": os.getloadavg(), "scores": score(cases, results)}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    s = result["configs"][name]["scores"]["overall"]
    print(f"{name}: {len(cases)} cases, all fields {s['all_fields']:.1%}, wrong records {s['wrong_records']}, "
          f"understand median {s['understand_ms']['median']} ms; wrote {out}", file=sys.stderr)
    if args.failures:
        with open(args.failures, "w", encoding="utf-8") as f:
            for case, r in zip(cases, results, strict=True):
                if not r["ok"]:
                    f.write(json.dumps({"id": case["id"], "kind": case["kind"], "text": case["text"],
                                        "answers": case.get("answers", []), "expect": case["expect"],
                                        "got": {k: r.get(k) for k in ("intent", "source", "slots", "asked", "replies",
                                                                      "records", "wrong_records", "missing_records",
                                                                      "checks", "error")}},
                                       ensure_ascii=False, default=str) + "\n")
    if args.markdown:
        print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
