"""Answers from documents with the configured model: right answers, correct declines, invented facts.

The held-back set (bench/eval/docs/answers.jsonl, written for this evaluation, not used to tune
anything before its first run) asks about man pages of the corpus (espeak-ng, pg_ctl,
mosquitto.conf, pactl, journalctl) and about what no document says (a site's machines, safety,
passwords). Each answerable question lists the facts a right answer states (``facts``: groups of
alternatives; every group must be in the answer). The questions run through
:func:`edge.stages.docs.answer.answer_question` over the whole corpus index of
``bench/eval_docs.py`` with the LLM that ``docs.answer`` picks (the default model generates).

Scored per question, nothing of edge computing the expectation:

* **right** — answerable, not declined, every fact group in the answer (an option name such as
  ``-s`` as a whole token, other facts case-insensitive);
* **declined correctly** — unanswerable and declined;
* **invented fact** — the answer states a number or an option name that no corpus document holds
  (the raw files, roff escapes removed), or an unanswerable question got an answer.

    python bench/eval_docs_answers.py --label before|after [--model ID] [--limit N]

Writes bench/results/docs_answers_<label>.json and bench/results/docs_answers.png (every label
found, side by side).
"""
from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from eval_docs import EVAL, build_corpus, corpus_files  # noqa: E402

from edge.config import load_settings  # noqa: E402
from edge.llm.loader import build_llm  # noqa: E402
from edge.stages.docs.answer import NOT_FOUND, answer_question, generates  # noqa: E402
from edge.stages.docs.index import load_encoder  # noqa: E402
from edge.stages.docs.retrieve import Retriever  # noqa: E402

RESULTS = ROOT / "bench" / "results"
#: an option name (-s, --no-wait, --vacuum-time) or a number (175, 268435455, 1.2)
_OPTION = re.compile(r"(?<![\w-])--?[A-Za-z?][\w-]*")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_ROFF = re.compile(r"\\f[BIRP]|\\f\(\w\w|\\&|\\\(..|\\[*][A-Za-z]")


def raw_text(path: str) -> str:
    """A corpus file's text as shipped: gunzipped, roff font escapes dropped and ``\\-`` read as
    ``-``; a PDF through pypdf's text extraction."""
    data = Path(path).read_bytes()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    if path.endswith(".pdf"):
        from pypdf import PdfReader

        return "\n".join(p.extract_text() or "" for p in PdfReader(path).pages)
    text = data.decode("utf-8", "replace").replace("\\-", "-").replace("\\e", "\\")
    return _ROFF.sub("", text)


def has_fact(answer: str, fact: str) -> bool:
    if fact.startswith("-"):
        return re.search(r"(?<![\w-])" + re.escape(fact) + r"(?![\w-])", answer) is not None
    return fact.lower() in answer.lower()


def facts_said(answer: str) -> set[str]:
    """The option names and numbers an answer states."""
    out = {m.group(0) for m in _OPTION.finditer(answer)}
    out |= {m.group(0).replace(",", "") for m in _NUMBER.finditer(answer)}
    return out


def invented(answer: str, question: str, corpus: str) -> list[str]:
    """Option names and numbers in ``answer`` that neither the question nor any document holds."""
    out = []
    for f in sorted(facts_said(answer)):
        if f in question:
            continue
        pattern = r"(?<![\w])" + re.escape(f) + r"(?![\w])" if not f.startswith("-") else \
            r"(?<![\w-])" + re.escape(f) + r"(?![\w-])"
        if not re.search(pattern, corpus):
            out.append(f)
    return out


def body(text: str) -> str:
    """The answer without its source phrase ("From the … manual page, section …: ")."""
    return text.split(": ", 1)[1] if text.startswith("From ") and ": " in text else text


def score(q: dict, ans, corpus: str) -> dict:
    said = body(ans.text)
    row = {"id": q["id"], "question": q["question"], "answer": ans.text, "found": ans.found, "mode": ans.mode,
           "source": ans.sources[0].title + " > " + ans.sources[0].section if ans.sources else None}
    if q.get("answerable", True):
        right = ans.found and all(any(has_fact(said, f) for f in group) for group in q["facts"])
        made_up = invented(said, q["question"], corpus) if ans.found else []
        row.update({"right": right, "invented": made_up, "declined": not ans.found})
    else:
        row.update({"right": not ans.found, "invented": ["answered an unanswerable question"] if ans.found else [],
                    "declined": not ans.found})
    return row


def summary(rows: list[dict]) -> dict:
    secs = [r["seconds"] for r in rows if r["seconds"] is not None]
    ans = [r for r in rows if r["id"].startswith("h")]
    una = [r for r in rows if not r["id"].startswith("h")]
    return {"answerable": len(ans), "right": sum(r["right"] for r in ans),
            "answerable_declined": sum(r["declined"] for r in ans),
            "wrong": sum(not r["right"] and not r["declined"] for r in ans),
            "unanswerable": len(una), "declined_correctly": sum(r["declined"] for r in una),
            "invented_facts": sum(bool(r["invented"]) for r in rows),
            "by_mode": {m: sum(r["mode"] == m for r in rows) for m in sorted({r["mode"] for r in rows})},
            "seconds_p50": round(statistics.median(secs), 2) if secs else None,
            "seconds_max": round(max(secs), 2) if secs else None}


