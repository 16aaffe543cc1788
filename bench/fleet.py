"""Fleet benchmark: several boxes sharing one stock through a real PostgreSQL (edge.site).

    .venv/bin/python bench/fleet.py [--boxes 3] [--records 1000] [--offline 10000] [--rate 200]
                                    [--out bench/results]

A PostgreSQL 15 is started in a temporary folder on its own loopback port (tests/pgserver.py; as root
it runs as the ``postgres`` user). Every box is a store file plus its own ``edge site sync`` process;
this process writes the records into the stores as the voice service would.

1. **Visibility**: once every box's sync has connected (its store says ``online``; the time its
   process took to start is ``sync_start_s``), ``--records`` records per box, round-robin over the
   boxes at ``--rate`` records/s in all; a watcher thread per box polls its store every 5 ms.
   Latency = time from the commit at the writing box to the first poll that sees the record at
   another box (ms, p50/p90/p99/max). Records written before a box's sync process has started
   are not a visibility figure: they wait for the process (1.4-2 s here under load), which is
   what made the first p99 of 1.8 s.
2. **Catch-up**: one box's sync stopped, ``--offline`` records logged there, its sync started again:
   time until the site holds them all (push, records/s) and until every other box holds them
   (pull, records/s; catch-up time in s), both counted from the process start (``first_on_site_s``:
   until the first of them is on the site, i.e. start-up, connection and the first batch).
3. **Invariants**: records_lost (written but missing on the site or on any box) and
   records_duplicated (a gid more than once anywhere) must both be 0; every box must report the
   same stock.

Writes ``fleet.json`` and ``fleet.png`` into ``--out`` (with the machine's 1-minute load average
before and after the run). Times are monotonic-clock differences in one
process; the boxes share this machine's 2 cores with the database, so they are an upper bound.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import psycopg  # noqa: E402
import yaml  # noqa: E402

from edge.site.server import init_schema  # noqa: E402
from edge.stock.store import Store  # noqa: E402
from tests.pgserver import PgServer  # noqa: E402

INVENTORY = REPO.parent / "shared" / "audio" / "sessions" / "inventory.csv"
SKUS = ["FUS-5A", "SPN-10", "BLT-M8-30", "TIE-CBL-200"]
HANG_S = 300


class BenchBox:
    """A store file, its config and its ``edge site sync`` process."""

    def __init__(self, root: Path, name: str, dsn: str) -> None:
        self.name, self.db = name, root / name / "edge.db"
        self.db.parent.mkdir(parents=True)
        self.config = root / name / "config.yaml"
        self.config.write_text(yaml.safe_dump({"store": {"path": str(self.db)}, "site": {
            "box": name, "dsn": dsn, "poll_ms": 20, "pull_every_s": 3600, "retry_max_s": 1, "batch": 500}}))
        self.store = Store(self.db, box=name)
        self.store.import_csv(INVENTORY)
        self.proc: subprocess.Popen | None = None
        self.turn = 0

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "edge.cli", "site", "sync", "--config", str(self.config)],
                                     cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)
            self.proc = None

    def log(self) -> tuple[int, float]:
        """One record; (its seq, the monotonic time it was committed)."""
        t = self.turn
        self.turn += 1
        self.store.log(SKUS[t % len(SKUS)], (-1) ** t * (t % 5 + 1), "bench turn", f"{self.name}-{t}")
        return t + 1, time.monotonic()


def watch(box: BenchBox, seen: dict, stop: threading.Event) -> None:
    """Record, per (writing box, seq), the first monotonic time ``box``'s store holds it."""
    reader = Store(box.db)
    try:
        last: dict[str, int] = {}
        while not stop.is_set():
            now = time.monotonic()
            for other, top in reader.cursors().items():
                for seq in range(last.get(other, 0) + 1, top + 1):
                    seen.setdefault((other, seq), now)
                last[other] = max(top, last.get(other, 0))
            stop.wait(0.005)
    finally:
        reader.close()


