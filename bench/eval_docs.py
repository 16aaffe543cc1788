"""Answers from documents: retrieval recall, declines, latency and build time on a real corpus.

The corpus (bench/eval/docs/corpus.txt) is manuals, man pages and READMEs that the Debian packages
of scripts/setup.sh ship; the questions (bench/eval/docs/questions.jsonl) name the document and
section that answer them, or are marked unanswerable.

Reported: recall@1 (the passage the answer is taken from is in the right section) and recall@3
(one of the first three passages is), the share of unanswerable questions declined, answerable
questions declined, answers without a source (must be 0), retrieval latency p50/p95 at ~1,000 and
~10,000 chunks, and index build times. The 1,000-chunk index is the corpus plus more man pages,
all with real embeddings. The 10,000-chunk index adds man pages of the installed packages (real
text, real BM25); their vectors are random unit vectors unless ``--embed-all`` (the numpy encoder
needs ~0.1 s per chunk here: 10,000 chunks would take ~17 min), which costs the same to search.

    python bench/eval_docs.py [--no-vectors] [--skip-10k] [--corpus-latency] [--embed-all] [--out bench/results]

``--corpus-latency`` measures the latency on the corpus index alone (no padding: quick).

The embedded corpus index and the 1,000-chunk one are kept next to ``--cache`` (incremental by
SHA-256: a second run re-reads and re-embeds nothing).
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from edge.config import DocsSettings  # noqa: E402
from edge.stages.docs.answer import answer_order, answer_question  # noqa: E402
from edge.stages.docs.index import DocsIndex, load_encoder  # noqa: E402
from edge.stages.docs.retrieve import Retriever  # noqa: E402

EVAL = ROOT / "bench" / "eval" / "docs"
MAN_DIRS = ("/usr/share/man/man1", "/usr/share/man/man5", "/usr/share/man/man8", "/usr/share/man/man7")


def corpus_files(path: Path) -> list[str]:
    return [ln.strip() for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")]


def padding_pages(exclude: set[str]) -> list[str]:
    """Installed man pages, not of the corpus; generated cloud-SDK pages last (there are thousands)."""
    pages = sorted(str(p) for d in MAN_DIRS if os.path.isdir(d) for p in Path(d).glob("*.gz"))
    pages = [p for p in pages if p not in exclude]
    return [p for p in pages if "gcloud" not in p] + [p for p in pages if "gcloud" in p]


def pad_to(index: DocsIndex, pages: list[str], target: int, step: int = 40) -> int:
    """Add man pages until the index holds ``target`` chunks; the pages used."""
    used = 0
    while index.count() < target and used < len(pages):
        n = max(1, min(step, (target - index.count()) // 25))  # ~12 chunks a page: do not overshoot far
        index.add(pages[used:used + n])
        used += n
    return used


def copy_index(index: DocsIndex, path: Path) -> None:
    """A consistent copy of an open index (SQLite's backup: the WAL's pages included)."""
    dst = sqlite3.connect(path)
    with index.lock:
        index.db.backup(dst)
    dst.close()


def fill_random_vectors(index: DocsIndex, dim: int, seed: int = 7) -> int:
    """Random unit vectors for chunks without one (search cost only; see the module docstring)."""
    rng = np.random.default_rng(seed)
    ids = [r[0] for r in index.db.execute("SELECT id FROM chunks WHERE vec IS NULL")]
    with index.db:
        for cid in ids:
            v = rng.standard_normal(dim).astype(np.float32)
            index.db.execute("UPDATE chunks SET vec = ? WHERE id = ?", ((v / np.linalg.norm(v)).tobytes(), cid))
        index.db.execute("INSERT OR REPLACE INTO meta VALUES ('writes', ?)", (str(int(time.time())),))
    return len(ids)


def matches(stored, expected: dict) -> bool:
    """The chunk is in the expected document and section (``section``: the last heading, or a
    path suffix "Linux, Mac, BSD > Dependencies")."""
    c = stored.chunk
    if c.title != expected["document"]:
        return False
    want = tuple(x.strip() for x in expected["section"].split(" > ")) if expected["section"] else ()
    return c.path == want if not want else c.path[-len(want):] == want


def right(stored, q: dict) -> bool:
    return any(matches(stored, e) for e in [q, *q.get("also", [])])


def percentiles(ms: list[float]) -> dict:
    ms = sorted(ms)
    return {"p50_ms": round(statistics.median(ms), 2), "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2),
            "max_ms": round(ms[-1], 2)}


def latency(retriever: Retriever, questions: list[str], k: int) -> dict:
    """ms per question: ``total`` (:meth:`Retriever.search` as a turn calls it: the question's
    embedding in a worker thread while BM25 runs, then the vector product, fusion, confidence),
    and its parts measured after it: ``embed`` (the question's vector alone) and ``search`` (with
    the vector given: the index's part)."""
    retriever.search(questions[0], k=k)  # warm: vectors loaded, caches filled
    total, search, embed = [], [], []
    for q in questions:
        t0 = time.perf_counter()
        retriever.search(q, k=k)
        t1 = time.perf_counter()
        v = retriever.embed(q)
        t2 = time.perf_counter()
        retriever.search(q, k=k, qvec=v)
        t3 = time.perf_counter()
        total.append((t1 - t0) * 1000)
        embed.append((t2 - t1) * 1000)
        search.append((t3 - t2) * 1000)
    return {"chunks": retriever.index.count(), "queries": len(questions), **percentiles(total),
            "search": percentiles(search), "embed": percentiles(embed) if retriever.index.encoder else None,
            "load_average_1min": round(os.getloadavg()[0], 2)}


def evaluate(retriever: Retriever, questions: list[dict], settings: DocsSettings) -> dict:
    rows, r1, r3, answered, declined_ok, false_decline, no_source = [], 0, 0, 0, 0, 0, 0
    answerable = [q for q in questions if q.get("answerable", True)]
    unanswerable = [q for q in questions if not q.get("answerable", True)]
    for q in questions:
        ans = answer_question(q["question"], retriever, settings)
        row = {"id": q["id"], "question": q["question"], "found": ans.found, "answer": ans.text,
               "confidence": round(ans.passages[0].confidence, 3) if ans.passages else 0.0}
        if ans.found and (not ans.sources or not ans.text.startswith("From ")):
            no_source += 1
        if q.get("answerable", True):
            hits = answer_order(retriever.search(q["question"], k=settings.top_k))
            first = hits[0] if hits else None
            ok1 = first is not None and right(first.stored, q)
            ok3 = any(right(h.stored, q) for h in hits[:3])
            r1 += ok1
            r3 += ok3
            answered += ans.found and ok1
            false_decline += not ans.found
            row.update({"expected": [q["document"], q["section"]], "at1": ok1, "at3": ok3,
                        "got": [first.stored.chunk.title, " > ".join(first.stored.chunk.path)] if first else None})
        else:
            declined_ok += not ans.found
        rows.append(row)
    n, u = len(answerable), len(unanswerable)
    return {"answerable": n, "unanswerable": u,
            "recall_at_1": round(r1 / n, 4), "recall_at_3": round(r3 / n, 4),
            "answered_right": round(answered / n, 4), "answerable_declined": round(false_decline / n, 4),
            "unanswerable_declined": round(declined_ok / u, 4) if u else None,
            "answers_without_source": no_source, "threshold": settings.threshold, "rows": rows}


def build_corpus(cache: Path, files: list[str], encoder) -> tuple[DocsIndex, dict]:
    """The corpus index in ``cache`` (embedded); times of a fresh BM25-only build and of the embedding."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        with DocsIndex(Path(tmp) / "bm25.db") as ix:
            rep = ix.add(files)
            bm25_s = time.perf_counter() - t0
            chunks = ix.count()
    index = DocsIndex(cache, encoder)
    t0 = time.perf_counter()
    rep2 = index.add(files)
    return index, {"files": len(files), "failed": rep.failed, "chunks": chunks, "bm25_build_s": round(bm25_s, 2),
                   "embedded_build_s": round(time.perf_counter() - t0, 2), "embedded_now": len(rep2.added + rep2.updated)}


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ev = result["eval"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    names = ["recall@1", "recall@3", "unanswerable\ndeclined", "answerable\ndeclined"]
    vals = [ev["recall_at_1"], ev["recall_at_3"], ev["unanswerable_declined"], ev["answerable_declined"]]
    a.bar(names, [v * 100 for v in vals], color=["#4c72b0", "#4c72b0", "#55a868", "#c44e52"])
    for x, v in zip(names, vals, strict=True):
        a.text(x, v * 100 + 1, f"{v * 100:.1f} %", ha="center")
    a.axhline(80, ls=":", c="grey")
    a.axhline(95, ls=":", c="grey")
    a.set_ylim(0, 105)
    a.set_title(f"{ev['answerable']} + {ev['unanswerable']} questions ({result['retrieval']})")
    lat = [x for x in (result.get("latency_1k"), result.get("latency_10k")) if x]
    labels = [f"{x['chunks']} chunks" for x in lat]
    xs = np.arange(len(lat))
    bars = [("index part p50", lambda x: x["search"]["p50_ms"]), ("index part p95", lambda x: x["search"]["p95_ms"]),
            ("search() as a turn calls it p50", lambda x: x["p50_ms"]),
            ("search() as a turn calls it p95", lambda x: x["p95_ms"])]
    for j, (label, get) in enumerate(bars):
        b.bar(xs + (j - 1.5) * 0.2, [get(x) for x in lat], 0.2, label=label)
    b.axhline(50, ls=":", c="grey")
    b.set_xticks(xs, labels)
    b.set_ylabel("ms per question")
    b.legend(fontsize=8)
    b.set_title(f"retrieval latency (load average {lat[-1]['load_average_1min']} on 2 cores)" if lat else "")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def measure_padded(args, p1k: Path, pages: list[str], texts: list[str], settings: DocsSettings, encoder,
                   result: dict, tmp: Path) -> None:
    """Latency at ~1,000 chunks (the corpus padded with embedded man pages) and ~10,000 (BM25 padding,
    random vectors unless ``--embed-all``)."""
    with DocsIndex(p1k, encoder) as ix:
        used = pad_to(ix, pages, 1000)
        result["latency_1k"] = latency(Retriever(ix), texts, settings.top_k)
    if not args.skip_10k:
        p10k = tmp / "10k.db"
        with DocsIndex(p1k) as src:
            copy_index(src, p10k)
        with DocsIndex(p10k, encoder if args.embed_all else None) as ix:
            t0 = time.perf_counter()
            pad_to(ix, pages[used:], 10000, step=100)
            result["build"]["pad_to_10k_bm25_s"] = round(time.perf_counter() - t0, 2)
            random_vectors = fill_random_vectors(ix, 384) if encoder is not None and not args.embed_all else 0
        with DocsIndex(p10k, encoder) as ix:
            result["latency_10k"] = latency(Retriever(ix), texts, settings.top_k)
            result["latency_10k"]["random_vectors"] = random_vectors


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=EVAL / "corpus.txt")
    ap.add_argument("--questions", type=Path, default=EVAL / "questions.jsonl")
    ap.add_argument("--cache", type=Path, default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                    / "edge" / "docs-eval.db")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--no-vectors", action="store_true", help="BM25 only")
    ap.add_argument("--skip-10k", action="store_true")
    ap.add_argument("--corpus-latency", action="store_true", help="latency on the corpus index alone (no padding)")
    ap.add_argument("--embed-all", action="store_true", help="real embeddings for the 10,000-chunk index too (slow)")
    ap.add_argument("--threshold", type=float, default=None, help="docs.threshold (default: the config default)")
    args = ap.parse_args(argv)
    settings = DocsSettings() if args.threshold is None else DocsSettings(threshold=args.threshold)
    encoder = None if args.no_vectors else load_encoder()
    cache = args.cache.with_suffix(".bm25.db") if encoder is None else args.cache
    cache.parent.mkdir(parents=True, exist_ok=True)
    files = corpus_files(args.corpus)
    questions = [json.loads(ln) for ln in args.questions.read_text().splitlines() if ln.strip()]
    index, build = build_corpus(cache, files, encoder)
    retriever = Retriever(index)
    result = {"retrieval": "BM25 + vectors (RRF)" if encoder else "BM25 only", "build": build,
              "eval": evaluate(retriever, questions, settings)}
    texts = [q["question"] for q in questions]
    pages = padding_pages(set(files))
    if args.corpus_latency:  # the corpus index alone (~1,100 chunks with one chunk per option): no padding
        result["latency_1k"] = latency(retriever, texts, settings.top_k)
        result["latency_1k"]["index"] = "the corpus alone"
    p1k = cache.with_name(cache.stem + "-1k.db")  # kept too: its padding is embedded once
    if not args.corpus_latency and not p1k.exists():
        copy_index(index, p1k)
    if not args.corpus_latency:
        with tempfile.TemporaryDirectory() as tmp:
            measure_padded(args, p1k, pages, texts, settings, encoder, result, Path(tmp))
    ev = result["eval"]
    print(f"{result['retrieval']}: recall@1 {ev['recall_at_1']:.1%}, recall@3 {ev['recall_at_3']:.1%}, "
          f"unanswerable declined {ev['unanswerable_declined']:.1%}, answerable declined {ev['answerable_declined']:.1%}, "
          f"answers without source {ev['answers_without_source']}")
    for key in ("latency_1k", "latency_10k"):
        if key in result:
            x = result[key]
            print(f"{key}: {x['chunks']} chunks: total p50 {x['p50_ms']} ms p95 {x['p95_ms']} ms; search p50 "
                  f"{x['search']['p50_ms']} ms p95 {x['search']['p95_ms']} ms; embed {x['embed']}; "
                  f"load {x['load_average_1min']}")
    print(f"build: {build}")
    args.out.mkdir(parents=True, exist_ok=True)
    name = "docs_eval" if encoder else "docs_eval_bm25"
    (args.out / f"{name}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    plot(result, args.out / f"{name}.png")
    index.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