def plot(out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    runs = [json.loads(p.read_text()) for p in sorted(RESULTS.glob("docs_answers_*.json"))]
    runs.sort(key=lambda r: (r["label"] != "before", r["label"] == "after"))
    if not runs:
        return
    for r in list(runs):
        if "before_same_questions" in r:  # a cut-short run: the same questions before, beside it
            n = r["before_same_questions"]["answerable"]
            runs.insert(runs.index(r), {"label": f"before, the same {n} answerable", "answer_mode": "extractive",
                                        "commit": "c73587e", "summary": r["before_same_questions"]})
    names = ["right answers", "answerable\ndeclined", "wrong answers", "unanswerable\ndeclined", "invented facts"]
    fig, ax = plt.subplots(figsize=(9, 4))
    xs = np.arange(len(names))
    for j, r in enumerate(runs):
        s = r["summary"]
        vals = [s["right"], s["answerable_declined"], s["wrong"], s["declined_correctly"], s["invented_facts"]]
        w = 0.8 / len(runs)
        bars = ax.bar(xs + (j - (len(runs) - 1) / 2) * w, vals, w, label=f"{r['label']}: {r.get('answer_mode', '?')} answers ({r['commit']})")
        for b, v in zip(bars, vals, strict=True):
            ax.text(b.get_x() + b.get_width() / 2, v + 0.3, str(v), ha="center", fontsize=8)
    s0 = runs[0]["summary"]
    last = runs[-1]["summary"]
    ax.set_xticks(xs, names)
    ax.set_ylabel("questions")
    ax.set_title(f"document answers, held-back: {s0['answerable']} + {s0['unanswerable']} unanswerable "
                 f"({last['answerable']} + {last['unanswerable']} in the last run); {runs[-1]['llm']}", fontsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


_LOGGED = re.compile(r"^(?:ok |BAD) (\w+) ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\") -> "
                     r"('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")


def from_log(path: Path, questions: list[dict]) -> list[dict]:
    """The answers a run printed (its stderr, one line a question), for a run cut short: each
    scored again as :func:`score` does; the answer's mode is not printed (``logged``)."""
    import ast
    from types import SimpleNamespace

    by_id = {q["id"]: q for q in questions}
    rows = []
    for line in path.read_text().splitlines():
        m = _LOGGED.match(line)
        if not m or m.group(1) not in by_id:
            continue
        text = ast.literal_eval(m.group(3))
        found = text not in NOT_FOUND.values()
        ans = SimpleNamespace(text=text, found=found, mode="logged" if found else "declined", sources=[])
        rows.append({**score(by_id[m.group(1)], ans, CORPUS_TEXT[0]), "seconds": None})
    return rows


#: the corpus's raw text, read once by :func:`main` (for :func:`from_log`)
CORPUS_TEXT = [""]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--label", required=True, help="before / after: the result file's name")
    ap.add_argument("--model", help="llm.model (default: the configured default)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--answer-mode", choices=("auto", "extractive", "generated"), help="docs.answer (default: configured)")
    ap.add_argument("--questions", type=Path, default=EVAL / "answers.jsonl")
    ap.add_argument("--from-log", type=Path, help="score the answers a cut-short run printed (its stderr); no model runs")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "edge" / "docs-eval.db")
    args = ap.parse_args(argv)
    overrides = {"llm": {"model": args.model}} if args.model else {}
    if args.answer_mode:
        overrides["docs"] = {"answer": args.answer_mode}
    settings = load_settings(overrides=overrides or None)
    questions = [json.loads(ln) for ln in args.questions.read_text().splitlines() if ln.strip()][: args.limit or None]
    files = corpus_files(EVAL / "corpus.txt")
    corpus = CORPUS_TEXT[0] = "\n".join(raw_text(f) for f in files)
    if args.from_log:
        rows = from_log(args.from_log, questions)
        done = {r["id"] for r in rows}
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        result = {"label": args.label, "llm": settings.llm.model, "answer_mode": settings.docs.answer, "commit": commit,
                  "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "from_log": str(args.from_log),
                  "questions_run": sorted(done), "summary": summary(rows), "rows": rows}
        before = RESULTS / "docs_answers_before.json"
        if before.exists():  # the same questions' answers before, for a side-by-side of a cut-short run
            result["before_same_questions"] = summary([r for r in json.loads(before.read_text())["rows"] if r["id"] in done])
        (RESULTS / f"docs_answers_{args.label}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
        print(json.dumps(result["summary"]))
        return 0
    args.cache.parent.mkdir(parents=True, exist_ok=True)
    index, build = build_corpus(args.cache, files, load_encoder())
    retriever = Retriever(index)
    llm = build_llm(settings, lazy=True) if generates(settings.docs.answer, settings.llm.model) else None
    rows = []
    for q in questions:
        t0 = time.perf_counter()
        ans = answer_question(q["question"], retriever, settings.docs, llm, settings.language,
                              max_tokens=settings.llm.max_tokens)
        row = {**score(q, ans, corpus), "seconds": round(time.perf_counter() - t0, 2)}
        rows.append(row)
        mark = "ok " if row["right"] else "BAD"
        print(f"{mark} {q['id']} {q['question']!r} -> {ans.text!r}"
              + (f" INVENTED {row['invented']}" if row["invented"] else ""), file=sys.stderr, flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    result = {"label": args.label, "llm": settings.llm.model, "answer_mode": settings.docs.answer,
              "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": commit,
              "chunks": index.count(), "build": build, "summary": summary(rows), "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"docs_answers_{args.label}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    plot(RESULTS / "docs_answers.png")
    print(json.dumps(result["summary"]))
    if llm is not None and hasattr(llm, "close"):
        llm.close()
    index.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
