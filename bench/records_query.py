"""How fast the records questions are answered on big histories, and whether the answer is the one a
full scan gives.

    python bench/records_query.py [--sizes 10000 100000 1000000] [--samples 40]

For each size a store is generated in a temp dir (200 items, two years of records from three boxes
ending Friday 4 December 2026 15:00 Berlin: logs in and out, transfers, counts, undos), written with
``executemany`` straight into SQLite after the real store created the schema. Then each question kind
(:data:`edge.stock.questions.KINDS`) is asked ``--samples`` times with different items and periods
through :func:`edge.stock.questions.answer` (the product's query code), timed (p50/p95 ms), and the
first few answers compared with a plain Python pass over every row (bench/records_site.py's
:class:`Truth`; its time is reported too). Results: bench/results/records_query.json (+ .png).
"""
from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from records_site import NOW, TZ, Truth  # noqa: E402

from edge.stock.periods import Calendar, utc_iso  # noqa: E402
from edge.stock.questions import Question, answer  # noqa: E402
from edge.stock.store import Store  # noqa: E402

OUT = Path(__file__).parent / "results" / "records_query.json"
N_ITEMS = 200
BOXES = ("crib", "goods-in", "line-2")
PERIODS = ("today", "yesterday", "this week", "last week", "this month", "last month", "in november", "since monday",
           "over the last 3 days", "in march")
COMPARED = 5  # answers per kind and size checked against the full scan


