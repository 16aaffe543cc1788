"""What the running sums (edge.stock.summary's triggers, schema 8) cost a spoken log: the time of
``Store.log`` (one committed transaction per record, as the voice writes) with the triggers and on
a copy of the same store without them, in alternating blocks on the same machine, and of an undo.

    python bench/records_write.py [--records 3000] [--block 100]

Both stores start from the same inventory of 200 items. The machine is shared: read the ratio.
Result: bench/results/records_write.json.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from edge.stock.store import Store  # noqa: E402

OUT = Path(__file__).parent / "results" / "records_write.json"
N_ITEMS = 200


def stores(folder: Path) -> tuple[Store, Store]:
    csv = folder / "items.csv"
    csv.write_text("sku,item,location,quantity,unit,aliases\n" + "".join(
        f"IT-{k:03d},item {k},bin {k},100000,pcs,\n" for k in range(N_ITEMS)))
    with_sums = Store(folder / "with.db")
    with_sums.import_csv(csv)
    without = Store(folder / "without.db")
    without.import_csv(csv)
    without.close()
    conn = sqlite3.connect(folder / "without.db")
    for t in ("records_summary_add", "records_summary_undo"):
        conn.execute(f"DROP TRIGGER {t}")
    conn.commit()
    conn.close()
    return with_sums, Store(folder / "without.db")


def run(records: int, block: int) -> dict:
    rng = random.Random(1)
    plan = [(f"IT-{rng.randrange(N_ITEMS):03d}", rng.randint(1, 6)) for _ in range(records)]
    ms: dict[str, list[float]] = {"with_sums": [], "without": [], "undo_with_sums": [], "undo_without": []}
    with tempfile.TemporaryDirectory() as d:
        a, b = stores(Path(d))
        for start in range(0, records, block):
            for name, store in (("with_sums", a), ("without", b)) if (start // block) % 2 == 0 else \
                    (("without", b), ("with_sums", a)):
                for k in range(start, start + block):
                    sku, n = plan[k]  # the same records into both stores
                    t0 = time.perf_counter()
                    store.log(sku, -n, "used", f"t{k}")
                    ms[name].append((time.perf_counter() - t0) * 1000)
                    if k % 10 == 0:
                        t0 = time.perf_counter()
                        store.undo("undo that", f"u{k}")
                        ms[f"undo_{name}"].append((time.perf_counter() - t0) * 1000)
        same = a.items() == b.items()
        a.close()
        b.close()
    out = {"records": records, "block": block, "same_stock": same}
    for name, v in ms.items():
        v.sort()
        out[name] = {"n": len(v), "p50_ms": round(statistics.median(v), 3), "p95_ms": round(v[int(0.95 * (len(v) - 1))], 3)}
    out["ratio_p50"] = round(out["with_sums"]["p50_ms"] / out["without"]["p50_ms"], 2)
    out["ratio_undo_p50"] = round(out["undo_with_sums"]["p50_ms"] / out["undo_without"]["p50_ms"], 2)
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=3000)
    ap.add_argument("--block", type=int, default=100)
    args = ap.parse_args()
    result = run(args.records, args.block)
    OUT.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(json.dumps(result, indent=1))
