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

Before and after in one run: the month-long questions (``*_month``: the entries, top items, one
item's total and the use rate over "last month" or "in november") are also asked through the
records module as it was before the running sums (``edge/stock/history.py`` at commit
:data:`BEFORE`, read with ``git show``: every record of the month read and probed for an undo) on
the same store, alternating, and the ratio of the p95s is reported (``before_p95_ms``,
``speedup_p95``). The machine is shared: the ratio is the figure to read, not the milliseconds.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from records_site import NOW, TZ, Truth  # noqa: E402

from edge.stock import questions  # noqa: E402
from edge.stock.periods import Calendar, utc_iso  # noqa: E402
from edge.stock.questions import Question, answer  # noqa: E402
from edge.stock.store import Store  # noqa: E402

OUT = Path(__file__).parent / "results" / "records_query.json"
N_ITEMS = 200
BOXES = ("crib", "goods-in", "line-2")
PERIODS = ("today", "yesterday", "this week", "last week", "this month", "last month", "in november", "since monday",
           "over the last 3 days", "in march")
COMPARED = 5  # answers per kind and size checked against the full scan
#: The commit whose edge/stock/history.py answers "before" (schema 7: no running sums).
BEFORE = "c01c126"
MONTHS = ("last month", "in november")
MONTH_KINDS = ("entries_month", "top_month", "total_month", "rate_month")


def before_history():
    """``edge/stock/history.py`` as it was at :data:`BEFORE`, as a module."""
    root = Path(__file__).resolve().parents[1]
    text = subprocess.run(["git", "-C", str(root), "show", f"{BEFORE}:edge/stock/history.py"], check=True,
                          capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp(prefix="history-before-")) / "history_before.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("history_before", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


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
    p = rng.choice(MONTHS if kind.endswith("_month") else PERIODS)
    what = rng.choice(("used", "received"))
    kind = kind.removesuffix("_month")
    if kind == "rate":  # the rate over a said month
        return Question("rate", "used", sku, p)
    return {"total": Question("total", what, sku, p), "last": Question("last", rng.choice(("used", "received", "counted")), sku),
            "entries": Question("entries", "any", None, p, limit=3), "top": Question("top", what, None, p),
            "who": Question("who", "any", sku), "change": Question("change", "any", sku, p),
            "rate": Question("rate", "used", sku)}[kind]


def _timed(store, q: Question, history_module) -> tuple[float, object]:
    """ms of :func:`answer` with ``history_module`` as the records module (before or after)."""
    kept = questions.history
    questions.history = history_module
    try:
        t0 = time.perf_counter()
        ans = answer(store, q)
        return (time.perf_counter() - t0) * 1000, ans
    finally:
        questions.history = kept


def _p95(ms: list[float]) -> float:
    ms = sorted(ms)
    return round(ms[int(0.95 * (len(ms) - 1))], 2)


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
    out = {"now": NOW.isoformat(), "samples": samples, "before": f"edge/stock/history.py at {BEFORE}", "sizes": {}}
    old = before_history()
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
            for kind in ("total", "last", "entries", "top", "who", "change", "rate", *MONTH_KINDS):
                ms, before_ms, scan_ms, same, checked, same_before = [], [], [], 0, 0, 0
                for k in range(samples):
                    q = _question(kind, rng)
                    after, ans = _timed(store, q, questions.history)
                    ms.append(after)
                    if kind in MONTH_KINDS:  # the same question the way it was answered before
                        took, was = _timed(store, q, old)
                        before_ms.append(took)
                        same_before += was.facts == ans.facts
                    if k < COMPARED:
                        t0 = time.perf_counter()
                        want = _truth(truth, q, ans)
                        scan_ms.append((time.perf_counter() - t0) * 1000)
                        checked += 1
                        same += _product(q, ans) == want
                ms.sort()
                kinds[kind] = {"p50_ms": round(statistics.median(ms), 2), "p95_ms": _p95(ms),
                               "max_ms": round(ms[-1], 2), "full_scan_p50_ms": round(statistics.median(scan_ms), 1),
                               "same_as_full_scan": f"{same}/{checked}"}
                if before_ms:
                    kinds[kind].update(before_p50_ms=round(statistics.median(before_ms), 2), before_p95_ms=_p95(before_ms),
                                       speedup_p95=round(_p95(before_ms) / max(_p95(ms), 1e-3), 1),
                                       same_as_before=f"{same_before}/{samples}")
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
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.5), gridspec_kw={"width_ratios": [3, 2]})
    kinds = [k for k in next(iter(out["sizes"].values()))["kinds"] if k not in MONTH_KINDS]
    width = 0.8 / len(out["sizes"])
    for j, (n, s) in enumerate(out["sizes"].items()):
        ax.bar([i + j * width for i in range(len(kinds))], [s["kinds"][k]["p95_ms"] for k in kinds], width, label=f"{int(n):,} records")
    ax.axhline(50, color="red", linestyle="--", linewidth=1, label="50 ms target")
    ax.set_xticks([i + width for i in range(len(kinds))], kinds)
    ax.set_ylabel("p95 ms per question")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title("Records questions: p95 answer time by history size")
    n, s = list(out["sizes"].items())[-1]
    month = [k for k in MONTH_KINDS if k in s["kinds"]]
    xs = range(len(month))
    bx.bar([x - 0.2 for x in xs], [s["kinds"][k]["before_p95_ms"] for k in month], 0.4, label="before (schema 7)")
    bx.bar([x + 0.2 for x in xs], [s["kinds"][k]["p95_ms"] for k in month], 0.4, label="after (running sums)")
    for x, k in zip(xs, month, strict=True):
        bx.annotate(f"{s['kinds'][k]['speedup_p95']}x", (x, s["kinds"][k]["before_p95_ms"]), ha="center", va="bottom")
    bx.axhline(50, color="red", linestyle="--", linewidth=1)
    bx.set_xticks(list(xs), [k.replace("_month", "\n(a month)") for k in month])
    bx.set_ylabel("p95 ms")
    bx.legend()
    bx.set_title(f"Month-long questions at {int(n):,} records, one run")
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