def build(folder: Path, n: int, seed: int = 3) -> Path:
    """A store of ``n`` records over two years; returns its path."""
    rng = random.Random(seed)
    path = folder / f"records-{n}.db"
    csv = folder / "items.csv"
    csv.write_text("sku,item,location,quantity,unit,aliases\n" + "".join(
        f"IT-{k:03d},item {k},bin {k},{rng.randint(0, 500)},{'box' if k % 3 == 0 else 'pcs'},\n" for k in range(N_ITEMS)))
    Store(path).import_csv(csv)
    conn = sqlite3.connect(path)
    first = NOW - timedelta(days=730)
    span = (NOW - first).total_seconds()
    times = sorted(rng.random() * span for _ in range(n))
    seqs = dict.fromkeys(BOXES, 0)
    rows, undoable = [], {b: [] for b in BOXES}
    base = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM records").fetchone()[0])
    for k, t in enumerate(times):
        rid = base + k + 1
        box = rng.choice(BOXES)
        seqs[box] += 1
        at = utc_iso(first + timedelta(seconds=t))
        roll = rng.random()
        undoes, kind, counted = None, "log", None
        sku = f"IT-{rng.randrange(N_ITEMS):03d}"
        if roll < 0.08 and undoable[box]:
            undoes, sku, d = undoable[box].pop()
            kind, delta = "undo", -d
        elif roll < 0.70:
            delta = -rng.randint(1, 6)
        elif roll < 0.84:
            delta = rng.randint(5, 40)
        elif roll < 0.94:
            kind, delta = "transfer", rng.choice((-1, 1)) * rng.randint(1, 5)
        else:
            kind, delta, counted = "count", rng.randint(-4, 4), rng.randint(0, 300)
        if kind in ("log", "transfer", "count"):
            undoable[box].append((rid, sku, delta))
            undoable[box] = undoable[box][-5:]
        rows.append((rid, at, sku, delta, "bench", f"b{k}", undoes, box, f"g{k:09d}", seqs[box], "bin 1", kind,
                     counted))
    conn.executemany("INSERT INTO records (id, time, sku, delta, utterance, turn_id, undoes, box, gid, seq, location, "
                     "kind, counted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.execute("ANALYZE")
    conn.close()
    return path


def _question(kind: str, rng: random.Random) -> Question:
    sku = f"IT-{rng.randrange(N_ITEMS):03d}"
    p = rng.choice(PERIODS)
    what = rng.choice(("used", "received"))
    return {"total": Question("total", what, sku, p), "last": Question("last", rng.choice(("used", "received", "counted")), sku),
            "entries": Question("entries", "any", None, p, limit=3), "top": Question("top", what, None, p),
            "who": Question("who", "any", sku), "change": Question("change", "any", sku, p),
            "rate": Question("rate", "used", sku)}[kind]


def _truth(truth: Truth, q: Question, ans) -> dict:
    if q.kind == "total":
        return truth.total(q.sku, q.what, ans.period.start, ans.period.end)
    if q.kind in ("last", "who"):
        return truth.last(q.sku, q.what if q.kind == "last" else "any")
    if q.kind == "entries":
        return truth.entries(ans.period.start, ans.period.end)
    if q.kind == "top":
        return truth.top(q.what, ans.period.start, ans.period.end)
    if q.kind == "change":
        return truth.change(q.sku, ans.period.start, ans.period.end)
    return truth.total(q.sku, "used", ans.period.start, ans.period.end)


def _product(q: Question, ans) -> dict:
    f = ans.facts
    if q.kind == "total":
        return {q.what: f[q.what]}
    if q.kind in ("last", "who"):
        e = f["event"]
        return {"event": None} if e is None else {"time": e["time"], "quantity": e["quantity"], "box": e["box"]}
    if q.kind == "entries":
        return {"total": f["total"]}
    if q.kind == "top":
        return {"top_sku": None} if not f["top"] else {"top_sku": f["top"][0][0], "top_quantity": f["top"][0][1]}
    if q.kind == "change":
        return {"change": f["change"]}
    return {"used": f["used"]}


def run(sizes: list[int], samples: int) -> dict:
    out = {"now": NOW.isoformat(), "samples": samples, "sizes": {}}
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            t0 = time.perf_counter()
            path = build(Path(d), n)
            built_s = time.perf_counter() - t0
            store = Store(path, calendar=Calendar(TZ, 0, lambda: NOW))
            t0 = time.perf_counter()
            truth = Truth(path)
            load_s = time.perf_counter() - t0
            rng = random.Random(n)
            kinds = {}
            for kind in ("total", "last", "entries", "top", "who", "change", "rate"):
                ms, scan_ms, same, checked = [], [], 0, 0
                for k in range(samples):
                    q = _question(kind, rng)
                    t0 = time.perf_counter()
                    ans = answer(store, q)
                    ms.append((time.perf_counter() - t0) * 1000)
                    if k < COMPARED:
                        t0 = time.perf_counter()
                        want = _truth(truth, q, ans)
                        scan_ms.append((time.perf_counter() - t0) * 1000)
                        checked += 1
                        same += _product(q, ans) == want
                ms.sort()
                kinds[kind] = {"p50_ms": round(statistics.median(ms), 2), "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2),
                               "max_ms": round(ms[-1], 2), "full_scan_p50_ms": round(statistics.median(scan_ms), 1),
                               "same_as_full_scan": f"{same}/{checked}"}
                print(n, kind, kinds[kind], flush=True)
            store.close()
            out["sizes"][str(n)] = {"records": n, "build_s": round(built_s, 1), "scan_load_s": round(load_s, 1),
                                    "kinds": kinds, "file_mib": round(path.stat().st_size / 2**20, 1)}
            path.unlink()
    return out


def chart(out: dict) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(8, 4))
    kinds = list(next(iter(out["sizes"].values()))["kinds"])
    width = 0.8 / len(out["sizes"])
    for j, (n, s) in enumerate(out["sizes"].items()):
        ax.bar([i + j * width for i in range(len(kinds))], [s["kinds"][k]["p95_ms"] for k in kinds], width, label=f"{int(n):,} records")
    ax.axhline(50, color="red", linestyle="--", linewidth=1, label="50 ms target")
    ax.set_xticks([i + width for i in range(len(kinds))], kinds)
    ax.set_ylabel("p95 ms per question")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title("Records questions: p95 answer time by history size")
    fig.tight_layout()
    fig.savefig(OUT.with_suffix(".png"), dpi=100)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--samples", type=int, default=40)
    args = ap.parse_args()
    result = run(args.sizes, args.samples)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1), encoding="utf-8")
    chart(result)
    print(f"→ {OUT}")
