"""Site-scale store benchmark: importing large inventories and acting on them per turn.

    .venv/bin/python bench/import_scale.py [--sizes 2000,5000,10000,20000] [--turns 200] [--out bench/results]

For each size N, an inventory CSV of N rows is generated (sized names such as ``hex bolt M12 x 80
mm``, one SKU in ten stored in a second place on its own row, reorder levels, two aliases a row)
and imported into a new SQLite store (the first import: items, places, no records), then imported
again with 5 % of the quantities changed (the stock-count path: one record per changed place).
Then ``--turns`` dialog turns (:func:`edge.stages.dialog.act`, Intents built as the understanding
would: half queries, half logs, every tenth a place-contents question) are timed from Intent to
reply text, the store write included (WAL, synchronous=FULL: an fsync per log).

Writes ``import_scale.json`` and ``import_scale.png`` into ``--out``. Times are wall-clock seconds
or milliseconds on this machine (2 cores shared with other jobs: an upper bound).
"""
from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from edge.stages import dialog  # noqa: E402
from edge.stages.nlu.types import Intent  # noqa: E402
from edge.stock.store import Store  # noqa: E402

FAMILIES = ("hex bolt", "socket screw", "washer", "nut", "drill bit", "rivet", "cable tie", "hose clamp")


def inventory_csv(n: int, changed: float = 0.0, seed: int = 7) -> str:
    """``n`` rows; with ``changed`` > 0 that fraction of quantities differs (a stock count)."""
    rnd = random.Random(seed)
    lines = ["sku,item,location,quantity,unit,aliases,reorder_level"]
    rows = 0
    k = 0
    while rows < n:
        family = FAMILIES[k % len(FAMILIES)]
        name = f"{family} M{k % 24 + 3} x {k % 190 + 10} mm type {k}"
        places = [f"bin {k % 997}"] + ([f"shelf {k % 53}"] if k % 10 == 0 else [])
        for p in places[:n - rows]:
            q = (k * 7) % 500
            if changed and rnd.random() < changed:
                q += 1
            lines.append(f"SKU-{k:06d},{name},{p},{q},pcs,{family}s {k};part {k},{k % 40}")
            rows += 1
        k += 1
    return "\n".join(lines) + "\n"


def run_size(n: int, turns: int, root: Path) -> dict:
    first, again = root / f"inv-{n}.csv", root / f"inv-{n}-count.csv"
    first.write_text(inventory_csv(n), encoding="utf-8")
    again.write_text(inventory_csv(n, changed=0.05), encoding="utf-8")
    with Store(root / f"edge-{n}.db") as s:
        t0 = time.perf_counter()
        s.import_csv(first)
        import_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        s.import_csv(again)
        reimport_s = time.perf_counter() - t0
        counts = len(s.records())
        skus = [f"SKU-{k:06d}" for k in range(0, n * 9 // 10, max(1, n // 997))]
        rnd = random.Random(3)
        times = []
        for t in range(turns):
            sku = rnd.choice(skus)
            if t % 10 == 9:
                intent = Intent("place_contents", location=f"bin {t % 997}")
            elif t % 2:
                intent = Intent("query_stock", sku=sku)
            else:
                item = s.get(sku)
                intent = Intent("log_record", sku=sku, quantity=1, direction="in", location=item.location)
            t0 = time.perf_counter()
            out = dialog.act(intent, s, "bench turn", f"bench-{t}")
            times.append((time.perf_counter() - t0) * 1000)
            assert out.text
    return {"rows": n, "import_s": round(import_s, 3), "reimport_s": round(reimport_s, 3),
            "count_records": counts, "turn_ms_median": round(statistics.median(times), 2),
            "turn_ms_p90": round(sorted(times)[int(len(times) * 0.9)], 2), "turns": turns}


def chart(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r["rows"] for r in results]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.plot(rows, [r["import_s"] for r in results], "o-", label="first import")
    a.plot(rows, [r["reimport_s"] for r in results], "s-", label="re-import (5 % counted)")
    a.axhline(5.0, color="grey", ls="--", label="5 s target at 20,000")
    a.set_xlabel("inventory rows")
    a.set_ylabel("s")
    a.set_title("import")
    a.legend()
    b.plot(rows, [r["turn_ms_median"] for r in results], "o-", label="median")
    b.plot(rows, [r["turn_ms_p90"] for r in results], "s-", label="p90")
    b.set_xlabel("inventory rows")
    b.set_ylabel("ms")
    b.set_title("dialog turn, Intent → reply (store write included)")
    b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="2000,5000,10000,20000")
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="edge-import-scale-") as d:
        results = [run_size(int(n), args.turns, Path(d)) for n in args.sizes.split(",")]
    out = {"machine": f"{platform.machine()}, {platform.processor() or platform.node()}",
           "python": platform.python_version(), "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "sizes": results}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "import_scale.json").write_text(json.dumps(out, indent=2) + "\n")
    chart(results, args.out / "import_scale.png")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