def wait_until(pred, timeout_s: float = HANG_S, step_s: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout_s
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(step_s)
    return True


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def on_site(dsn: str, box: str | None = None) -> int:
    with psycopg.connect(dsn) as c:
        if box is None:
            return c.execute("SELECT count(*) FROM edge_movements").fetchone()[0]
        return c.execute("SELECT count(*) FROM edge_movements WHERE box = %s", (box,)).fetchone()[0]


def connected(boxes: list[BenchBox]) -> float:
    """Wait until every box's sync process has connected (its store says ``online``); seconds."""
    t0 = time.monotonic()
    if not wait_until(lambda: all(b.store.meta("site_state") == "online" for b in boxes), step_s=0.02):
        raise SystemExit("the sync processes did not connect within the bound")
    return time.monotonic() - t0


def visibility(boxes: list[BenchBox], records: int, rate: float) -> tuple[list[float], float]:
    seen = {b.name: {} for b in boxes}
    stop = threading.Event()
    watchers = [threading.Thread(target=watch, args=(b, seen[b.name], stop), daemon=True) for b in boxes]
    for w in watchers:
        w.start()
    written: dict[tuple[str, int], float] = {}
    t0 = time.monotonic()
    for i in range(records * len(boxes)):
        b = boxes[i % len(boxes)]
        seq, at = b.log()
        written[(b.name, seq)] = at
        pause = t0 + (i + 1) / rate - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    wall = time.monotonic() - t0
    ok = wait_until(lambda: all(len(seen[b.name]) >= len(written) for b in boxes))
    stop.set()
    for w in watchers:
        w.join(timeout=10)
    if not ok:
        raise SystemExit("visibility: the boxes did not converge within the bound")
    lat = [(seen[b.name][k] - at) * 1000 for b in boxes for k, at in written.items() if k[0] != b.name]
    return lat, wall


def catch_up(dsn: str, boxes: list[BenchBox], offline: int) -> dict:
    cut = boxes[0]
    cut.stop()
    before = on_site(dsn, cut.name)
    for _ in range(offline):
        cut.log()
    target = before + offline
    t0 = time.monotonic()
    cut.start()
    assert wait_until(lambda: on_site(dsn, cut.name) > before, step_s=0.02), "push did not start"
    first = time.monotonic() - t0
    assert wait_until(lambda: on_site(dsn, cut.name) >= target, step_s=0.02), "push did not finish"
    pushed = time.monotonic() - t0
    assert wait_until(lambda: all(b.store.cursors().get(cut.name, 0) >= target for b in boxes[1:]),
                      step_s=0.02), "pull did not finish"
    done = time.monotonic() - t0
    return {"offline_records": offline, "first_on_site_s": round(first, 3), "push_s": round(pushed, 3), "catch_up_s": round(done, 3),
            "push_records_per_s": round(offline / pushed, 1), "pull_records_per_s": round(offline / done, 1)}


def invariants(dsn: str, boxes: list[BenchBox]) -> dict:
    with psycopg.connect(dsn) as c:
        site = [r[0] for r in c.execute("SELECT gid FROM edge_movements")]
    dup = len(site) - len(set(site))
    written: set[str] = set()
    stocks = []
    lost = 0
    for b in boxes:
        held = [m.gid for m in b.store.movements()]
        dup += len(held) - len(set(held))
        written |= {m.gid for m in b.store.movements(b.name)}
        lost += len(set(site) - set(held))
        stocks.append({i.sku: i.quantity for i in b.store.items()})
    lost += len(written - set(site))
    return {"records_lost": lost, "records_duplicated": dup, "site_records": len(site),
            "same_stock_on_every_box": all(s == stocks[0] for s in stocks)}


def chart(result: dict, lat: list[float], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    xs = sorted(lat)
    ax1.plot(xs, [i / len(xs) for i in range(1, len(xs) + 1)])
    ax1.set_xlabel("visibility latency between boxes (ms)")
    ax1.set_ylabel("fraction of records")
    v = result["visibility_ms"]
    ax1.set_title(f"{result['boxes']} boxes x {result['records_per_box']} records: p50 {v['p50']} ms, p99 {v['p99']} ms")
    ax1.grid(alpha=0.3)
    c = result["catch_up"]
    ax2.bar(["push", "pull (catch-up)"], [c["push_records_per_s"], c["pull_records_per_s"]])
    ax2.set_ylabel("records/s")
    ax2.set_title(f"{c['offline_records']} offline records: caught up in {c['catch_up_s']} s")
    fig.suptitle(f"edge site sync on {result['machine']} (PostgreSQL {result['postgresql']}); "
                 f"lost {result['invariants']['records_lost']}, doubled {result['invariants']['records_duplicated']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boxes", type=int, default=3)
    ap.add_argument("--records", type=int, default=1000, help="records per box for the visibility run")
    ap.add_argument("--offline", type=int, default=10000, help="records logged at one box while its sync is stopped")
    ap.add_argument("--rate", type=float, default=200.0, help="records/s written in all during the visibility run")
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    args = ap.parse_args(argv)
    load = [os.getloadavg()[0]]  # the 1-minute load average before and after: the machine is shared
    pg = PgServer()
    pg.start()
    root = Path(tempfile.mkdtemp(prefix="edge-fleet-"))
    boxes: list[BenchBox] = []
    try:
        with psycopg.connect(pg.dsn, autocommit=True) as c:
            init_schema(c)
            version = c.execute("SHOW server_version").fetchone()[0]
        boxes = [BenchBox(root, f"box{i + 1}", pg.dsn) for i in range(args.boxes)]
        for b in boxes:
            b.start()
        started = connected(boxes)
        lat, wall = visibility(boxes, args.records, args.rate)
        result = {
            "boxes": args.boxes, "records_per_box": args.records, "write_rate_per_s": args.rate,
            "visibility_ms": {"p50": round(statistics.median(lat), 1), "p90": round(pct(lat, 90), 1),
                              "p99": round(pct(lat, 99), 1), "max": round(max(lat), 1), "samples": len(lat)},
            "visibility_run_s": round(wall, 2), "sync_start_s": round(started, 2),
        }
        result["catch_up"] = catch_up(pg.dsn, boxes, args.offline)
        result["invariants"] = invariants(pg.dsn, boxes)
        result["machine"] = f"{platform.machine()} {platform.processor() or ''}".strip()
        result["postgresql"] = version
        result["python"] = platform.python_version()
        result["load_average_1min"] = {"before": round(load[0], 2), "after": round(os.getloadavg()[0], 2)}
    finally:
        for b in boxes:
            b.stop()
            b.store.close()
        pg.destroy()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "fleet.json").write_text(json.dumps(result, indent=2) + "\n")
    chart(result, lat, out / "fleet.png")
    print(json.dumps(result, indent=2))
    ok = result["invariants"]["records_lost"] == 0 and result["invariants"]["records_duplicated"] == 0
    return 0 if ok and result["invariants"]["same_stock_on_every_box"] else 1


if __name__ == "__main__":
    sys.exit(main())
