"""The "every word accounted for" evaluation: adversarial sentences and their correct neighbours
through the product's own turn (understanding → dialog → store), each on a fresh store.

    .venv/bin/python bench/eval_guard.py [--set small|big|zh|both|all] [--llm] [--out FILE] [--failures FILE]

``bench/eval/guard.jsonl`` runs over the 10-item session inventory (``bench/eval/guard_inventory.csv``),
``bench/eval/guard_big.jsonl`` over the 2,065-item ``bench/eval/inventory.csv`` (both written by
``bench/eval/make_guard.py``). Each case runs as :mod:`bench.eval_nlu` runs its cases (its
``run_case``: ``before`` turns, the utterance, and its ``answers`` when the case gives any: a read-back's
"yes"; none otherwise). Scored:

- **wrong records** (target 0): a written record that is not one of ``expect.records``, or any record
  where ``expect.write`` is ``never``;
- **correct commands logged without a question**: of the ``must`` cases, the share whose records are
  exactly the expected ones and where the box did not ask;
- **refused right**: of the ``never`` cases, the share with nothing written (and a question when
  ``expect.asks`` says so);
- per class (question, direction, size, frequency, unit, other_item, same_item, negation, but,
  correction, neighbour), with the failing ids.

Writes ``bench/results/eval_guard.json`` (one entry per set and configuration, ``no_llm`` by default:
templates and the paraphrase matcher).
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from eval_nlu import build_base, first_places, load_cases, machine, match_records, run_case  # noqa: E402

from edge.config import load_settings  # noqa: E402
from edge.llm.loader import build_llm  # noqa: E402
from edge.loop.build import build_understanding  # noqa: E402
from edge.stock.store import Store  # noqa: E402

EVAL = REPO / "bench" / "eval"
SETS = {"small": (EVAL / "guard.jsonl", EVAL / "guard_inventory.csv"),
        "big": (EVAL / "guard_big.jsonl", EVAL / "inventory.csv"),
        "zh": (EVAL / "guard_zh.jsonl", EVAL / "guard_inventory_zh.csv")}
OUT = REPO / "bench" / "results" / "eval_guard.json"


def grade(case: dict, out: dict) -> dict:
    """``out`` (:func:`eval_nlu.run_case`'s) judged by the guard rules (see module doc)."""
    exp = case["expect"]
    got = out["records"]
    wrong, missing = match_records(exp["records"], got)
    if exp["write"] == "never":
        wrong = list(got)
    exact = not wrong and not missing
    asked = bool(out.get("asked"))
    if exp["write"] == "must":
        ok = exact and not asked
    elif exp["write"] == "never":
        ok = not got and ("asks" not in exp or asked == exp["asks"])
    else:
        ok = not wrong and (exact or not got)
    return {"id": case["id"], "class": case["class"], "write": exp["write"], "text": case["text"], "ok": ok,
            "wrong_records": wrong, "records": got, "asked": asked, "replies": out["replies"],
            "error": out.get("error")}


def summary(graded: list[dict]) -> dict:
    must = [g for g in graded if g["write"] == "must"]
    never = [g for g in graded if g["write"] == "never"]
    return {"n": len(graded), "ok": round(sum(g["ok"] for g in graded) / len(graded), 4) if graded else None,
            "wrong_records": sum(len(g["wrong_records"]) for g in graded),
            "wrong_record_cases": [g["id"] for g in graded if g["wrong_records"]],
            "must": len(must), "logged_without_question": round(sum(g["ok"] for g in must) / len(must), 4) if must else None,
            "never": len(never), "refused_right": round(sum(g["ok"] for g in never) / len(never), 4) if never else None,
            "errors": sum(g["error"] is not None for g in graded),
            "failing": [g["id"] for g in graded if not g["ok"]]}


def run_set(name: str, llm: bool) -> tuple[dict, list[dict]]:
    cases_path, inventory = SETS[name]
    cases = load_cases(cases_path)
    with tempfile.TemporaryDirectory(prefix="eval-guard-") as d:
        work = Path(d)
        overrides = {"store": {"path": str(work / "unused.db")}, "output_dir": str(work)}
        if name == "zh":
            overrides["language"] = "zh"
        if not llm:
            overrides["llm"] = {"engine": "none"}
        settings = load_settings(board="x86-dev", overrides=overrides)
        built, _ = build_base(work, inventory)
        pristine = work / "pristine.db"
        shutil.copyfile(built, pristine)
        with Store(built) as base:
            und = build_understanding(settings, base, build_llm(settings) if llm else None)
            places = first_places(inventory)
            graded = [grade(c, run_case(c, und, pristine, work, places)) for c in cases]
    by_class = defaultdict(list)
    for g in graded:
        by_class[g["class"]].append(g)
    return {"eval_set": str(cases_path.relative_to(REPO)), "inventory": str(inventory.relative_to(REPO)),
            "overall": summary(graded), "by_class": {k: summary(v) for k, v in sorted(by_class.items())}}, graded


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=("small", "big", "zh", "both", "all"), default="all", dest="which",
                    help="both: small and big; all: small, big and zh")
    ap.add_argument("--llm", action="store_true", help="with the configured LLM (default: templates and paraphrase)")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--failures", help="write every failing case as JSON lines to this file")
    args = ap.parse_args()
    out = Path(args.out)
    result = json.loads(out.read_text()) if out.exists() else {}
    result.setdefault("configs", {})
    failures = []
    which = {"both": ("small", "big"), "all": ("small", "big", "zh")}.get(args.which, (args.which,))
    for name in which:
        scores, graded = run_set(name, args.llm)
        config = f"{'llm' if args.llm else 'no_llm'} {name}"
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                text=True).stdout.strip()
        result["configs"][config] = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                     "commit": commit, "machine": machine(), **scores}
        s = scores["overall"]
        print(f"{config}: {s['n']} cases, wrong records {s['wrong_records']}, correct commands logged without a "
              f"question {s['logged_without_question']:.1%} of {s['must']}, refused right "
              f"{s['refused_right']:.1%} of {s['never']}", file=sys.stderr)
        failures += [g for g in graded if not g["ok"]]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    if args.failures:
        Path(args.failures).write_text("".join(json.dumps(f, ensure_ascii=False, default=str) + "\n" for f in failures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
